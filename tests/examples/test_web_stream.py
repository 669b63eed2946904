"""examples/web_stream: the Starlette app streams a crew's events as server-sent events.

Driven through httpx's ASGI transport (the app runs in this process, no port); the
browser side (index.html) was checked once by hand in headless Chromium (see the report).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import httpx
import pytest

APP = Path(__file__).resolve().parents[2] / "examples" / "web_stream" / "app.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("web_stream_app", APP)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def parse_sse(body: str) -> list[tuple[str, dict]]:
    events = []
    for block in body.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((fields["event"], json.loads(fields["data"])))
    return events


async def test_the_page_and_the_event_stream(example):
    app = example.create_app(example.build_crew("test"))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://crew.test") as client:
        page = await client.get("/")
        assert page.status_code == 200 and "new EventSource" in page.text
        async with client.stream("GET", "/events", params={"topic": "otters"}) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            body = "".join([chunk async for chunk in response.aiter_text()])
    events = parse_sse(body)
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "run.started" and kinds[-1] == "output"
    assert {"task.started", "text.delta", "task.finished"} <= set(kinds)
    deltas = [data for kind, data in events if kind == "text.delta"]
    assert {d["task"] for d in deltas} == {"facts", "angle", "paragraph"}
    paragraph = "".join(d["text"] for d in deltas if d["task"] == "paragraph")
    output = events[-1][1]["output"]
    assert paragraph == output["raw"] and "otters" in paragraph
    assert [kind for kind, data in events if data.get("type", "").startswith("text.")] == ["text.delta"] * len(deltas)


async def test_a_failed_run_ends_with_an_error_event_the_page_shows(example):
    from crew.testing import FunctionModel

    def down(messages, tools, info):
        raise RuntimeError("the model is down")

    app = example.create_app(example.build_crew(FunctionModel(down)))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://crew.test") as client:
        async with client.stream("GET", "/events", params={"topic": "otters"}) as response:
            body = "".join([chunk async for chunk in response.aiter_text()])
        page = (await client.get("/")).text
    kind, data = parse_sse(body)[-1]
    assert kind == "run.error" and data["error"] == "CrewRunError"
    assert "the model is down" in data["message"]
    assert 'addEventListener("run.error"' in page  # the page listens for it (and shows its message)


def test_kickoff_on_the_example_folder_says_it_is_a_script_of_crew_not_a_crewai_project():
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "crew.cli", "kickoff", str(APP.parent), "--llm", "test"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=APP.parents[2],
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "app.py" in done.stderr and "with crew itself" in done.stderr
    assert "CrewBase" not in done.stderr and "CrewAI" not in done.stderr
