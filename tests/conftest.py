"""Suite-wide settings: nothing reaches the network, litellm uses its bundled cost map."""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_LOG", "ERROR")
for _key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CREW_LLM"):
    os.environ.pop(_key, None)
# The console scripts of the dev extra (mcp-server-time, a real stdio MCP server) are found by
# name, as in an activated venv, also when the venv's python is run without activating it.
_bin = os.path.dirname(os.path.abspath(__import__("sys").executable))
if _bin not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = os.pathsep.join([_bin, os.environ.get("PATH", "")])

# Every `crew kickoff` a test runs records its run; crews in the repository (examples/,
# test projects) must not get a .crew/ folder, so the CLI's default store is elsewhere.
import atexit  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402

_stores = tempfile.mkdtemp(prefix="crew-test-stores-")
atexit.register(shutil.rmtree, _stores, True)
os.environ["CREW_STORE"] = os.path.join(_stores, "runs.db")

# A suite started in the background (`pytest &` from a script) inherits Ctrl-C ignored, and so
# would every child it starts: the tests that deliver Ctrl-C to a kickoff need it handled.
import signal  # noqa: E402

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)  # a handler: children get the default

import pytest  # noqa: E402


@pytest.fixture
def openai_server():
    """A running local OpenAI-compatible server (crew.testing.OpenAIServer); script it with .enqueue()."""
    from crew.testing import OpenAIServer

    with OpenAIServer() as server:
        yield server


@pytest.fixture(scope="session")
def span_exporter():
    """OpenTelemetry's in-memory exporter on the process's tracer provider (set once per process)."""
    pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter


_store_names = __import__("itertools").count()


@pytest.fixture(autouse=True)
def _a_run_store_per_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's `crew kickoff`s record in a store of its own: one test's runs (or a run it kills
    mid-write) never meet another's, in this process or in the commands it starts."""
    if os.environ.get("CREW_STORE", "").startswith(_stores):
        monkeypatch.setenv("CREW_STORE", os.path.join(_stores, f"runs-{next(_store_names)}.db"))


# -- the suite leaves the repository as it found it ------------------------------------------------

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_NOT_LEFT_BEHIND = ("__pycache__", ".git", ".pytest_cache", ".ruff_cache", ".mypy_cache")


_files_before = pytest.StashKey[set[str]]()


def _repository_files() -> set[str]:
    """Every file under the repository (its .git, virtualenvs and bytecode caches aside), relative paths."""
    found: set[str] = set()
    for folder, subfolders, files in os.walk(_REPO):
        subfolders[:] = [d for d in subfolders if d not in _NOT_LEFT_BEHIND and not d.startswith(".venv")]
        relative = os.path.relpath(folder, _REPO)
        found.update(os.path.normpath(os.path.join(relative, name)) for name in files if not name.endswith(".pyc"))
    return found


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):  # the xdist controller, or a run without workers
        session.config.stash[_files_before] = _repository_files()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run if a test wrote into the repository (a kickoff with the cwd at its root, a project run
    in place instead of in a tmp_path copy): the files it left are named."""
    before = session.config.stash.get(_files_before, None)
    if before is None:
        return
    left = sorted(_repository_files() - before)
    if left:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = "the tests left new files in the repository (write them under tmp_path):\n  " + "\n  ".join(left)
        if reporter is not None:
            reporter.write_sep("=", "files left in the repository", red=True)
            reporter.write_line(message)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
