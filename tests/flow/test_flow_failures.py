"""Bad flows get clear answers: the failing step named, loops stopped, unheard routes warned, Ctrl-C obeyed."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from pydantic import BaseModel

from crew.errors import FlowDefinitionError, FlowRouteWarning, FlowStepError, FlowStepLimitError
from crew.flow import Flow, listen, router, start


class Counter(BaseModel):
    turns: int = 0


def test_a_step_that_raises_fails_the_run_naming_the_step_with_the_state_kept():
    class F(Flow[Counter]):
        @start()
        def count(self):
            self.state.turns = 7

        @listen(count)
        def explode(self):
            raise KeyError("no such column")

        @listen(explode)
        def never(self):
            raise AssertionError("must not run")

    flow = F()
    with pytest.raises(FlowStepError, match=r"flow F: step 'explode' failed: KeyError: 'no such column'") as caught:
        flow.kickoff()
    assert caught.value.step == "explode" and caught.value.state.turns == 7
    assert isinstance(caught.value.__cause__, KeyError)
    assert flow.method_outputs == [None]


def test_max_steps_stops_a_router_loop_that_never_ends():
    class Forever(Flow[Counter]):
        @start("again")
        def turn(self):
            self.state.turns += 1

        @router(turn)
        def loop(self):
            return "again"

    flow = Forever(max_steps=50)
    with pytest.raises(FlowStepLimitError, match=r"max_steps=50 step runs, before running 'turn' again") as caught:
        flow.kickoff()
    assert caught.value.state.turns == 25  # 25 turns and 25 routes
    assert Forever.max_steps == 1000
    with pytest.raises(FlowDefinitionError, match="max_steps must be a positive int"):
        Forever(max_steps=0)


def test_a_label_nothing_waits_for_is_a_warning_at_run_time():
    class F(Flow):
        @start()
        def a(self):
            return 1

        @router(a)
        def choose(self):
            return "nowhere"

        @listen("somewhere")
        def b(self):
            return 2

    with pytest.warns(FlowRouteWarning, match=r"router 'choose' returned 'nowhere', which no step listens for"):
        assert F().kickoff() == "nowhere"


def test_cancelling_a_run_cancels_its_running_steps():
    events: list[str] = []

    class Slow(Flow):
        @start()
        async def wait(self):
            events.append("started")
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                events.append("cancelled")
                raise

        @listen(wait)
        def after(self):
            events.append("must not run")

    async def main() -> None:
        run = asyncio.ensure_future(Slow().kickoff_async())
        while not events:
            await asyncio.sleep(0)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run

    asyncio.run(main())
    assert events == ["started", "cancelled"]


def test_a_failing_step_cancels_the_steps_running_beside_it():
    events: list[str] = []

    class F(Flow):
        @start()
        async def slow(self):
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                events.append("slow cancelled")
                raise

        @start()
        async def bad(self):
            await asyncio.sleep(0)
            raise ValueError("bad input")

    with pytest.raises(FlowStepError, match="step 'bad'"):
        F().kickoff()
    assert events == ["slow cancelled"]


def test_a_failed_run_says_so_in_its_step_failed_and_flow_done_events():
    from crew.common.events import Event, bus

    class F(Flow):
        @start()
        def boom(self):
            raise ValueError("no")

    seen: list[Event] = []
    unsubscribe = bus.subscribe(seen.append)
    try:
        with pytest.raises(FlowStepError):
            F().kickoff()
    finally:
        unsubscribe()
    failed = next(e for e in seen if e.type == "step.failed")
    done = next(e for e in seen if e.type == "flow.done" and e.run_id == failed.run_id)
    assert failed.data["step"] == "boom" and failed.data["error"] == "ValueError: no"
    assert done.data["status"] == "failed" and done.data["steps"] == 1


_READS_INPUT = """
from crew.flow import Flow, listen, start


class Leads(Flow):
    @start()
    def score(self):
        return ["ada", "grace"]

    @listen(score)
    def human_in_the_loop(self, leads):
        answer = input("Shall we email these leads? ")
        return f"{answer}: {', '.join(leads)}"
"""


def test_a_step_reading_a_closed_stdin_fails_saying_what_to_do_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:

    from flow_project_kit import crew as command
    from flow_project_kit import write

    folder = write(tmp_path / "leads", {"flow.py": _READS_INPUT})
    monkeypatch.setenv("CREW_STORE", str(tmp_path / "runs.db"))
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # closed: input() meets its end at once
    code, out, err = command(capsys, "kickoff", str(folder), "-q")
    assert (code, out) == (1, "")
    assert "step 'human_in_the_loop' failed: it read standard input (input()), which is closed" in err
    assert "pipe the answers in" in err and "self.ask(...)" in err and "Traceback" not in err
    monkeypatch.setattr("sys.stdin", io.StringIO("yes\n"))  # the answers piped in
    code, out, err = command(capsys, "resume", "-q")
    assert (code, out) == (0, "yes: ada, grace\n"), err
