"""The HTTP API (``crew serve --http`` without ``--mcp``): in this process through httpx's ASGI transport,
then once as a real server process behind a token, stopped with SIGTERM."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("starlette", reason="the serve extra is in the dev extra")

from serve_kit import CREWS, free_port, served_process

from crew.serve.http_api import HttpApi
from crew.serve.kickoffs import Kickoffs
from crew.serve.served import load_served
from crew.store import RunStore


def parse_sse(body: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in body.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((fields["event"], json.loads(fields["data"])))
    return events


@pytest.fixture
def api(tmp_path: Path) -> Any:
    store = RunStore(tmp_path / "runs.db")
    served = [load_served(CREWS / name, live_tools=True) for name in ("brief", "gate", "slow")]
    for one in served:
        one.store = store
    return HttpApi(served, Kickoffs(2))


def client(api: HttpApi) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=api.app), base_url="http://crew.test")


async def until(check: Any, timeout: float = 20) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = await check()
        if value:
            return value
        await asyncio.sleep(0.01)
    raise AssertionError("timed out")


async def test_a_kickoff_its_events_its_status_and_its_record(api: HttpApi) -> None:
    async with client(api) as http:
        crews = (await http.get("/crews")).json()["crews"]
        assert [c["name"] for c in crews] == ["brief", "gate", "slow"]
        started = await http.post("/crews/brief/kickoffs", json={"inputs": {"audience": "pilots"}})
        assert started.status_code == 202
        run_id = started.json()["run_id"]
        assert started.json()["events"] == f"/runs/{run_id}/events"
        body = (await http.get(f"/runs/{run_id}/events")).text
        status = (await http.get(f"/runs/{run_id}")).json()
        api.runs.clear()  # forgotten by the server: read from the run store
        stored = (await http.get(f"/runs/{run_id}")).json()
    kinds = [kind for kind, _ in parse_sse(body)]
    assert kinds[0] == "run.started" and kinds[-1] == "output"
    assert kinds.count("task.finished") == 2
    assert status["status"] == "done" and set(status["output"]["pydantic"]) == {"title", "summary"}
    assert stored["status"] == "done" and stored["crew"] == "brief" and stored["output"]["raw"]


async def test_bad_requests_get_a_clear_error_and_no_traceback(api: HttpApi) -> None:
    async with client(api) as http:
        unknown = await http.post("/crews/nope/kickoffs", json={})
        not_json = await http.post("/crews/brief/kickoffs", content=b"{oops")
        wrong = await http.post("/crews/brief/kickoffs", json={"inputs": {"words": "many"}})
        shape = await http.post("/crews/brief/kickoffs", json={"audience": "x"})
        huge = await http.post("/crews/brief/kickoffs", content=b"[" * (1024 * 1024 + 10))
        no_run = await http.get("/runs/0123")
    assert unknown.status_code == 404 and unknown.json()["error"] == "no crew 'nope' here (served: brief, gate, slow)"
    assert not_json.status_code == 400 and not_json.json()["error"] == "the body is not JSON"
    assert wrong.status_code == 422
    assert wrong.json()["problems"] == {
        "words": "expected an integer, got string",
        "audience": "missing (it has no default)",
    }
    assert shape.status_code == 400 and "inputs" in shape.json()["error"]
    assert huge.status_code == 413
    assert no_run.status_code == 404


async def test_an_approval_is_posted_while_the_run_waits(api: HttpApi, tmp_path: Path) -> None:
    async with client(api) as http:
        run_id = (await http.post("/crews/gate/kickoffs", json={"inputs": {"path": "/tmp/z.log"}})).json()["run_id"]

        async def waiting() -> Any:
            return (await http.get(f"/runs/{run_id}")).json()["pending_approvals"]

        (request,) = await until(waiting)
        assert request["tool"] == "remove" and request["args"] == {"path": "/tmp/z.log"}
        stray = await http.post(f"/runs/{run_id}/approvals", json={"call_id": "nope", "approve": True})
        decided = await http.post(f"/runs/{run_id}/approvals", json={"call_id": request["call_id"], "approve": True})
        body = (await http.get(f"/runs/{run_id}/events")).text
    assert stray.status_code == 404 and request["call_id"] in stray.json()["error"]
    assert decided.status_code == 200
    kinds = [kind for kind, _ in parse_sse(body)]
    assert "approval.requested" in kinds and kinds[-1] == "output"
    calls = RunStore(tmp_path / "runs.db").tool_calls(run_id)
    assert [(c.tool, c.status) for c in calls] == [("remove", "success")]


async def test_delete_cancels_a_run_and_the_store_marks_it_interrupted(api: HttpApi, tmp_path: Path) -> None:
    async with client(api) as http:
        run_id = (await http.post("/crews/slow/kickoffs", json={})).json()["run_id"]

        async def holding() -> bool:
            return any(kind == "tool.started" for kind, _ in api.runs[run_id].events)

        await until(holding)
        assert (await http.delete(f"/runs/{run_id}")).status_code == 202
        body = (await http.get(f"/runs/{run_id}/events")).text
        status = (await http.get(f"/runs/{run_id}")).json()["status"]
    assert parse_sse(body)[-1] == (
        "run.error",
        {"type": "run.error", "error": "Interrupted", "message": "the run was cancelled"},
    )
    assert status == "interrupted"
    assert RunStore(tmp_path / "runs.db").run(run_id).status == "interrupted"


def test_a_served_api_needs_its_token_and_sigterm_interrupts_its_runs(tmp_path: Path) -> None:
    port, token = free_port(), "api-token-0123456789"
    store = tmp_path / "runs.db"
    args = [str(CREWS / "slow"), "--http", f"127.0.0.1:{port}", "--token", token, "--live-tools", "--store", str(store)]
    base = f"http://127.0.0.1:{port}"
    with served_process(args, port) as process:
        assert httpx.get(f"{base}/crews").status_code == 401
        headers = {"Authorization": f"Bearer {token}"}
        run_id = httpx.post(f"{base}/crews/slow/kickoffs", json={}, headers=headers).json()["run_id"]
        with httpx.stream("GET", f"{base}/runs/{run_id}/events", headers=headers, timeout=30) as events:
            for line in events.iter_lines():
                if line == "event: tool.started":
                    break
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
        err = process.stderr.read() if process.stderr else ""
    assert "stopped 1 running kickoff(s), recorded as interrupted" in err and "Traceback" not in err
    assert token not in err
    assert RunStore(store).run(run_id).status == "interrupted"
