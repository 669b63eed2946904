"""Task fields, names and {placeholder} filling: every mistake is caught before a model runs."""

import pytest
from crew_testkit import Recorder
from pydantic import BaseModel, ValidationError

from crew import Agent, Crew, Task
from crew.errors import ConfigError, GraphError, MissingInputError
from crew.tasks.interpolate import placeholders
from crew.testing import FunctionModel
from crew.tools import tool


class Report(BaseModel):
    title: str


def test_defaults_match_crewai():
    task = Task(description="d", expected_output="e")
    assert task.max_retries == 0
    assert task.guardrail_max_retries == 3
    assert (task.async_execution, task.human_input) == (False, False)
    assert task.name is None and task.context is None and task.tools is None and task.timeout is None


def ping() -> str:
    """Ping the server."""
    return "pong"


def test_plain_functions_in_tools_become_tools():
    task = Task(description="d", tools=[ping, tool(ping)])
    assert [t.name for t in task.tools] == ["ping"]  # one function given twice is one tool


def test_two_different_tools_under_one_name_are_refused_where_they_are_given():
    """A model calls tools by name: the second would be unreachable, its calls sent to the first."""

    @tool("lookup")
    def weather(city: str) -> str:
        """Weather."""
        return city

    @tool("Lookup")
    def population(town: str) -> str:
        """Population."""
        return town

    for make in (
        lambda tools: Task(description="d", tools=tools),
        lambda tools: Agent(role="r", goal="g", tools=tools),
    ):
        with pytest.raises(ValidationError, match=r"two different tools answer to the name 'Lookup' \('lookup' from"):
            make([weather, population])


def test_a_crew_says_what_its_lists_and_cache_take():
    """``tasks=Task(...)`` gave 17 errors about the task's own fields; ``cache="x.db"`` failed only at kickoff."""
    agent = Agent(role="r", goal="g", llm="test")
    task = Task(description="d", agent=agent)
    with pytest.raises(ValidationError, match=r"(?s)1 validation error.*tasks takes a list: wrap the one Task"):
        Crew(agents=[agent], tasks=task)
    with pytest.raises(ValidationError, match=r"agents takes a list: wrap the one Agent"):
        Crew(agents=agent, tasks=[task])
    with pytest.raises(
        ValidationError, match=r"cache must be true \(in memory\), false, or a backend .* not str 'x.db'"
    ):
        Crew(agents=[agent], tasks=[task], cache="x.db")
    from crew.tools.cache import SQLiteCache

    assert isinstance(Crew(agents=[agent], tasks=[task], cache=SQLiteCache(":memory:")).cache, SQLiteCache)


def test_invalid_fields_are_rejected_with_the_field_named():
    with pytest.raises(ValidationError, match="output_pydantic or output_json"):
        Task(description="d", output_pydantic=Report, output_json=Report)
    with pytest.raises(ValidationError, match="max_retries"):
        Task(description="d", max_retries=-1)
    with pytest.raises(ValidationError, match="timeout"):
        Task(description="d", timeout=0)
    with pytest.raises(
        ValidationError, match=r"tools\.1\n  Input should be a valid dictionary or instance of BaseTool"
    ):
        Task(description="d", tools=[ping, "search"])
    with pytest.raises(ValidationError, match="blank"):
        Task(description="d", name="  ")
    # an agent's role is not an agent: it failed at kickoff with "'str' object has no attribute 'llm'"
    with pytest.raises(ValidationError, match=r"must be an Agent, not str 'Writer': pass the Agent itself"):
        Task(description="d", agent="Writer")
    with pytest.raises(ValidationError, match="must be an Agent, not int 5"):
        Task(description="d", agent=5)


def test_default_names_come_from_positions_and_must_be_unique():
    rec = Recorder()
    agent = rec.agent()
    crew = Crew(
        agents=[agent],
        tasks=[
            Task(description="one", agent=agent),
            Task(name="named", description="two", agent=agent),
            Task(description="three", agent=agent),
        ],
    )
    out = crew.kickoff()
    assert [o.name for o in out.tasks_output] == ["task_1", "named", "task_3"]
    with pytest.raises(GraphError, match=r"task name 'task_2' is used twice \(tasks 1 and 2\)"):
        Crew(
            agents=[agent],
            tasks=[Task(name="task_2", description="a", agent=agent), Task(description="b", agent=agent)],
        )


def test_placeholders_fill_task_and_agent_texts_and_the_output_path(tmp_path):
    seen = {}

    def reply(messages, tools):
        seen["system"], seen["user"] = messages[0]["content"], messages[1]["content"]
        return "done"

    agent = Agent(role="{topic} researcher", goal="know {topic}", backstory="years: {years}", llm=FunctionModel(reply))
    task = Task(
        description='Write about {topic} in {year} ({{literal}}, {"json": 1})',
        expected_output="{n} bullet points",
        agent=agent,
        output_file=str(tmp_path / "{topic}" / "report-{year}.md"),
    )
    out = Crew(agents=[agent], tasks=[task]).kickoff({"topic": "AI", "year": 2025, "n": 3, "years": [1, 2]})
    assert 'Write about AI in 2025 ({literal}, {"json": 1})' in seen["user"]
    assert "3 bullet points" in seen["user"]
    assert "AI researcher" in seen["system"] and "know AI" in seen["system"] and "years: [1, 2]" in seen["system"]
    assert (tmp_path / "AI" / "report-2025.md").read_text() == "done"
    assert out.tasks_output[0].description.startswith("Write about AI")
    # the declarations themselves are untouched: the crew can be kicked off again with other inputs
    assert task.description.startswith("Write about {topic}") and agent.role == "{topic} researcher"


def test_missing_inputs_fail_before_any_model_call_naming_placeholder_and_place():
    rec = Recorder()
    agent = Agent(role="{domain} expert", goal="g", llm=rec.model())
    tasks = [
        Task(name="research", description="Study {topic}", expected_output="notes on {topic}", agent=agent),
        Task(name="write", description="Write", expected_output="text", agent=agent, output_file="out/{slug}.md"),
    ]
    with pytest.raises(MissingInputError) as info:
        Crew(agents=[agent], tasks=tasks).kickoff({"unused": 1})
    errors = info.value.errors
    assert "missing input 'domain' for {domain} in agent '{domain} expert' role" in errors
    assert "missing input 'topic' for {topic} in task 'research' description" in errors
    assert "missing input 'topic' for {topic} in task 'research' expected_output" in errors
    assert "missing input 'slug' for {slug} in task 'write' output_file" in errors
    assert len(errors) == 4
    assert rec.calls == []


def test_escaped_braces_are_literal_and_not_placeholders():
    assert placeholders('{a} {{b}} {c-d} { e } {"f": 1} {1x}') == ["a", "c-d"]
    task = Task(description="{{not_an_input}} and {x}").interpolate({"x": "y"})
    assert task.description == "{not_an_input} and y"


def test_placeholder_names_may_be_in_any_script():
    """``{città}`` was left as it was, silently: names were ASCII only."""
    assert placeholders("{città} {名前} {_x} {2x} {-y}") == ["città", "名前", "_x"]
    task = Task(description="Écris sur {città}", output_file="sortie/{città}.md").interpolate({"città": "Roma"})
    assert (task.description, task.output_file) == ("Écris sur Roma", "sortie/Roma.md")


def test_an_input_may_not_move_an_output_file_out_of_its_directory(tmp_path):
    """Inputs often come from outside (a web form): "out/{topic}.md" must stay in out/."""
    rec = Recorder()
    agent = rec.agent()
    task = Task(name="t", description="t about {topic}", agent=agent, output_file=str(tmp_path / "out" / "{topic}.md"))
    crew = Crew(agents=[agent], tasks=[task])
    for topic in ("../escape", "a/../../escape", "..\\escape", ".."):
        with pytest.raises(ConfigError, match=r"input 'topic' \(.*\) would move the output_file of task 't' out"):
            crew.kickoff({"topic": topic})
    assert rec.calls == [] and not list(tmp_path.rglob("*.md"))
    crew.kickoff({"topic": "sub/dir..name"})  # a nested path and dots inside a name are fine
    assert (tmp_path / "out" / "sub" / "dir..name.md").read_text() == "output of t"


def test_a_misspelt_keyword_is_an_error_and_crewai_only_keywords_a_warning():
    """As in YAML: `Crew(proces="graph")` must not quietly run the sequential process."""
    agent = Agent(role="w", goal="g", llm="test")
    with pytest.raises(ValidationError, match=r"unknown keyword argument 'proces' \(did you mean 'process'\?\)"):
        Crew(agents=[agent], tasks=[Task(description="d", agent=agent)], proces="graph")
    with pytest.raises(ValidationError, match=r"unknown keyword argument 'max_retry' \(did you mean 'max_retries'\?\)"):
        Task(description="d", agent=agent, max_retry=2)
    with pytest.warns(UserWarning, match=r"^Task: CrewAI's 'markdown' is not supported here and ignored$") as caught:
        task = Task(description="d", agent=agent, markdown=True)
    assert caught[0].filename == __file__  # points at the caller's line
    with pytest.warns(
        UserWarning, match=r"^Crew: CrewAI's 'share_crew', 'planning' are not supported here and ignored$"
    ):
        crew = Crew(agents=[agent], tasks=[task], share_crew=True, planning=True)
    assert crew.kickoff().tasks_output[0].status == "done"
    with pytest.raises(ValidationError, match=r"unknown keyword argument 'max_itr' \(did you mean 'max_iter'\?\)"):
        Agent(role="w", goal="g", max_itr=3)
    with pytest.warns(UserWarning, match=r"^Agent: CrewAI's 'max_rpm' is not supported here and ignored$") as caught:
        Agent(role="w", goal="g", max_rpm=10)
    assert caught[0].filename == __file__
