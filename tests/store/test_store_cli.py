"""The store from the command line: secrets never written, bad files, two processes, logs, the page."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from png_kit import colour_counts
from store_kit import crew, env, start, write

from crew import RunStore
from crew.testing import OpenAIServer, Reply
from crew.testing.replies import ChatRequest

ENV_KEY = "sk-env-secret-AAAA1111"
YAML_KEY = "sk-yaml-secret-CCCC3333"
TOOL_KEY = "up-secret-BBBB2222"

LEAKY = """
    name: leaky
    llm:
      model: openai/gpt-4o-mini
      api_base: {url}
      api_key: {key}
      num_retries: 0
    tools:
      upstream: tools:upstream
    agents:
      clerk:
        role: Clerk
        goal: Ask upstream
        tools: [upstream]
    tasks:
      ask: {{description: "ask upstream about {{topic}}", expected_output: a line, agent: clerk}}
      file: {{description: "file the answer", expected_output: a line, agent: clerk}}
    inputs:
      topic: tea
    """

LEAKY_TOOLS = '''
import os

def upstream(query: str) -> str:
    """Ask the upstream service."""
    raise RuntimeError("upstream refused key " + os.environ["UPSTREAM_API_KEY"] + " for " + query)
'''


def _leaky_model(request: ChatRequest) -> Reply:
    text = request.messages[1]["content"]
    if "ask upstream" in text:
        if not any(m["role"] == "tool" for m in request.messages):
            return Reply.tools({"name": "upstream", "args": {"query": "tea"}})
        return Reply.text("upstream is down")
    return Reply.error(401, f"Incorrect API key provided: {YAML_KEY}. You can find your key at ...")


@pytest.fixture(scope="module")
def leaky(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """One recorded run that met a failing tool quoting a key and a 401 echoing the YAML key."""
    with OpenAIServer(handler=_leaky_model) as server:
        folder = write(
            tmp_path_factory.mktemp("leaky") / "leaky",
            {"crew.yaml": LEAKY.format(url=server.url, key=YAML_KEY), "tools.py": LEAKY_TOOLS},
        )
        environ = env(OPENAI_API_KEY=ENV_KEY, UPSTREAM_API_KEY=TOOL_KEY)
        kicked = crew("kickoff", "--json", "--log-json", "--log-level", "debug", cwd=folder, environ=environ)
    assert kicked.returncode == 1, kicked.stderr
    assert "401" in kicked.stderr and "***" in kicked.stderr
    return folder, kicked


def test_keys_from_the_environment_and_yaml_never_reach_any_file_or_output(leaky, tmp_path) -> None:
    folder, kicked = leaky
    environ = env(OPENAI_API_KEY=ENV_KEY, UPSTREAM_API_KEY=TOOL_KEY)
    page = tmp_path / "page.html"
    outputs = [
        kicked,
        crew("show", cwd=folder, environ=environ),
        crew("show", "--json", cwd=folder, environ=environ),
        crew("show", "-o", str(page), cwd=folder, environ=environ),
        crew("runs", "--json", cwd=folder, environ=environ),
    ]
    assert all(o.returncode == 0 for o in outputs[1:]), [o.stderr for o in outputs]
    texts = [o.stdout + o.stderr for o in outputs]
    files = [p for p in [*folder.rglob("*"), page] if p.is_file()]
    assert {p.name for p in files} >= {"runs.db", "page.html", "crew.yaml"}
    for secret in (ENV_KEY, TOOL_KEY, YAML_KEY):
        for text in texts:
            assert secret not in text
        for path in files:
            if path.name == "crew.yaml":
                continue  # the user's own file
            assert secret.encode() not in path.read_bytes(), path

    detail = json.loads(outputs[2].stdout)
    assert detail["run"]["status"] == "failed"
    assert [t["status"] for t in detail["tasks"]] == ["done", "failed"]
    (tool_call,) = detail["tool_calls"]
    assert tool_call["status"] == "error" and "upstream refused key *** for tea" in tool_call["result"]
    assert [c["status"] for c in detail["model_calls"]] == ["success", "success", "error"]
    assert "***" in detail["model_calls"][2]["error"] and "401" in detail["model_calls"][2]["error"]
    logged = [json.loads(line) for line in kicked.stderr.splitlines() if line.startswith("{")]
    assert {"run.start", "tool.call", "llm.call", "task.failed", "run.done"} <= {e["event"] for e in logged}


def test_a_corrupt_store_stops_kickoff_with_its_name_and_no_store_still_runs(tmp_path) -> None:
    folder = write(tmp_path / "c", {"crew.yaml": _SMALL})
    (folder / ".crew").mkdir()
    db = folder / ".crew" / "runs.db"
    db.write_bytes(b"garbage " * 100)
    refused = crew("kickoff", "--llm", "test", cwd=folder)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert str(Path(".crew") / "runs.db") in refused.stderr and "not a crew run store" in refused.stderr
    assert "--no-store" in refused.stderr
    ran = crew("kickoff", "--llm", "test", "--no-store", cwd=folder)
    assert ran.returncode == 0, ran.stderr
    assert db.read_bytes() == b"garbage " * 100
    shown = crew("show", cwd=folder)
    assert shown.returncode == 2 and "not a crew run store" in shown.stderr


def test_show_and_runs_without_a_store_say_where_they_looked(tmp_path) -> None:
    folder = write(tmp_path / "c", {"crew.yaml": _SMALL})
    for args in (["runs"], ["show"], ["resume"], ["replay", "abc", "--from", "t1"]):
        done = crew(*args, cwd=folder)
        assert done.returncode == 2 and "no run store at" in done.stderr and "crew kickoff" in done.stderr, args


def test_two_processes_of_the_same_crew_at_once_lose_no_row(tmp_path) -> None:
    tasks = "\n".join(
        f'  t{i}: {{description: "part {i}", expected_output: a line, agent: worker, context: []}}' for i in range(40)
    )
    yaml = (
        "process: graph\nmax_concurrency: 8\ntools:\n  nap: tools:nap\nagents:\n  worker:\n    role: Worker\n"
        f"    goal: Work\n    tools: [nap]\ntasks:\n{tasks}\n"
    )
    tools = _MEET
    folder = write(tmp_path / "two", {"crew.yaml": yaml, "tools.py": tools})
    procs = [start("kickoff", "--llm", "test", "--live-tools", "-q", cwd=folder) for _ in range(2)]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in results]
    store = RunStore(folder / ".crew" / "runs.db")
    runs = store.runs()
    assert len(runs) == 2 and {r.status for r in runs} == {"done"}
    first, second = sorted(runs, key=lambda r: r.started_at)
    assert second.started_at < (first.finished_at or 0)  # they really ran at the same time
    for run in runs:
        assert [t.status for t in store.tasks(run.id)] == ["done"] * 40
        assert Counter(c.task for c in store.model_calls(run.id)) == {f"t{i}": 2 for i in range(40)}
        assert len(store.tool_calls(run.id)) == 40


def test_show_prints_every_task_with_its_calls(tmp_path) -> None:
    folder = write(tmp_path / "c", {"crew.yaml": _SMALL})
    assert crew("kickoff", "--llm", "test", "-q", cwd=folder).returncode == 0
    listed = crew("runs", cwd=folder)
    assert listed.returncode == 0 and re.search(r"^[0-9a-f]{12}\s+done\s", listed.stdout, re.M)
    shown = crew("show", cwd=folder)
    assert shown.returncode == 0, shown.stderr
    assert re.search(r"^\[1\] t1 · done · Worker · [\d.]+s · \d+ tokens", shown.stdout, re.M)
    assert "    model test · success" in shown.stdout and "    output: Test answer for: Task: first" in shown.stdout


_MEET = '''
import os
import time
from pathlib import Path


def nap(note: str) -> str:
    """Rest a little; the first call waits until both processes are at work, so their writes overlap."""
    here = Path(__file__).parent
    (here / f"ready-{os.getpid()}").touch()
    deadline = time.monotonic() + 30
    while len(list(here.glob("ready-*"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.01)
    return "rested"
'''

_SMALL = """
    agents:
      worker: {role: Worker, goal: Work}
    tasks:
      t1: {description: first, expected_output: a line, agent: worker}
      t2: {description: second, expected_output: a line, agent: worker}
    """

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")
def test_the_timeline_page_renders_in_a_real_browser_with_no_network(leaky, tmp_path) -> None:
    folder, _ = leaky
    page = tmp_path / "run.html"
    assert crew("show", "-o", str(page), cwd=folder).returncode == 0
    html = page.read_text()
    assert not re.search(r"""(src|href)=["']?https?:""", html)  # nothing to fetch
    with tempfile.TemporaryDirectory() as profile:
        flags = [*_FLAGS, f"--user-data-dir={profile}"]
        dom = subprocess.run(
            [CHROMIUM, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=60
        ).stdout
        shot = tmp_path / "shot.png"
        subprocess.run(
            [CHROMIUM, *flags, f"--screenshot={shot}", "--window-size=1300,700", page.as_uri()],
            capture_output=True,
            timeout=60,
        )
    assert 'data-rendered="yes"' in dom  # the page's script ran
    assert "2 tasks, 3 model calls, 1 tool calls, 1 failed" in dom
    assert dom.count('class="bar done"') == 1 and dom.count('class="bar failed"') == 1
    assert "✕ failed" in dom and 'class="model error"' in dom and 'class="tool error"' in dom
    assert re.search(r"<title>model openai/gpt-4o-mini · success\n[\d.]+s · \d+ in \+ \d+ out tokens · \$0\.\d+", dom)
    colours = colour_counts(shot.read_bytes())
    assert colours.get((0xC6, 0x28, 0x28), 0) > 50  # failure red: the failed call, the mark, the border
    assert colours.get((0x4A, 0x7B, 0xD0), 0) > 10  # model-call blue
    assert colours.get((0xCF, 0xE9, 0xD6), 0) > 500  # the done task's bar


def test_each_kickoff_of_a_for_each_batch_is_a_recorded_run(tmp_path) -> None:
    folder = write(
        tmp_path / "c", {"crew.yaml": _SMALL.replace("description: first", 'description: "first about {topic}"')}
    )
    (tmp_path / "in.jsonl").write_text('{"topic": "tea"}\n{"topic": "bees"}\n')
    done = crew("kickoff", "--llm", "test", "--for-each", str(tmp_path / "in.jsonl"), "-o", "out.jsonl", cwd=folder)
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in (folder / "out.jsonl").read_text().splitlines()]
    runs = {r.id: r for r in RunStore(folder / ".crew" / "runs.db").runs()}
    assert {r["run_id"] for r in results} == set(runs)
    assert sorted(r.inputs["topic"] for r in runs.values()) == ["bees", "tea"]


def _browse(page: Path, tmp_path: Path, fragment: str = "") -> tuple[str, Counter[tuple[int, int, int]]]:
    """The DOM after the page's script ran, and the colours of a screenshot, in real headless Chromium."""
    with tempfile.TemporaryDirectory() as profile:
        flags = [*_FLAGS, f"--user-data-dir={profile}"]
        url = page.as_uri() + fragment
        dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", url], capture_output=True, text=True, timeout=60).stdout
        shot = tmp_path / "shot.png"
        subprocess.run(
            [CHROMIUM, *flags, f"--screenshot={shot}", "--window-size=1300,500", page.as_uri()],
            capture_output=True,
            timeout=60,
        )
    return dom, colour_counts(shot.read_bytes())


def _delegating_run() -> Any:
    """A run as the store hands it back: a slow start-up, a task that delegated, a task that never started."""
    from crew.store.records import RunDetail, StoredModelCall, StoredRun, StoredStartup, StoredTask

    t0 = 1_000.0
    run = StoredRun(id="a" * 32, crew="desk", crew_hash="h", status="failed", started_at=t0, finished_at=t0 + 10)
    tasks = [
        StoredTask(
            name="plan", position=0, agent="Manager", def_hash="x", status="done", started_at=t0 + 4, finished_at=t0 + 9
        ),
        StoredTask(name="ship", position=1, agent="Shipper", def_hash="y", status="skipped", finished_at=t0 + 10),
    ]

    def call(i: int, task: str, agent: str, at: float) -> StoredModelCall:
        messages = json.dumps([{"role": "user", "content": f"PROMPT {i} for {agent}"}])
        return StoredModelCall(
            id=i,
            task=task,
            agent=agent,
            model="m",
            status="success",
            started_at=at,
            latency=1.0,
            messages=messages,
            reply=f"REPLY {i} from {agent}",
        )

    calls = [
        call(1, "plan", "Manager", t0 + 4),
        call(2, "plan -> Writer", "Writer", t0 + 6),
        call(3, "plan", "Manager", t0 + 8),
    ]
    startup = [  # two MCP servers opened in the 4 s before the first task, one of them failed
        StoredStartup(id=1, kind="mcp", name="time", transport="stdio", started_at=t0, duration=2.5, tools=2),
        StoredStartup(
            id=2, kind="mcp", name="docs", transport="http", started_at=t0, duration=1.0, error="HTTP 503 from docs"
        ),
    ]
    return RunDetail(run=run, tasks=tasks, model_calls=calls, startup=startup)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")
def test_the_timeline_shows_start_up_delegation_a_never_started_task_and_opens_a_step(tmp_path) -> None:
    from crew.store.timeline import write_timeline

    page = write_timeline(_delegating_run(), tmp_path / "run.html")
    dom, colours = _browse(page, tmp_path, "#step-m2")  # what a click on the delegated call's mark does
    assert 'data-rendered="yes"' in dom
    assert re.search(r'<g class="phase" data-phase="start-up">.*?4\.00s', dom)  # the 4 s before the first task
    assert 'class="bar skipped"' not in dom and "skipped: never started" in dom  # no bar across the run
    assert "↳ delegated to Writer" in dom  # its own lane under the task, not flattened into the manager's
    assert dom.count('<a href="#step-m') == 3
    opened = re.search(r'<details class="step" id="step-m2" open="">(.*?)</details>', dom, re.S)
    assert opened is not None, "the clicked step did not open"
    assert "PROMPT 2 for Writer" in opened.group(1) and "REPLY 2 from Writer" in opened.group(1)
    assert not re.search(r'<details class="step" id="step-m1" open', dom)  # only the clicked one
    assert colours.get((0xEE, 0xF0, 0xF4), 0) > 500  # the start-up bar is drawn
    assert "4.00s · MCP: time, docs" in dom  # the row names its servers
    assert re.search(
        r'<rect class="server" data-server="time".*?<title>MCP server \'time\' \(stdio\) · ready in 2\.50s · 2 tools',
        dom,
    )
    assert re.search(r'<rect class="server error" data-server="docs".*?failed after 1\.00s: HTTP 503 from docs', dom)
    assert colours.get((0x2F, 0x8F, 0x83), 0) > 100  # the ready server's mark is drawn
