"""Everything a crew is made of pickles, so it can be shipped to another process (a Ray worker);
what cannot is named, with the reason, before anything is sent."""

from __future__ import annotations

import pickle
import threading

import pytest
import shipping_kit as kit

from crew.backends.shipping import check_shippable
from crew.errors import NotShippableError
from crew.models import complete_sync
from crew.testing import FunctionModel, TestModel
from crew.tools import ToolExecutor


def roundtrip(obj):
    return pickle.loads(pickle.dumps(obj))


def test_testmodel_and_functionmodel_pickle_and_get_a_lock_of_their_own():
    model = TestModel(seed=3, final_answer="done")
    complete_sync(model, [{"role": "user", "content": "x"}])
    copy = roundtrip(model)
    assert (copy.seed, copy.final_answer, copy.calls) == (3, "done", 1)
    assert isinstance(copy._lock, type(threading.Lock())) and copy._lock is not model._lock
    complete_sync(copy, [{"role": "user", "content": "y"}])
    assert (copy.calls, model.calls) == (2, 1)
    fm = roundtrip(FunctionModel(kit.reply, latency=0.5))
    assert fm.fn is kit.reply and fm.latency == 0.5


@pytest.mark.parametrize(
    ("tool", "call", "expected"),
    [
        (kit.shout, {"text": "hi"}, "HI"),
        (kit.Counter(), {"text": "four"}, "4"),
    ],
)
def test_tools_with_inferred_schemas_pickle_and_run_the_same(tool, call, expected):
    assert str(tool.run(**call)) == expected  # a tool that ran holds caches (its validator): they stay behind
    copy = roundtrip(tool)
    assert copy.args_schema is not tool.args_schema  # rebuilt on arrival, not looked up by name
    assert copy.args_schema.model_json_schema() == tool.args_schema.model_json_schema()
    assert copy.description == tool.description
    assert ToolExecutor([copy]).execute({"name": copy.name, "args": call}).content == expected
    bad = ToolExecutor([copy]).execute({"name": copy.name, "args": {}})
    assert bad.status == "error" and "text" in bad.content  # validation still names the argument


def test_docstring_descriptions_and_json_schema_tools_survive_cloudpickle():
    cloudpickle = pytest.importorskip("ray.cloudpickle")
    described = cloudpickle.loads(cloudpickle.dumps(kit.describe))
    props = described.args_schema.model_json_schema()["properties"]
    assert props["topic"]["description"] == "what to describe" and props["words"]["default"] == 3
    assert described.run(topic="x", words=2) == "x x"
    lookup = cloudpickle.loads(cloudpickle.dumps(kit.lookup))  # a lambda with a JSON-schema dict
    assert lookup.args_schema.model_json_schema()["required"] == ["key"]
    assert lookup.run(key="k") == "value of k"


def test_a_crew_and_its_output_pickle():
    crew = kit.topic_crew([kit.shout], max_rpm=100)
    copy = roundtrip(crew)
    out = copy.kickoff({"topic": "bees"})
    assert out.raw == crew.kickoff({"topic": "bees"}).raw
    again = roundtrip(out)
    assert again.raw == out.raw and again.usage == out.usage and again.tasks_output[0].name == "task_1"


def test_an_unshippable_tool_is_named_with_its_field_and_the_reason():
    crew = kit.topic_crew([kit.shout, kit.database_tool()])
    with pytest.raises(NotShippableError) as info:
        check_shippable(crew, pickle.dumps)
    message = str(info.value)
    assert message.startswith("tool 'database' (agent 'writer') cannot be sent to Ray workers: ")
    assert "its field 'conn' holds a sqlite3.Connection" in message
    assert "cannot pickle 'sqlite3.Connection' object" in message
    assert "instead of holding them on the tool, or run with backend='local'" in message
    assert check_shippable(kit.topic_crew([kit.shout]), pickle.dumps)  # the rest ships


def test_an_unshippable_crew_part_other_than_a_tool_is_named():
    lock = threading.Lock()
    crew = kit.topic_crew([kit.shout], step_callback=lambda step: lock)
    with pytest.raises(NotShippableError, match=r"the crew's step_callback cannot be sent to Ray workers: "):
        check_shippable(crew, pickle.dumps)  # a lambda: plain pickle cannot name it


def _clock_server(calls: list[str]):
    """A real MCP server (the official SDK, in process) that notes every call it gets."""
    from mcp.server.mcpserver import MCPServer as SDKServer

    sdk = SDKServer("clock")

    @sdk.tool()
    def now() -> str:
        """The time of day."""
        calls.append("now")
        return "noon"

    return sdk


def test_mcp_servers_do_not_travel_to_ray_workers_and_say_so_before_anything_runs():
    pytest.importorskip("mcp")
    from crew import Agent, Crew, Task
    from crew.mcp import MCPServer

    calls: list[str] = []
    server = MCPServer.in_process(_clock_server(calls), name="clock")
    agent = Agent(role="Timekeeper", goal="tell the time", llm="test", mcp=[server])
    task = Task(description="What time is it?", expected_output="a time", agent=agent)
    crew = Crew(agents=[agent], tasks=[task], process="graph", backend="ray")
    with pytest.raises(NotShippableError) as caught:
        crew.kickoff()
    message = str(caught.value)
    assert "agent 'Timekeeper' has MCP server 'clock'" in message and "backend='local'" in message
    assert "_thread.lock" not in message and calls == [] and not server.is_open
    with pytest.raises(NotShippableError, match="agent 'Timekeeper' has MCP server 'clock'"):
        check_shippable(crew, pickle.dumps)  # kickoff_for_each(backend="ray") asks this before Ray starts
