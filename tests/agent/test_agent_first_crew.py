"""The first crew end to end (issue 3): outputs, context, every model form, errors through kickoff."""

import json

import pytest
from pydantic import BaseModel

from crew import Agent, Crew, CrewOutput, Task, TaskOutput
from crew.common.usage import Usage
from crew.errors import CrewRunError, LLMError
from crew.models import LLM
from crew.testing import FunctionModel, Reply, TestModel
from crew.tools import tool


class Facts(BaseModel):
    topic: str
    facts: list[str]


class Verdict(BaseModel):
    ok: bool


def local_llm(server, **kw) -> LLM:
    return LLM("openai/gpt-4o-mini", api_base=server.url, api_key="sk-test", retry_base_delay=0.01, **kw)


def test_kickoff_runs_in_order_and_returns_every_output_field():
    seen = []

    def writer(messages, tools):
        user = messages[1]["content"]
        seen.append(user)
        if user.startswith("Task: Research"):
            return '{"topic": "cats", "facts": ["sleep a lot"]}'
        if user.startswith("Task: Check"):
            return '{"ok": true}'
        return "Cats sleep a lot."

    researcher = Agent(role="Researcher", goal="Find facts", llm=FunctionModel(writer, model="m-r"))
    editor = Agent(role="Editor", goal="Write", llm=FunctionModel(writer, model="m-e"))
    research = Task(
        name="research",
        description="Research {topic}",
        expected_output="facts",
        agent=researcher,
        output_pydantic=Facts,
    )
    check = Task(
        name="check", description="Check the facts", expected_output="a verdict", agent=editor, output_json=Verdict
    )
    write = Task(
        name="write", description="Write one line", expected_output="a sentence", agent=editor, context=[research]
    )
    out = Crew(agents=[researcher, editor], tasks=[research, check, write]).kickoff(inputs={"topic": "cats"})

    assert isinstance(out, CrewOutput) and out.raw == "Cats sleep a lot."
    assert (out.pydantic, out.json_dict) == (None, None)  # the last task is plain text
    first, second, third = out.tasks_output
    assert all(isinstance(o, TaskOutput) for o in out.tasks_output)
    assert [(o.name, o.agent) for o in out.tasks_output] == [
        ("research", "Researcher"),
        ("check", "Editor"),
        ("write", "Editor"),
    ]
    assert first.pydantic == Facts(topic="cats", facts=["sleep a lot"]) and first.json_dict is None
    assert json.loads(first.raw) == {"topic": "cats", "facts": ["sleep a lot"]}
    assert second.json_dict == {"ok": True} and second.pydantic is None
    assert third.raw == "Cats sleep a lot." and third.pydantic is None and third.json_dict is None
    assert out.usage == Usage.total([o.usage for o in out.tasks_output]) and out.usage.requests == 3
    # in order; without a context a task sees every earlier output, with one only that context
    assert [u.split("\n")[0] for u in seen] == ["Task: Research cats", "Task: Check the facts", "Task: Write one line"]
    assert "## research" not in seen[0]
    assert "## research" in seen[1] and "sleep a lot" in seen[1]
    assert "## research" in seen[2] and "## check" not in seen[2]


def test_kickoff_raises_an_error_chained_to_the_llm_error(openai_server):
    openai_server.handler = lambda request: Reply.error(500, "upstream down")
    agent = Agent(role="Writer", goal="Write", llm=local_llm(openai_server, num_retries=1))
    crew = Crew(agents=[agent], tasks=[Task(name="draft", description="Draft", expected_output="text", agent=agent)])
    with pytest.raises((LLMError, CrewRunError)) as caught:
        crew.kickoff()
    error = caught.value
    llm_error = error if isinstance(error, LLMError) else error.__cause__
    assert isinstance(llm_error, LLMError) and llm_error.model == "openai/gpt-4o-mini"
    assert "upstream down" in str(error) and "'draft'" in str(error)
    assert len(openai_server.requests) == 2  # one attempt and the one retry


@tool
def lookup(city: str) -> str:
    """Look a city up."""
    return f"{city}: sunny"


def test_every_model_form_works_as_an_agents_llm(openai_server):
    openai_server.handler = lambda request: Reply.text("from the server")
    forms = {
        "string": "test",
        "LLM": local_llm(openai_server),
        "TestModel": TestModel(final_answer="from a TestModel", call_tools=False),
        "FunctionModel": FunctionModel(lambda messages, tools: "from a FunctionModel"),
    }
    agents = [Agent(role=kind, goal="Answer", llm=model, tools=[lookup]) for kind, model in forms.items()]
    tasks = [Task(name=a.role, description="Answer", expected_output="text", agent=a) for a in agents]
    out = Crew(agents=agents, tasks=tasks).kickoff()
    raws = {o.name: o.raw for o in out.tasks_output}
    assert raws["string"].startswith("Test answer for:")
    assert (raws["LLM"], raws["TestModel"], raws["FunctionModel"]) == (
        "from the server",
        "from a TestModel",
        "from a FunctionModel",
    )
    assert len(openai_server.requests) == 1


def test_every_model_form_works_as_the_manager_llm(openai_server):
    researcher = Agent(role="Researcher", goal="Find facts", llm=TestModel(final_answer="bees dance", call_tools=False))

    def crew_with(manager_llm):
        report = Task(name="report", description="Report on bees", expected_output="a report")
        return Crew(agents=[researcher], tasks=[report], process="hierarchical", manager_llm=manager_llm)

    openai_server.enqueue(
        Reply.tools(
            {
                "name": "Delegate_work_to_coworker",
                "id": "call_d",
                "args": {"task": "find facts on bees", "context": "a report", "coworker": "Researcher"},
            }
        ),
        Reply.text("Report: bees dance."),
    )
    over_http = crew_with(local_llm(openai_server)).kickoff()
    assert over_http.raw == "Report: bees dance."
    tool_message = openai_server.requests[1].messages[-1]
    assert tool_message == {"role": "tool", "tool_call_id": "call_d", "content": "bees dance"}

    def manager(messages, tools):
        if messages[-1]["role"] == "tool":
            return f"Report: {messages[-1]['content']}"
        return [
            {
                "name": "Delegate work to coworker",
                "args": {"task": "facts", "context": "bees", "coworker": "Researcher"},
            }
        ]

    assert crew_with(FunctionModel(manager)).kickoff().raw == "Report: bees dance"
    for model in ("test", TestModel(seed=1)):
        out = crew_with(model).kickoff()
        assert out.tool_stats and sum(s.runs for s in out.tool_stats.values()) >= 1
        assert "bees dance" in out.raw  # TestModel's answer names the coworker's result it saw


def test_an_agent_works_on_a_prompt_as_on_a_task_and_refuses_anything_else():
    """``astream`` took a prompt; ``execute_task("...")`` failed with "'str' object has no attribute 'tools'"."""
    seen = []
    agent = Agent(role="R", goal="G", llm=FunctionModel(lambda messages, tools: seen.append(messages) or "done"))
    out = agent.execute_task("Summarise the week.")
    assert out.raw == "done" and "Summarise the week." in seen[0][-1]["content"]
    with pytest.raises(TypeError, match="a Task or a prompt"):
        agent.execute_task(42)  # type: ignore[arg-type]
