"""The manager's delegation tools: coworkers run their own loop through the shared executor."""

import pytest

from crew.agent.agent import Agent
from crew.agent.delegation import ASK_QUESTION, DELEGATE_WORK, delegation_tools
from crew.tasks.task import Task
from crew.testing import FunctionModel
from crew.tools import ToolExecutor, tool

runs = []


@tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    runs.append(topic)
    return f"notes on {topic}"


def coworker_model(prefix):
    def fn(messages, tools):
        if messages[-1]["role"] == "tool":
            return f"{prefix}: {messages[-1]['content']}"
        if tools:
            return [{"name": "lookup", "args": {"topic": "cats"}}]
        return f"{prefix} answers: {messages[1]['content'].splitlines()[0]}"

    return FunctionModel(fn)


def manager_model(calls):
    def fn(messages, tools):
        results = [m["content"] for m in messages if m["role"] == "tool"]
        if results:
            return " || ".join(results)
        return calls

    return FunctionModel(fn)


@pytest.fixture(autouse=True)
def _clear_runs():
    runs.clear()


async def test_manager_delegates_to_two_coworkers_through_one_executor():
    researcher = Agent(role="Researcher", goal="Research", llm=coworker_model("R"), tools=[lookup])
    writer = Agent(role="Writer", goal="Write", llm=coworker_model("W"), tools=[lookup])
    executor = ToolExecutor([lookup])
    tools = delegation_tools([researcher, writer], executor=executor)
    assert [t.name for t in tools] == [DELEGATE_WORK, ASK_QUESTION]
    assert "Researcher, Writer" in tools[0].description

    manager = Agent(
        role="Manager",
        goal="Manage",
        llm=manager_model(
            [
                {
                    "name": tools[0].tool_name,
                    "args": {"task": "Research cats", "context": "for a blog", "coworker": "researcher"},
                },
                {
                    "name": tools[1].tool_name,
                    "args": {"question": "Title?", "context": "cat blog", "coworker": " 'Writer' "},
                },
            ]
        ),
    )
    out = await manager.aexecute_task(
        Task(name="blog", description="Blog about cats", expected_output="post"),
        tools=tools,
        executor=executor,
        run_id="run-h",
    )

    assert out.raw == "R: notes on cats || W: notes on cats"
    assert runs == ["cats"]  # the writer's identical lookup was a cache hit in the shared executor
    assert executor.stats["lookup"].cache_hits == 1
    # manager: 2 calls; each coworker: 2 calls -> all six requests count toward the manager's task
    assert out.usage.requests == 6
    assert [r.name for r in out.tool_calls] == [tools[0].tool_name, tools[1].tool_name]


async def test_delegated_task_text_and_unknown_coworker():
    seen = []

    def writer_fn(messages, tools):
        seen.append(messages[1]["content"])
        return "done"

    writer = Agent(role="Writer", goal="Write", llm=FunctionModel(writer_fn))
    tools = delegation_tools([writer])
    manager = Agent(
        role="Manager",
        goal="Manage",
        llm=manager_model(
            [
                {"name": DELEGATE_WORK, "args": {"task": "Write a haiku", "context": "about rain", "coworker": "Poet"}},
                {
                    "name": DELEGATE_WORK,
                    "args": {"task": "Write a haiku", "context": "about rain", "coworker": "WRITER"},
                },
            ]
        ),
    )
    out = await manager.aexecute_task(Task(name="main", description="haiku", expected_output="a haiku"), tools=tools)

    refused, done = out.raw.split(" || ")
    assert "unknown coworker 'Poet'; choose one of: Writer" in refused and done == "done"
    assert seen == [
        "Task: Write a haiku\n\nContext:\nabout rain\n\nExpected output: A complete answer to the task, usable as is."
    ]


async def test_coworker_without_llm_uses_the_given_default():
    writer = Agent(role="Writer", goal="Write")
    tools = delegation_tools([writer], llm=FunctionModel(lambda m, t: "from default model"))
    manager = Agent(
        role="Manager",
        goal="Manage",
        llm=manager_model([{"name": ASK_QUESTION, "args": {"question": "Why?", "context": "", "coworker": "Writer"}}]),
    )
    out = await manager.aexecute_task(Task(description="ask", expected_output="answer"), tools=tools)
    assert out.raw == "from default model"


def test_delegation_needs_coworkers():
    with pytest.raises(ValueError, match="at least one coworker"):
        delegation_tools([])


def test_the_coworker_argument_lists_the_coworkers_and_still_matches_loosely():
    agents = [
        Agent(role="Researcher", goal="g"),
        Agent(role="Writer", goal="g", name="w-long"),
        Agent(role="Writer", goal="g", name="w-short"),
    ]
    delegate, ask = delegation_tools(agents)
    for t in (delegate, ask):
        prop = t.to_openai_tool()["function"]["parameters"]["properties"]["coworker"]
        assert prop["enum"] == ["Researcher", "w-long", "w-short"]  # a shared role is listed by name
        assert '"enum": ["Researcher", "w-long", "w-short"]' in t.describe()
    assert delegate.validate_args({"task": "t", "context": "c", "coworker": "researcher"})["coworker"] == "researcher"
    assert "Researcher, w-long, w-short" in delegate.description


async def test_a_test_model_manager_picks_a_listed_coworker():
    seen = []

    def reply(role):
        return FunctionModel(lambda messages, tools: seen.append(role) or f"{role} answers")

    coworkers = [
        Agent(role="Researcher", goal="g", llm=reply("Researcher")),
        Agent(role="Writer", goal="g", llm=reply("Writer")),
    ]
    tools = delegation_tools(coworkers)
    manager = Agent(role="Manager", goal="Manage", llm="test")
    out = await manager.aexecute_task(Task(name="main", description="plan", expected_output="plan"), tools=tools)
    assert [r.status for r in out.tool_calls] == ["success", "success"]
    assert len(seen) == 2 and set(seen) <= {"Researcher", "Writer"}
    assert out.usage.requests == 4  # the manager's two turns and one per delegated piece of work


async def test_on_output_and_step_callback_see_each_piece_of_delegated_work():
    outputs, steps = [], []

    async def on_output(output, context):  # async callbacks are awaited
        outputs.append((output.agent, output.name, output.raw, output.usage.requests, context.task, context.agent))

    researcher = Agent(role="Researcher", goal="Research", llm=coworker_model("R"), tools=[lookup])
    tools = delegation_tools([researcher], on_output=on_output, step_callback=steps.append)
    manager = Agent(
        role="Manager",
        goal="Manage",
        llm=manager_model(
            [
                {"name": DELEGATE_WORK, "args": {"task": "Research cats", "context": "", "coworker": "Researcher"}},
                {"name": ASK_QUESTION, "args": {"question": "Dogs?", "context": "", "coworker": "researcher"}},
            ]
        ),
    )
    out = await manager.aexecute_task(Task(name="blog", description="Blog", expected_output="post"), tools=tools)

    assert out.raw == "R: notes on cats || R: notes on cats"
    assert (
        sorted(outputs)
        == [
            ("Researcher", "blog -> Researcher", "R: notes on cats", 2, "blog", "Manager"),
        ]
        * 2
    )
    # the two pieces of work ran at the same time: their turns interleave
    turns = sorted((s.agent, s.task, s.kind) for s in steps)
    assert turns == [("Researcher", "blog -> Researcher", kind) for kind in ["final_answer"] * 2 + ["tool_calls"] * 2]
    assert out.usage.requests == 2 + 4  # the manager's usage holds its coworkers' (the task's whole cost)


async def test_coworkers_sharing_a_role_and_name_are_listed_once_and_the_others_stay_reachable():
    seen = []

    def agent(role, answer):
        return Agent(role=role, goal="g", llm=FunctionModel(lambda m, t: seen.append(answer) or answer))

    tools = delegation_tools([agent("Writer", "w1"), agent("Writer", "w2"), agent("Editor", "ed")])
    assert tools[0].to_openai_tool()["function"]["parameters"]["properties"]["coworker"]["enum"] == ["Writer", "Editor"]
    manager = Agent(
        role="Manager",
        goal="Manage",
        llm=manager_model([{"name": DELEGATE_WORK, "args": {"task": "edit", "context": "", "coworker": "editor"}}]),
    )
    out = await manager.aexecute_task(Task(description="edit it", expected_output="text"), tools=tools)
    assert out.raw == "ed" and seen == ["ed"]
