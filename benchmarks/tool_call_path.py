"""How many of crew's files one tool call walks through, from the model's reply to the tool and back.

Run: python benchmarks/tool_call_path.py [--list]

A crew of one agent and one task runs on a ``FunctionModel`` that asks for one tool call (a
plain sync ``@tool`` function, a cache miss), then answers. A profiler hook (on every thread:
a sync tool runs in a worker thread) notes each function of ``crew/`` that runs between the
moment the model's first reply leaves the model function and the moment the model function
is asked again, with the tool's result in the conversation. That is the whole trip of one
call: reading the reply, the loop, the executor's pipeline, the tool, the observation, and
the way back into the model door. ``crew/testing`` (the double itself) is not counted, nor
are the coroutines that only resume (the task runner and the agent awaiting the loop): they
were entered before the trip, and a reader of the call does not open them for it.

The figure is a count of distinct files, with the packages they sit in: a reader following
one call opens each of them. Before the package was laid out in layers (commit 231ae30) this
script counts 22 files, and 18 right after it; the layout issue counted 33 by reading the code
(every file a call could enter, approvals and all). Goal: at most half of 33.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from crew import Agent, Crew, Task, tool  # noqa: E402
from crew.testing import FunctionModel  # noqa: E402

PACKAGE = str(ROOT / "crew") + "/"
DOUBLES = PACKAGE + "testing/"
GOAL = 33 // 2
# A frame that starts runs from its first instructions (a coroutine's or generator's first
# entry passes RETURN_GENERATOR and POP_TOP first); one resumed mid-way has a later offset.
_FRESH = 6


class Trip:
    """The files of crew entered while ``on`` is set, from any thread."""

    def __init__(self) -> None:
        self.on = False
        self.files: dict[str, int] = {}
        self._lock = threading.Lock()

    def hook(self, frame: FrameType, event: str, _arg: Any) -> None:
        if not self.on or event != "call" or frame.f_lasti > _FRESH:
            return  # a coroutine resumed where it awaited was entered before the trip: not counted
        name = frame.f_code.co_filename
        if name.startswith(PACKAGE) and not name.startswith(DOUBLES):
            with self._lock:
                self.files[name] = self.files.get(name, 0) + 1


trip = Trip()


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def script(messages: list[dict[str, Any]], tools: Any) -> Any:
    trip.on = False  # asked again: the tool's result is in the conversation
    if any(m.get("role") == "tool" for m in messages):
        return "The sum is 5."
    trip.on = True  # the reply leaves the model: the trip starts
    return [{"name": "add", "args": {"a": 2, "b": 3}}]


def main() -> None:
    agent = Agent(role="Adder", goal="add", backstory="counts", tools=[add], llm=FunctionModel(script))
    task = Task(description="Add 2 and 3.", expected_output="the sum", agent=agent)
    crew = Crew(agents=[agent], tasks=[task])
    crew.kickoff()  # warm: first-use imports are not part of a call's path
    trip.files.clear()
    threading.setprofile(trip.hook)
    sys.setprofile(trip.hook)
    try:
        out = crew.kickoff()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    assert "5" in out.raw, out.raw
    files = sorted(f[len(PACKAGE) :] for f in trip.files)
    packages = sorted({f.split("/")[0] if "/" in f else "(crew/)" for f in files})
    before = "22 before the layout, 18 after it"
    print(f"files one tool call enters, reply to result: {len(files)} (goal <= {GOAL}; {before})")
    print(f"packages: {len(packages)}: {', '.join(packages)}")
    if "--list" in sys.argv:
        for f in files:
            print(f"  crew/{f}  ({trip.files[PACKAGE + f]} calls)")


if __name__ == "__main__":
    main()
