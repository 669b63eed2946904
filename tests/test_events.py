"""The event bus: subscribers see every event; the log stays silent (and cheap) until configured."""

from __future__ import annotations

import subprocess
import sys

from crew.events import bus


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
        "from crew.events import bus\n"
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
