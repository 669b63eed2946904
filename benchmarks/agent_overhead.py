"""What the agent loop costs on top of the model, and how long its prompts are.

Run: python benchmarks/agent_overhead.py [--tasks N]

1. Zero-latency ``FunctionModel``: an agent with 3 tools works tasks of 5 tool turns and
   a final answer. The time spent inside the model (the FunctionModel's own bookkeeping
   included) is measured and subtracted, so the figure is ours: prompt assembly, the
   loop, the executor running the (trivial) tools, events and the TaskOutput.
   Goal: under 1 ms per turn. For scale, CrewAI spends about 35 ms of CPU per task here.
2. The same through a Crew (one-turn tasks in a sequential process): kickoff time per
   task minus the agent's own time per task is the crew's overhead. Goal: under 1 ms.
3. Through litellm to the local OpenAI-compatible server: total per agent turn, beside
   one bare ``LLM.acomplete`` to the same server (litellm + HTTP alone, about 7 ms here).
4. Prompt size of a 3-tool agent (about four characters a token), native and text mode.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crew.agent.agent import Agent
from crew.agent.prompts import estimate_tokens
from crew.tasks.task import Task
from crew.testing import FunctionModel, OpenAIServer, Reply
from crew.tools import ToolExecutor, tool

TOOL_TURNS = 5


@tool
def search(query: str, limit: int = 5) -> list[str]:
    """Search the web and return result titles."""
    return [f"{query} {i}" for i in range(limit)]


@tool
def fetch(url: str) -> str:
    """Fetch a web page as text."""
    return f"page at {url}"


@tool
def calculate(expression: str) -> float:
    """Evaluate an arithmetic expression such as '2 * (3 + 4)'."""
    return 14.0


TOOLS = [search, fetch, calculate]
CALLS = [("search", {"query": "cats"}), ("fetch", {"url": "https://x"}), ("calculate", {"expression": "2*7"})]


def script(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
    """TOOL_TURNS tool turns (a different call each time, so no cache hit), then an answer."""
    turn = sum(1 for m in messages if m["role"] == "assistant")
    if turn < TOOL_TURNS:
        name, args = CALLS[turn % 3]
        return [{"name": name, "args": {**args, **({"limit": turn} if name == "search" else {})}}]
    return "Final answer."


class Timed:
    """Wraps a ChatModel and adds up the seconds spent inside it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model = inner.model
        self.seconds = 0.0
        self.calls = 0

    @property
    def supports_function_calling(self) -> bool:
        return self.inner.supports_function_calling

    async def acomplete(self, messages: Any, tools: Any = None, *, output_schema: Any = None) -> Any:
        started = time.perf_counter()
        try:
            return await self.inner.acomplete(messages, tools, output_schema=output_schema)
        finally:
            self.seconds += time.perf_counter() - started
            self.calls += 1


def row(label: str, value: float, unit: str, goal: str = "") -> None:
    number = f"{value:>10.0f}" if unit == "tokens" else f"{value:>10.3f}"
    print(f"  {label:<58} {number} {unit:<9} {goal}".rstrip())


async def agent_turns(tasks: int) -> None:
    model = Timed(FunctionModel(script))
    agent = Agent(role="Researcher", goal="Answer questions", backstory="Careful.", llm=model, tools=TOOLS)
    executor = ToolExecutor(TOOLS)
    work = [Task(name=f"t{i}", description=f"Question {i}", expected_output="An answer") for i in range(tasks)]
    for task in work[:20]:  # warm-up: imports, caches, first-call paths
        await agent.aexecute_task(task, executor=ToolExecutor(TOOLS))
    model.seconds, model.calls = 0.0, 0
    started = time.perf_counter()
    for task in work:
        await agent.aexecute_task(task, executor=executor)
    wall = time.perf_counter() - started
    turns = model.calls
    ours = wall - model.seconds
    print(f"zero-latency FunctionModel, {tasks} tasks x {turns // tasks} turns ({TOOL_TURNS} tool turns + answer):")
    row("model time per turn (FunctionModel, for scale)", model.seconds / turns * 1e3, "ms")
    row("our time per turn (loop + prompts + executor + events)", ours / turns * 1e3, "ms/turn", "goal < 1 ms")
    row("our time per task", ours / tasks * 1e3, "ms/task", "(CrewAI ~35 ms CPU/task)")


async def crew_overhead(tasks: int) -> None:
    from crew.crew import Crew

    model = Timed(FunctionModel(lambda m, t: "done"))
    agent = Agent(role="Writer", goal="Write", llm=model)
    work = [Task(name=f"t{i}", description=f"Write {i}", expected_output="text", agent=agent) for i in range(tasks)]
    solo = [Task(name=f"s{i}", description=f"Write {i}", expected_output="text") for i in range(tasks)]
    crew = Crew(agents=[agent], tasks=work)
    await crew.kickoff_async()  # warm-up
    started = time.perf_counter()
    for task in solo:
        await agent.aexecute_task(task)
    alone = (time.perf_counter() - started) / tasks
    started = time.perf_counter()
    await crew.kickoff_async()
    in_crew = (time.perf_counter() - started) / tasks
    print(f"crew, sequential process, {tasks} one-turn tasks:")
    row("agent.aexecute_task alone per task", alone * 1e3, "ms")
    row("kickoff per task", in_crew * 1e3, "ms")
    row("crew overhead per task (kickoff - agent alone)", (in_crew - alone) * 1e3, "ms/task", "goal < 1 ms")


async def through_litellm(rounds: int) -> None:
    """Rounds of bare calls and of agent turns alternate; the best round of each is kept (noisy hosts)."""
    from crew.models import LLM

    def handler(request: Any) -> Any:
        assistant_turns = sum(1 for m in request.messages if m["role"] == "assistant")
        if request.tools and assistant_turns < TOOL_TURNS:
            name, args = CALLS[assistant_turns % 3]
            return Reply.tools(
                {"name": name, "args": {**args, **({"limit": assistant_turns} if name == "search" else {})}}
            )
        return Reply.text("Final answer.")

    turns_per_task = TOOL_TURNS + 1
    with OpenAIServer(handler=handler) as server:
        llm = LLM("openai/gpt-4o-mini", api_base=server.url, api_key="sk-test", num_retries=0, transport="litellm")
        model = Timed(llm)
        agent = Agent(role="Researcher", goal="Answer questions", llm=model, tools=TOOLS)
        await llm.acomplete([{"role": "user", "content": "warm up"}])
        await agent.aexecute_task(Task(name="warm", description="Question", expected_output="An answer"))
        bare, per_turn, outside = [], [], []
        for r in range(rounds):
            started = time.perf_counter()
            for _ in range(2 * turns_per_task):
                await llm.acomplete([{"role": "user", "content": "hello"}])
            bare.append((time.perf_counter() - started) / (2 * turns_per_task))
            model.seconds, model.calls = 0.0, 0
            started = time.perf_counter()
            for i in range(2):
                await agent.aexecute_task(
                    Task(name=f"h{r}.{i}", description=f"Question {i}", expected_output="An answer")
                )
            wall = time.perf_counter() - started
            per_turn.append(wall / model.calls)
            outside.append((wall - model.seconds) / model.calls)
    print(f"through litellm to the local server (best of {rounds} rounds of {2 * turns_per_task} turns):")
    row("one bare LLM.acomplete (litellm + HTTP, for scale)", min(bare) * 1e3, "ms/call", "(~7 ms here)")
    row("total per agent turn", min(per_turn) * 1e3, "ms/turn")
    row(
        "of which outside the model call",
        min(outside) * 1e3,
        "ms/turn",
        "(loop + tools in threads + litellm's own background logging)",
    )


def first_turn(task: Task, text_mode: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The messages and tools a 3-tool agent's model receives on its first turn."""
    seen: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []

    def answer(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
        seen.append((messages, tools))
        return "Final Answer: done"

    agent = Agent(
        role="Researcher",
        goal="Answer questions with sources",
        backstory="A careful analyst.",
        llm=FunctionModel(answer, function_calling=not text_mode),
        tools=TOOLS,
    )
    agent.execute_task(task)
    return seen[0]


def prompt_sizes() -> None:
    """Measured on what the model really receives on its first turn (the public path, no internals)."""
    task = Task(
        name="q",
        description="Find three recent papers on protein folding and summarise each.",
        expected_output="Three bullet points with title, year and a one-line summary.",
    )
    print("prompt size of a 3-tool agent (estimated tokens, ~4 chars each):")
    for text_mode in (False, True):
        messages, tools = first_turn(task, text_mode)
        system, user = messages[:2]
        label = "text mode" if text_mode else "native"
        row(f"{label}: system prompt (role, goal, backstory, 3 tools)", estimate_tokens(system["content"]), "tokens")
        row(f"{label}: user prompt (task)", estimate_tokens(user["content"]), "tokens")
        if tools:
            row(f"{label}: tools parameter (provider format)", estimate_tokens(json.dumps(tools)), "tokens")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=300)
    args = parser.parse_args()
    await agent_turns(args.tasks)
    await crew_overhead(args.tasks)
    await through_litellm(8)
    prompt_sizes()


if __name__ == "__main__":
    asyncio.run(main())
