"""The event bus: subscribers see every event; the log stays silent (and cheap) until configured."""

from __future__ import annotations

import subprocess
import sys

import pytest

from crew.common.events import bus


def test_subscribers_get_events_with_secrets_redacted_and_can_unsubscribe() -> None:
    seen = []
    unsubscribe = bus.subscribe(seen.append)
    bus.emit("task.done", run_id="r1", task="t", api_key="sk-secret", nested={"password": "p", "ok": 1})
    unsubscribe()
    bus.emit("task.done", run_id="r1", task="after")
    assert [(e.type, e.run_id, e.data["task"]) for e in seen] == [("task.done", "r1", "t")]
    assert seen[0].data["api_key"] == "***" and seen[0].data["nested"] == {"password": "***", "ok": 1}


def test_a_failing_subscriber_does_not_break_the_emitter() -> None:
    def broken(event) -> None:
        raise RuntimeError("observer bug")

    unsubscribe = bus.subscribe(broken)
    try:
        assert bus.emit("task.done", task="t").type == "task.done"
    finally:
        unsubscribe()


def test_unconfigured_logging_builds_no_record_then_configured_logging_gets_json() -> None:
    """A warning-level event must not import structlog (0.1 s) when no handler would print it."""
    code = (
        "import io, logging, sys\n"
        "from crew.common.events import bus\n"
        "bus.emit('task.failed', run_id='r', task='t')\n"
        "print('structlog' in sys.modules)\n"
        "buf = io.StringIO()\n"
        "logging.basicConfig(level=logging.WARNING, stream=buf)\n"
        "bus.emit('task.failed', run_id='r', task='t', api_key='sk-x')\n"
        "print(buf.getvalue().strip())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    first, record = done.stdout.splitlines()
    assert first == "False", done.stderr
    assert record.startswith("WARNING:crew:{") and '"event": "task.failed"' in record
    assert "sk-x" not in record and '"api_key": "***"' in record


def test_events_inside_a_scope_name_its_run_task_and_agent_unless_they_name_their_own() -> None:
    import asyncio

    from crew.common.events import current_origin, scoped

    seen = []
    unsubscribe = bus.subscribe(seen.append)

    async def task(name: str) -> None:
        with scoped(task=name, agent="A"):
            await asyncio.sleep(0)
            bus.emit("llm.call", model="m")
            bus.emit("tool.call", task="explicit", agent=None)

    async def run() -> None:
        with scoped(run_id="r9"):
            await asyncio.gather(task("t1"), task("t2"))
        bus.emit("after")

    try:
        asyncio.run(run())
    finally:
        unsubscribe()
    assert current_origin() is None
    calls = sorted((e.type, e.run_id, e.data["task"], e.data["agent"]) for e in seen if e.type != "after")
    assert calls == [
        ("llm.call", "r9", "t1", "A"),
        ("llm.call", "r9", "t2", "A"),
        ("tool.call", "r9", "explicit", "A"),
        ("tool.call", "r9", "explicit", "A"),
    ]
    assert seen[-1].run_id is None and "task" not in seen[-1].data


def test_known_secret_values_are_masked_in_event_text() -> None:
    from crew.common.secrets import register

    register("remembered-5555")
    seen = []
    unsubscribe = bus.subscribe(seen.append)
    bus.emit("tool.call", result="failed with remembered-5555 here", args={"q": "remembered-5555"}, n=3)
    unsubscribe()
    assert seen[0].data == {"result": "failed with *** here", "args": {"q": "***"}, "n": 3}


def test_configure_logging_is_what_the_cli_flags_do() -> None:
    code = (
        "import io, sys\n"
        "from crew.common.events import bus, configure_logging\n"
        "configure_logging('info', json=True)\n"
        "bus.emit('run.start', run_id='r', crew='c')\n"
        "bus.emit('llm.call', run_id='r', model='m', messages=[{'role': 'user', 'content': 'long'}])\n"
        "configure_logging('debug', json=False)\n"
        "bus.emit('llm.call', run_id='r', model='m', messages=[{'role': 'user', 'content': 'long'}])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 2, done.stderr  # llm.call is DEBUG: only the second, at debug, shows
    import json

    first = json.loads(lines[0])
    assert (first["event"], first["run_id"], first["level"]) == ("run.start", "r", "info")
    assert "llm.call" in lines[1] and "model=m" in lines[1] and "long" not in lines[1]


def test_a_runs_subscriber_hears_only_its_run_after_every_events_ones() -> None:
    from crew.common.events import EventBus

    events = EventBus()
    heard: list[tuple[str, str | None]] = []
    stop_all = events.subscribe(lambda e: heard.append(("all", e.run_id)))
    stop_a = events.subscribe(lambda e: heard.append(("a", e.run_id)), run_id="a")
    stop_b = events.subscribe(lambda e: heard.append(("b", e.run_id)), run_id="b")
    events.emit("x.one", run_id="a")
    events.emit("x.two", run_id="b")
    events.emit("x.three")
    assert heard == [("all", "a"), ("a", "a"), ("all", "b"), ("b", "b"), ("all", None)]
    stop_a(), stop_a(), stop_b(), stop_all()  # a remover twice is harmless
    heard.clear()
    events.emit("x.four", run_id="a")
    assert heard == [] and not events._by_run


def test_a_runs_subscriber_of_some_types_hears_those_and_the_rest_is_never_built() -> None:
    from crew.common.events import EventBus

    events = EventBus()
    heard: list[tuple[str, dict]] = []
    stop = events.subscribe(lambda e: heard.append((e.type, e.data)), run_id="a", types={"llm.call"})
    also = events.subscribe(lambda e: heard.append(("every", e.data)), run_id="a")
    events.emit("llm.call", run_id="a", model="m")
    also()
    unwanted = events.emit("agent.turn", run_id="a", messages=["long"])
    assert heard == [("llm.call", {"model": "m"}), ("every", {"model": "m"})]
    assert unwanted.data == {}  # nobody wanted it: nothing was scrubbed or kept for it
    stop()
    assert not events._by_run
    with pytest.raises(ValueError, match="one run"):
        events.subscribe(lambda e: None, types={"llm.call"})
