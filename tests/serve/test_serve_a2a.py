"""``crew serve --a2a``: the agent card, message/send and message/stream, tasks/get and tasks/cancel, driven by
the a2a-sdk's own client against the agent's app in this process (httpx's ASGI transport, no port)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("a2a", reason="the a2a extra is in the dev extra")

from a2a.client import ClientConfig, create_client
from a2a.helpers.proto_helpers import get_data_parts, get_text_parts, new_data_part, new_text_part
from a2a.types.a2a_pb2 import CancelTaskRequest, GetTaskRequest, Message, Role, SendMessageRequest, TaskState
from serve_kit import CREWS

from crew.serve.a2a_agent import build_a2a_app
from crew.serve.guard import guarded
from crew.serve.kickoffs import Kickoffs
from crew.serve.served import load_served
from crew.store import RunStore

URL = "http://crew.test/"
TOKEN = "a2a-token-0123456789"


def agent(store: Path, *names: str, token: str | None = TOKEN) -> Any:
    served = [load_served(CREWS / name, live_tools=True) for name in names]
    shared = RunStore(store)
    for one in served:
        one.store = shared
    return guarded(build_a2a_app(served, Kickoffs(2), URL, token=token is not None), token)


def http_for(app: Any) -> httpx.AsyncClient:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=URL, headers=headers, timeout=60)


def message(*parts: Any, skill: str | None = None) -> SendMessageRequest:
    sent = Message(role=Role.ROLE_USER, message_id=uuid.uuid4().hex, parts=list(parts))
    if skill is not None:
        sent.metadata.update({"skill": skill})
    return SendMessageRequest(message=sent)


async def test_the_card_lists_a_skill_per_crew_and_needs_the_token(tmp_path: Path) -> None:
    app = agent(tmp_path / "runs.db", "brief", "gate")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=URL) as bare:
        assert (await bare.get("/.well-known/agent-card.json")).status_code == 401
    async with http_for(app) as http:
        card = (await http.get("/.well-known/agent-card.json")).json()
    assert [skill["id"] for skill in card["skills"]] == ["brief", "gate"]
    brief = card["skills"][0]["description"]
    assert brief.startswith("Writes a short brief about a topic. Inputs, as a data part")
    assert "words (integer, default 120)" in brief and "required: audience" in brief
    assert card["supportedInterfaces"] == [{"url": URL, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]
    assert "bearer" in card["securitySchemes"] and TOKEN not in str(card)


async def test_message_send_runs_a_kickoff_and_the_task_survives_a_restart(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    async with http_for(agent(store, "brief", "gate")) as http:
        client = await create_client(URL, ClientConfig(httpx_client=http, streaming=False))
        request = message(new_data_part({"inputs": {"audience": "kids", "words": 30}}), skill="brief")
        (item,) = [item async for item in client.send_message(request)]
    task = item.task
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert [a.name for a in task.artifacts] == ["notes", "brief"]
    (data,) = get_data_parts(task.artifacts[1].parts)
    assert set(data) == {"title", "summary"}
    assert RunStore(store).run(task.id).status == "done"  # the task id is the run id
    async with http_for(agent(store, "brief", "gate")) as http:  # a new server on the same store
        client = await create_client(URL, ClientConfig(httpx_client=http, streaming=False))
        again = await client.get_task(GetTaskRequest(id=task.id))
    assert again.status.state == TaskState.TASK_STATE_COMPLETED
    assert [a.name for a in again.artifacts] == ["notes", "brief"]


async def test_message_stream_sends_states_and_artifacts_and_a_pause_is_input_required(tmp_path: Path) -> None:
    async with http_for(agent(tmp_path / "runs.db", "gate")) as http:
        client = await create_client(URL, ClientConfig(httpx_client=http, streaming=True))
        items = [item async for item in client.send_message(message(new_text_part("/tmp/a.log")))]
    states = [i.status_update.status.state for i in items if i.HasField("status_update")]
    assert states[0] == TaskState.TASK_STATE_WORKING and states[-1] == TaskState.TASK_STATE_INPUT_REQUIRED
    last = [i.status_update for i in items if i.HasField("status_update")][-1]
    text = "\n".join(get_text_parts(last.status.message.parts))
    assert "is paused" in text and 'remove({"path": "/tmp/a.log"})' in text and "crew approve" in text


async def test_bad_inputs_fail_the_task_with_a_clear_message(tmp_path: Path) -> None:
    async with http_for(agent(tmp_path / "runs.db", "brief", "gate")) as http:
        client = await create_client(URL, ClientConfig(httpx_client=http, streaming=False))
        (first,) = [i async for i in client.send_message(message(new_text_part("hi")))]
        no_skill = first.task
        wrong = [i async for i in client.send_message(message(new_data_part({"words": "x"}), skill="brief"))]
    assert no_skill.status.state == TaskState.TASK_STATE_FAILED
    assert "name a skill (brief, gate)" in get_text_parts(no_skill.status.message.parts)[0]
    failed = wrong[0].task
    assert failed.status.state == TaskState.TASK_STATE_FAILED
    assert get_text_parts(failed.status.message.parts) == [
        "crew 'brief': input 'words': expected an integer, got string; input 'audience': missing (it has no default)"
    ]


async def test_tasks_cancel_cancels_the_run_and_the_store_marks_it_interrupted(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    app = agent(store, "slow")
    async with http_for(app) as http:
        client = await create_client(URL, ClientConfig(httpx_client=http, streaming=False))
        # httpx's ASGI transport hands a response over whole: the send waits in the background
        following = asyncio.ensure_future(_drain(client.send_message(message(new_data_part({})))))
        task_id = await _running_run(store, client)  # the task id is the run id
        cancelled = await client.cancel_task(CancelTaskRequest(id=task_id))
        await asyncio.wait_for(following, 30)
        assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
        deadline = asyncio.get_running_loop().time() + 30  # the SDK answers before the run has unwound
        while RunStore(store).run(task_id).status == "running" and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.02)
    assert RunStore(store).run(task_id).status == "interrupted"


async def _running_run(store: Path, client: Any) -> str:
    """The run whose task has started (the A2A task says so: the store commits its rows in batches)."""
    deadline = asyncio.get_running_loop().time() + 30
    while asyncio.get_running_loop().time() < deadline:
        for run in RunStore(store).runs() if store.exists() else []:
            task = await client.get_task(GetTaskRequest(id=run.id))
            if "task.started" in " ".join(get_text_parts(task.status.message.parts)):
                return run.id
        await asyncio.sleep(0.02)
    raise AssertionError("no run started")


async def _drain(items: Any) -> list[Any]:
    return [item async for item in items]


async def _paused_then_answered(store: Path, *answer: Any) -> tuple[Any, Any]:
    """A gate task paused (input-required), then the follow-up message ``answer`` on the same task."""
    async with http_for(agent(store, "gate")) as http:
        client = await create_client(URL, ClientConfig(httpx_client=http, streaming=False))
        (first,) = [i async for i in client.send_message(message(new_text_part("/tmp/b.log")))]
        paused = first.task
        follow = message(*answer)
        follow.message.task_id, follow.message.context_id = paused.id, paused.context_id
        (second,) = [i async for i in client.send_message(follow)]
    return paused, second.task


async def test_a_follow_up_approval_continues_the_paused_run_to_completion(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    paused, done = await _paused_then_answered(store, new_text_part("Approve"))
    assert paused.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert "Answer this task with a message: 'approve'" in get_text_parts(paused.status.message.parts)[0]
    assert done.id == paused.id and done.status.state == TaskState.TASK_STATE_COMPLETED
    runs = RunStore(store)
    (continued,) = [run for run in runs.runs() if run.continued_from == paused.id]
    assert continued.status == "done"
    assert [(c.tool, c.status) for c in runs.tool_calls(continued.id)] == [("remove", "success")]


async def test_a_follow_up_denial_as_a_data_part_reaches_the_agent(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    _, done = await _paused_then_answered(store, new_data_part({"decision": "deny", "reason": "keep it"}))
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    runs = RunStore(store)
    (continued,) = [run for run in runs.runs() if run.continued_from == done.id]
    (call,) = runs.tool_calls(continued.id)
    assert call.status == "error" and "keep it" in (call.result or "")


async def test_a_follow_up_that_decides_nothing_leaves_the_task_waiting(tmp_path: Path) -> None:
    _, still = await _paused_then_answered(tmp_path / "runs.db", new_text_part("maybe later"))
    assert still.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    (said,) = get_text_parts(still.status.message.parts)
    assert "the answer 'maybe later' is neither an approval nor a denial" in said
