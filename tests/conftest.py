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
