"""The native-mode loop with model doubles: tool turns, result_as_answer, limits, cache, max_iter, timeouts."""

import asyncio
import json
import re
import threading

import pytest
from pydantic import BaseModel

from crew.agent.agent import Agent
from crew.common.events import bus
from crew.errors import AgentError, ConfigError, TaskTimeoutError
from crew.models import InvalidToolCall, LLMResponse
from crew.tasks.output import TaskOutput
from crew.tasks.task import Task
from crew.testing import FunctionModel, TestModel
from crew.tools import RunContext, ToolExecutor, tool


def last(messages):
    return messages[-1]


def task_number(messages) -> int:
    """The number in a task description such as "Square 12"."""
    return int(re.search(r"Task: \w+ (\d+)", messages[1]["content"]).group(1))


def task(description="Add 3 and 4", **kw):
    return Task(
        name=kw.pop("name", "sum"), description=description, expected_output=kw.pop("expected_output", "a number"), **kw
    )


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def test_tool_turn_then_final_answer_with_history_checked():
    seen = []

    def fn(messages, tools):
        seen.append((list(messages), tools))
        if last(messages)["role"] == "tool":
            return f"The sum is {last(messages)['content']}."
        return [{"name": "add", "args": {"a": 3, "b": 4}, "id": "call_add"}]

    agent = Agent(role="Calculator", goal="Add numbers", backstory="Precise.", llm=FunctionModel(fn), tools=[add])
    out = await agent.aexecute_task(task())

    assert out.raw == "The sum is 7." and out.status == "done" and out.agent == "Calculator"
    assert out.name == "sum" and out.model == "function"
    assert [(r.name, r.args, r.status) for r in out.tool_calls] == [("add", {"a": 3, "b": 4}, "success")]
    assert out.usage.requests == 2 and out.usage.prompt_tokens > 0
    first_messages, first_tools = seen[0]
    assert [m["role"] for m in first_messages] == ["system", "user"]
    # native mode: the prompt names the tool, its manual (purpose, arguments) travels in `tools`
    assert "Tools you can call: add." in first_messages[0]["content"]
    assert "Tool Name: add" not in first_messages[0]["content"]
    assert first_tools[0]["function"]["description"] == add.description
    assert "Task: Add 3 and 4" in first_messages[1]["content"]
    assert [t["function"]["name"] for t in first_tools] == ["add"]
    second_messages, _ = seen[1]
    assistant, tool_message = second_messages[-2:]
    assert assistant["role"] == "assistant" and assistant["tool_calls"][0]["id"] == "call_add"
    assert tool_message == {"role": "tool", "tool_call_id": "call_add", "content": "7"}


async def test_parallel_calls_run_together_and_answer_in_order():
    barrier = asyncio.Barrier(3)

    @tool
    async def fetch(key: str) -> dict:
        """Fetch a record by key."""
        async with asyncio.timeout(5):
            await barrier.wait()  # passes only when all three calls are in flight at once
        return {"key": key, "len": len(key)}

    def fn(messages, tools):
        if last(messages)["role"] == "tool":
            return " | ".join(m["content"] for m in messages if m["role"] == "tool")
        return [{"name": "fetch", "args": {"key": k}, "id": f"id_{k}"} for k in ("a", "bb", "ccc")]

    agent = Agent(role="Fetcher", goal="Fetch", llm=FunctionModel(fn), tools=[fetch])
    out = await agent.aexecute_task(task("fetch three"))

    assert out.raw == '{"key": "a", "len": 1} | {"key": "bb", "len": 2} | {"key": "ccc", "len": 3}'
    assert [r.args["key"] for r in out.tool_calls] == ["a", "bb", "ccc"]


async def test_result_as_answer_ends_without_another_model_call():
    @tool(result_as_answer=True)
    def final_report(topic: str) -> dict:
        """Produce the final report."""
        return {"topic": topic, "verdict": "ok"}

    model = FunctionModel(
        lambda m, t: [{"name": "add", "args": {"a": 1, "b": 1}}, {"name": "final_report", "args": {"topic": "cats"}}]
    )
    agent = Agent(role="Reporter", goal="Report", llm=model, tools=[add, final_report])
    out = await agent.aexecute_task(task("report"))

    assert model.calls == 1
    assert out.raw == '{"topic": "cats", "verdict": "ok"}'
    assert [r.name for r in out.tool_calls] == ["add", "final_report"]  # every call of the turn ran


async def test_usage_limit_reaches_the_model_and_repeated_calls_are_served_from_cache():
    runs = []

    @tool(max_usage_count=1)
    def lookup(city: str) -> str:
        """Look a city up."""
        runs.append(city)
        return f"{city}: 3 degrees"

    def fn(messages, tools):
        tool_messages = [m["content"] for m in messages if m["role"] == "tool"]
        if len(tool_messages) == 0:
            return [{"name": "lookup", "args": {"city": "Oslo"}}]
        if len(tool_messages) == 1:
            return [{"name": "lookup", "args": {"city": "Oslo"}}]  # identical: cache, not refused
        if len(tool_messages) == 2:
            return [{"name": "lookup", "args": {"city": "Rome"}}]  # new args: limit reached
        return " || ".join(tool_messages)

    agent = Agent(role="Weather", goal="Report", llm=FunctionModel(fn), tools=[lookup])
    out = await agent.aexecute_task(task("weather"))

    assert runs == ["Oslo"]
    first, again, refused = out.raw.split(" || ")
    assert first == again == "Oslo: 3 degrees"
    assert "usage limit of 1" in refused
    assert [(r.cached, r.refused, r.status) for r in out.tool_calls] == [
        (False, False, "success"),
        (True, False, "success"),
        (False, True, "error"),
    ]


async def test_cache_hits_across_two_agents_sharing_one_executor():
    runs = []

    @tool
    def price(item: str) -> float:
        """Price of an item."""
        runs.append(item)
        return 9.5

    def fn(messages, tools):
        if last(messages)["role"] == "tool":
            return last(messages)["content"]
        return [{"name": "price", "args": {"item": "tea"}}]

    executor = ToolExecutor([price])
    a = Agent(role="Buyer", goal="Buy", llm=FunctionModel(fn), tools=[price])
    b = Agent(role="Seller", goal="Sell", llm=FunctionModel(fn), tools=[price])
    out_a = await a.aexecute_task(task("price of tea", name="a"), executor=executor, run_id="run-1")
    out_b = await b.aexecute_task(task("price of tea", name="b"), executor=executor, run_id="run-1")

    assert runs == ["tea"] and out_a.raw == out_b.raw == "9.5"
    assert (out_a.tool_calls[0].cached, out_b.tool_calls[0].cached) == (False, True)
    assert executor.stats["price"].cache_hits == 1 and executor.stats["price"].runs == 1


async def test_run_context_reaches_tools():
    seen = []

    @tool
    def whoami(ctx: RunContext) -> str:
        """Say who calls."""
        seen.append((ctx.run_id, ctx.task, ctx.agent, ctx.tool_call_id))
        return "me"

    model = FunctionModel(
        lambda m, t: "done" if last(m)["role"] == "tool" else [{"name": "whoami", "args": {}, "id": "c9"}]
    )
    agent = Agent(role="Auditor", goal="Audit", llm=model, tools=[whoami])
    await agent.aexecute_task(task("audit", name="audit"), run_id="run-7")
    assert seen == [("run-7", "audit", "Auditor", "c9")]


async def test_max_iter_asks_once_for_a_best_answer_without_tools():
    seen = []

    def fn(messages, tools):
        seen.append(tools)
        if not tools:
            return "best guess: 7"
        return [{"name": "add", "args": {"a": 3, "b": 4}}]

    agent = Agent(role="Looper", goal="Loop", llm=FunctionModel(fn), tools=[add], max_iter=3)
    out = await agent.aexecute_task(task())

    assert out.raw == "best guess: 7"
    assert [bool(t) for t in seen] == [True, True, True, False]
    assert len(out.tool_calls) == 3 and out.usage.requests == 4


async def test_max_iter_without_any_answer_is_a_clear_error():
    agent = Agent(
        role="Mute",
        goal="Nothing",
        llm=FunctionModel(lambda m, t: [{"name": "add", "args": {"a": 1, "b": 2}}] if t else ""),
        tools=[add],
        max_iter=2,
    )
    with pytest.raises(AgentError, match=r"agent 'Mute' gave no final answer to task 'sum' within max_iter=2"):
        await agent.aexecute_task(task())


async def test_max_execution_time_raises_naming_agent_and_task():
    model = FunctionModel(lambda m, t: [{"name": "add", "args": {"a": len(m), "b": 1}}], latency=0.02)
    agent = Agent(role="Slowpoke", goal="Loop", llm=model, tools=[add], max_iter=1000, max_execution_time=0.15)
    with pytest.raises(TaskTimeoutError, match=r"agent 'Slowpoke'.*max_execution_time of 0.15 s.*task 'sum'"):
        await agent.aexecute_task(task())


async def test_a_timeout_raised_inside_is_not_renamed():
    @tool(handle_tool_error=False)
    async def flaky() -> str:
        """Times out on its own."""
        raise TimeoutError("upstream timed out")

    agent = Agent(
        role="R",
        goal="G",
        llm=FunctionModel(lambda m, t: [{"name": "flaky", "args": {}}]),
        tools=[flaky],
        max_execution_time=5,
    )
    with pytest.raises(TimeoutError, match="upstream timed out") as info:
        await agent.aexecute_task(task())
    assert not isinstance(info.value, TaskTimeoutError)


async def test_invalid_tool_call_arguments_are_answered_and_recovered():
    def fn(messages, tools):
        if last(messages)["role"] == "tool":
            return "recovered: " + last(messages)["content"]
        return LLMResponse(
            invalid_tool_calls=[
                InvalidToolCall(id="bad1", name="add", arguments="{a: 1", error="arguments are not valid JSON")
            ]
        )

    agent = Agent(role="R", goal="G", llm=FunctionModel(fn), tools=[add])
    out = await agent.aexecute_task(task())
    assert out.raw.startswith("recovered: Not run: the arguments of 'add' were unreadable")
    assert [(r.name, r.status) for r in out.tool_calls] == [("add", "error")]


async def test_unknown_tool_and_bad_arguments_become_observations():
    def fn(messages, tools):
        results = [m["content"] for m in messages if m["role"] == "tool"]
        if results:
            return "\n".join(results)
        return [{"name": "subtract", "args": {}}, {"name": "ADD", "args": {"a": "x", "b": 1}}]

    agent = Agent(role="R", goal="G", llm=FunctionModel(fn), tools=[add])
    out = await agent.aexecute_task(task())
    assert "Unknown tool 'subtract'. Available tools: add" in out.raw
    assert "invalid arguments" in out.raw.lower() and "'add'" in out.raw and "- a:" in out.raw


async def test_context_feedback_and_tool_override_reach_the_prompt():
    seen = []

    @tool
    def other() -> str:
        """Another tool."""
        return "x"

    def fn(messages, tools):
        seen.append((messages[1]["content"], [t["function"]["name"] for t in tools]))
        return "ok"

    agent = Agent(role="R", goal="G", llm=FunctionModel(fn), tools=[add])
    research = TaskOutput(name="research", raw="Cats sleep 15 hours.")
    skipped = TaskOutput(name="optional", status="skipped")
    await agent.aexecute_task(task("write", tools=[other]), context=[research, skipped], feedback="Cite a source.")
    await agent.aexecute_task(task("write"), tools=[])
    (prompt, tools), (_, no_tools) = seen
    assert "## research\nCats sleep 15 hours." in prompt and "optional" not in prompt
    assert prompt.endswith("Cite a source.")
    assert tools == ["other"] and no_tools == []


async def test_steps_reach_callbacks_and_the_event_bus():
    events, sync_steps, async_steps = [], [], []

    async def on_step(step):
        async_steps.append(step.kind)

    model = FunctionModel(
        lambda m, t: "7" if last(m)["role"] == "tool" else [{"name": "add", "args": {"a": 3, "b": 4}}]
    )
    agent = Agent(role="R", goal="G", llm=model, tools=[add], step_callback=lambda s: sync_steps.append(s))
    unsubscribe = bus.subscribe(lambda e: events.append(e) if e.type == "agent.turn" else None)
    try:
        await agent.aexecute_task(task(), run_id="run-e", step_callback=on_step)
    finally:
        unsubscribe()

    assert [s.kind for s in sync_steps] == async_steps == ["tool_calls", "final_answer"]
    assert sync_steps[0].results[0].content == "7" and sync_steps[0].tool_calls[0].name == "add"
    assert [(e.run_id, e.data["turn"], e.data["kind"], e.data["tool_calls"]) for e in events] == [
        ("run-e", 1, "tool_calls", ["add"]),
        ("run-e", 2, "final_answer", []),
    ]


async def test_test_model_runs_every_tool_once_then_answers():
    @tool
    def search(query: str, limit: int = 3) -> list[str]:
        """Search."""
        return [query] * limit

    agent = Agent(role="R", goal="G", llm="test", tools=[add, search])
    out = await agent.aexecute_task(task())
    assert sorted(r.name for r in out.tool_calls) == ["add", "search"]
    assert all(r.status == "success" for r in out.tool_calls)
    assert out.raw.startswith("Test answer for:") and out.usage.requests == 2


def test_llm_resolution_and_validation():
    with pytest.raises(ValueError, match=r"llm\n.*must be a model string, an LLM or a ChatModel, not int"):
        Agent(role="R", goal="G", llm=42)
    agent = Agent(role="R", goal="G")
    assert agent.name == "R"
    with pytest.raises(ConfigError, match="no model given"):
        agent.execute_task(task())
    out = agent.execute_task(task(), llm=TestModel(final_answer="from the crew's default"))
    assert out.raw == "from the crew's default"
    named = Agent(role="R", goal="G", llm="test")
    assert named.chat_model() is named.chat_model()  # resolved once
    assert named.model_copy(update={"llm": TestModel(seed=3)}).chat_model().seed == 3


def test_plain_functions_become_tools_and_interpolation():
    def shout(text: str) -> str:
        """Shout a text."""
        return text.upper()

    agent = Agent(role="{topic} expert", goal="Explain {topic}", backstory="Loves {topic}.", tools=[shout])
    assert agent.tools[0].name == "shout"
    filled = agent.interpolate({"topic": "cats"})
    assert (filled.role, filled.goal, filled.backstory, filled.name) == (
        "cats expert",
        "Explain cats",
        "Loves cats.",
        "{topic} expert",
    )
    with pytest.raises(ConfigError, match=r"missing input 'topic' for \{topic\} in agent '\{topic\} expert' role"):
        agent.interpolate({})


async def test_sync_twin_works_inside_a_running_loop():
    agent = Agent(role="R", goal="G", llm=TestModel(final_answer="sync ok"))
    assert agent.execute_task(task()).raw == "sync ok"  # runs on its own loop in a worker thread


def test_one_agent_on_many_threads_with_a_shared_executor():
    runs = []
    lock = threading.Lock()

    @tool
    def square(n: int) -> int:
        """Square a number."""
        with lock:
            runs.append(n)
        return n * n

    def fn(messages, tools):
        n = task_number(messages)
        if last(messages)["role"] == "tool":
            return f"{n}^2={last(messages)['content']}"
        return [{"name": "square", "args": {"n": n % 5}}]

    agent = Agent(role="R", goal="G", llm=FunctionModel(fn), tools=[square])
    executor = ToolExecutor([square])
    results: dict[int, str] = {}

    def work(i):
        results[i] = agent.execute_task(task(f"Square {i}", name=f"t{i}"), executor=executor).raw

    threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert results == {i: f"{i}^2={(i % 5) ** 2}" for i in range(16)}
    assert sorted(runs) == [0, 1, 2, 3, 4]  # identical calls from other threads were cache hits


async def test_one_agent_on_many_tasks_at_once_keeps_them_apart():
    def fn(messages, tools):
        me = task_number(messages)
        if last(messages)["role"] == "tool":
            return f"{me}:{last(messages)['content']}"
        return [{"name": "add", "args": {"a": me, "b": 1000}}]

    agent = Agent(role="R", goal="G", llm=FunctionModel(fn, latency=0.01), tools=[add])
    outs = await asyncio.gather(*(agent.aexecute_task(task(f"Add {i}", name=f"t{i}")) for i in range(40)))
    assert [o.raw for o in outs] == [f"{i}:{i + 1000}" for i in range(40)]
    assert all(len(o.tool_calls) == 1 and o.tool_calls[0].args["a"] == i for i, o in enumerate(outs))


def test_verbose_prints_one_line_per_step(capsys):
    model = FunctionModel(
        lambda m, t: "7" if last(m)["role"] == "tool" else [{"name": "add", "args": {"a": 3, "b": 4}}]
    )
    Agent(role="Talker", goal="G", llm=model, tools=[add], verbose=True).execute_task(task())
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["[Talker] sum #1 tool_calls: add -> success: 7", "[Talker] sum #2 final_answer: 7"]


def test_folded_yaml_texts_lose_their_trailing_newline(capsys):
    """`role: >` in YAML gives "Senior Researcher\n": it must not split the prompt or a verbose line."""
    seen = []

    def reply(messages, tools):
        seen.append(messages[0]["content"])
        return "ok"

    agent = Agent(
        role="Senior Researcher\n",
        goal="  Find facts\n",
        backstory="Knows a lot.\n",
        llm=FunctionModel(reply),
        verbose=True,
    )
    assert (agent.role, agent.goal, agent.backstory, agent.name) == (
        "Senior Researcher",
        "Find facts",
        "Knows a lot.",
        "Senior Researcher",
    )
    out = agent.execute_task(task())
    assert (
        seen == ["You are Senior Researcher. Knows a lot.\nYour goal: Find facts"] and out.agent == "Senior Researcher"
    )
    assert capsys.readouterr().err == "[Senior Researcher] sum #1 final_answer: ok\n"


# -- audit additions: fields, result_as_answer order, tool messages, the loop, templates -------


async def test_fields_and_defaults_are_crewais_and_max_iter_15_bounds_the_loop():
    agent = Agent(
        role="R",
        goal="G",
        llm=FunctionModel(lambda m, t: [{"name": "add", "args": {"a": 1, "b": len(m)}}] if t else "best effort"),
        tools=[add],
    )
    assert (agent.backstory, agent.max_iter, agent.max_execution_time, agent.allow_delegation, agent.verbose) == (
        "",
        15,
        None,
        False,
        False,
    )
    assert (agent.system_template, agent.prompt_template, agent.function_calling_llm, agent.step_callback) == (
        None,
        None,
        None,
        None,
    )
    out = await agent.aexecute_task(task())
    assert out.raw == "best effort"
    assert len(out.tool_calls) == 15 and out.usage.requests == 16  # 15 turns, then one best-answer call


async def test_several_result_as_answer_calls_take_the_first_in_the_models_order_after_all_ran():
    finished = []

    @tool(result_as_answer=True)
    def broken_verdict(x: int) -> str:
        """Fails: an error result never ends the task."""
        finished.append("broken")
        raise ValueError("no verdict")

    @tool(result_as_answer=True)
    async def slow_verdict(x: int) -> str:
        """The first qualifying call in the model's order, and the last to finish."""
        await asyncio.sleep(0.05)
        finished.append("slow")
        return f"slow {x}"

    @tool(result_as_answer=True)
    def quick_verdict(x: int) -> str:
        """Finishes first."""
        finished.append("quick")
        return f"quick {x}"

    model = FunctionModel(
        lambda m, t: [
            {"name": "broken_verdict", "args": {"x": 0}},
            {"name": "slow_verdict", "args": {"x": 1}},
            {"name": "add", "args": {"a": 1, "b": 1}},
            {"name": "quick_verdict", "args": {"x": 2}},
        ]
    )
    agent = Agent(role="Judge", goal="Decide", llm=model, tools=[broken_verdict, slow_verdict, add, quick_verdict])
    out = await agent.aexecute_task(task("decide"))

    assert model.calls == 1  # no model call after the tools returned
    assert out.raw == "slow 1"
    assert finished.index("quick") < finished.index("slow")  # finishing order does not matter, the model's does
    assert [(r.name, r.status) for r in out.tool_calls] == [
        ("broken_verdict", "error"),
        ("slow_verdict", "success"),
        ("add", "success"),
        ("quick_verdict", "success"),
    ]


class Weather(BaseModel):
    city: str
    temp: float


async def test_tool_results_go_back_as_text_strings_as_is_and_the_rest_as_json():
    @tool
    def text() -> str:
        """A string."""
        return 'He said "hi"'

    @tool
    def mapping() -> dict:
        """A dict."""
        return {"b": 1, "a": [True, None]}

    @tool
    def items() -> list:
        """A list."""
        return ["x", 2]

    @tool
    def model_result() -> Weather:
        """A pydantic model."""
        return Weather(city="Oslo", temp=3.5)

    seen = []

    def fn(messages, tools):
        if last(messages)["role"] == "tool":
            seen.extend(m for m in messages if m["role"] == "tool")
            return "done"
        return [{"name": name, "args": {}, "id": f"id_{name}"} for name in ("text", "mapping", "items", "model_result")]

    agent = Agent(role="R", goal="G", llm=FunctionModel(fn), tools=[text, mapping, items, model_result])
    await agent.aexecute_task(task())
    assert seen == [
        {"role": "tool", "tool_call_id": "id_text", "content": 'He said "hi"'},
        {"role": "tool", "tool_call_id": "id_mapping", "content": '{"b": 1, "a": [true, null]}'},
        {"role": "tool", "tool_call_id": "id_items", "content": '["x", 2]'},
        {"role": "tool", "tool_call_id": "id_model_result", "content": '{"city":"Oslo","temp":3.5}'},
    ]
    assert json.loads(seen[3]["content"]) == {"city": "Oslo", "temp": 3.5}


async def test_sync_tools_never_block_the_agents_event_loop():
    loop_moved = threading.Event()

    @tool
    def wait_for_the_loop() -> str:
        """Blocks its thread until the event loop has run something else."""
        return "unblocked" if loop_moved.wait(5) else "the loop was blocked"

    async def elsewhere() -> None:
        await asyncio.sleep(0.01)
        loop_moved.set()

    model = FunctionModel(
        lambda m, t: last(m)["content"] if last(m)["role"] == "tool" else [{"name": "wait_for_the_loop", "args": {}}]
    )
    agent = Agent(role="R", goal="G", llm=model, tools=[wait_for_the_loop])
    out, _ = await asyncio.gather(agent.aexecute_task(task()), elsewhere())
    assert out.raw == "unblocked"


async def test_templates_replace_both_prompts_and_the_tools_still_reach_the_model():
    seen = []

    def fn(messages, tools):
        seen.append(messages)
        return "ok"

    agent = Agent(
        role="Analyst",
        goal="Count",
        backstory="Careful.",
        llm=FunctionModel(fn),
        tools=[add],
        system_template="[{role}|{goal}|{backstory}]",
        prompt_template="<<{description} -> {expected_output}>>",
    )
    await agent.aexecute_task(task())
    crewai = Agent(
        role="Analyst",
        goal="Count",
        llm=FunctionModel(fn),
        tools=[add],
        system_template="SYS({{ .System }})",
        prompt_template="USER({{ .Prompt }})",
    )
    await crewai.aexecute_task(task())

    (system, user), (crewai_system, crewai_user) = seen
    assert system["content"].startswith("[Analyst|Count|Careful.]")
    assert "Tools you can call: add." in system["content"]  # a template without {tools} still gets the tool block
    assert user["content"] == "<<Add 3 and 4 -> a number>>"
    assert crewai_system["content"].startswith("SYS(You are Analyst.")
    assert "Tools you can call: add." in crewai_system["content"]
    assert crewai_user["content"] == "USER(Task: Add 3 and 4\n\nExpected output: a number)"
