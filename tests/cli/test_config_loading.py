"""Loading crews from YAML: the same models as Python, tools by import path, models, inputs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_kit import EXAMPLES, REPO

from crew import Agent, Crew, Task
from crew.common.keywords import CREWAI_KEYS
from crew.config import crew_json_schema, load_crew, load_project
from crew.config.fields import fields_of
from crew.config.loader import load_yaml
from crew.errors import ConfigError
from crew.tools.base import BaseTool

SIMPLE = """
    name: simple
    llm: test
    tools:
      search: tools:search
    agents:
      writer:
        role: Writer of {topic}
        goal: Write about {topic}
        backstory: Writes.
        tools: [search]
    tasks:
      draft:
        description: Draft a note on {topic}
        expected_output: A note
        agent: writer
        output_file: notes/{topic}.md
    """


def test_loading_yaml_gives_the_same_models_as_python(crew_dir, tmp_path, monkeypatch) -> None:
    crew = load_crew(crew_dir({"crew.yaml": SIMPLE}))
    assert isinstance(crew, Crew) and isinstance(crew.agents[0], Agent) and isinstance(crew.tasks[0], Task)
    from tools import search  # the crew folder's own module, imported by the loader

    agent = Agent(
        name="writer", role="Writer of {topic}", goal="Write about {topic}", backstory="Writes.", tools=[search]
    )
    task = Task(
        name="draft",
        description="Draft a note on {topic}",
        expected_output="A note",
        agent=agent,
        output_file="notes/{topic}.md",
    )
    by_hand = Crew(name="simple", llm="test", agents=[agent], tasks=[task])
    skip = {"tools", "agent", "agents", "tasks"}
    assert crew.model_dump(exclude=skip) == by_hand.model_dump(exclude=skip)
    assert crew.agents[0].model_dump(exclude=skip) == agent.model_dump(exclude=skip)
    assert crew.tasks[0].model_dump(exclude=skip) == task.model_dump(exclude=skip)
    assert [t.name for t in crew.agents[0].tools] == ["search"]
    assert crew.tasks[0].agent is crew.agents[0]
    monkeypatch.chdir(tmp_path)  # and they behave the same: same prompts, tool calls and output
    from_yaml, from_python = crew.kickoff({"topic": "tea"}), by_hand.kickoff({"topic": "tea"})
    assert from_yaml.raw == from_python.raw and from_yaml.usage == from_python.usage
    assert [c.model_dump(exclude={"duration"}) for c in from_yaml.tasks_output[0].tool_calls] == [
        c.model_dump(exclude={"duration"}) for c in from_python.tasks_output[0].tool_calls
    ]
    assert (tmp_path / "notes" / "tea.md").read_text() == from_python.raw


def test_tools_resolve_from_every_supported_kind_of_object(crew_dir) -> None:
    project = load_project(
        crew_dir(
            {
                "crew.yaml": """
        llm: test
        tools:
          web: tools:search              # a @tool object, renamed to its YAML key
          loud: tools:shout              # a plain documented function, wrapped
          count: tools:Counter           # a BaseTool subclass, instantiated
          count2: tools:counter_instance # a BaseTool instance, copied
          limited:
            import: tools:search
            max_usage_count: 2
            result_as_answer: true
            cache_function: tools:only_ok
        agents:
          writer: {role: W, goal: G, tools: [web, loud, count, count2, limited]}
        tasks:
          draft: {description: D, agent: writer}
        """
            }
        )
    )
    tools = project.tools
    assert all(isinstance(t, BaseTool) for t in tools.values())
    assert {name: t.name for name, t in tools.items()} == {n: n for n in tools}
    assert tools["loud"].run(text="hi") == "HI"
    assert tools["count"].run(text="four") == 4 and tools["count2"].run(text="abc") == 3
    limited = tools["limited"]
    assert (limited.max_usage_count, limited.result_as_answer) == (2, True)
    assert limited.cache_function({}, "ok then") and not limited.cache_function({}, "nope")
    import tools as module  # the originals are untouched: YAML settings apply to copies

    assert module.search.name == "search" and module.search.max_usage_count is None
    assert module.counter_instance.name == "instance_counter"


def test_model_precedence_agent_then_crew_then_env_and_flag_overrides_all(crew_dir, monkeypatch) -> None:
    folder = crew_dir(
        {
            "crew.yaml": """
        process: hierarchical
        agents:
          own: {role: A, goal: G, llm: openai/gpt-4o-mini, function_calling_llm: openai/gpt-4o}
          inherits: {role: B, goal: G}
        tasks:
          t: {description: D}
        """
        }
    )
    monkeypatch.setenv("CREW_LLM", "test")
    crew = load_crew(folder)
    assert [a.llm for a in crew.agents] == ["openai/gpt-4o-mini", None]
    assert crew.llm == "test"  # inherited by "inherits" and by the manager at run time
    (folder / "crew.yaml").write_text((folder / "crew.yaml").read_text() + "llm: anthropic/claude-3-5-haiku-latest\n")
    assert load_crew(folder).llm == "anthropic/claude-3-5-haiku-latest"  # crew.yaml beats CREW_LLM
    forced = load_crew(folder, llm="test")
    assert forced.llm == "test"
    assert [(a.llm, a.function_calling_llm) for a in forced.agents] == [("test", "test"), ("test", None)]


def test_a_test_model_mapping_is_the_offline_model(crew_dir) -> None:
    """``llm: {model: test}`` went to litellm as a model named "test" and failed every task."""
    folder = crew_dir(
        {
            "crew.yaml": """
        llm: {model: test}
        agents:
          a: {role: A, goal: G, llm: {model: TEST}}
        tasks:
          t: {description: D, agent: a}
        """
        }
    )
    crew = load_crew(folder)
    assert (crew.llm, crew.agents[0].llm) == ("test", "test")
    assert crew.kickoff().raw.startswith("Test answer for")


def test_a_task_named_twice_in_a_context_is_a_warning_at_its_item(crew_dir) -> None:
    folder = crew_dir(
        {
            "crew.yaml": """
        llm: test
        agents:
          w: {role: W, goal: G}
        tasks:
          a: {description: A, agent: w}
          b: {description: B, agent: w, context: [a, a]}
        """
        }
    )
    project = load_project(folder)
    assert [(w.path, w.line, w.message) for w in project.warnings] == [
        ("tasks.b.context[1]", 6, "'a' is listed twice; it is read once")
    ]
    assert [getattr(t, "name", t) for t in project.crew.tasks[1].context] == ["a"]


def test_relative_output_file_goes_under_out_dir(crew_dir, tmp_path) -> None:
    folder = crew_dir({"crew.yaml": SIMPLE})
    assert load_crew(folder).tasks[0].output_file == "notes/{topic}.md"
    assert load_crew(folder, out_dir=tmp_path / "o").tasks[0].output_file == str(tmp_path / "o" / "notes/{topic}.md")


def test_placeholders_without_default_are_notes_with_their_first_line(crew_dir) -> None:
    project = load_project(crew_dir({"crew.yaml": SIMPLE}))
    notes = project.missing_inputs({}, level="note")
    assert [str(n).split(": note: ")[0] for n in notes] == [f"{project.files[0]}:7: agents.writer.role"]
    assert "used 4 times" in str(notes[0])
    assert project.missing_inputs({"topic": "tea"}) == []


def test_crewai_layout_loads_with_warnings_naming_unsupported_keys(crew_dir) -> None:
    folder = crew_dir(
        {
            "config/agents.yaml": """
            researcher:
              role: >
                {topic} Senior Data Researcher
              goal: Uncover developments in {topic}
              backstory: Seasoned.
              llm: test
              memory: true
              allow_code_execution: false
            """,
            "config/tasks.yaml": """
            research_task:
              description: Research {topic}
              expected_output: Ten bullet points
              agent: researcher
              markdown: true
              guardrail: Ensure there are exactly ten bullet points
            """,
        }
    )
    project = load_project(folder)
    assert project.crew.name == folder.name
    warned = {(w.path, w.line) for w in project.warnings}
    assert project.crew.agents[0].memory is True  # an agent's memory switch is read, not warned about
    assert warned == {
        ("agents.researcher.allow_code_execution", 8),
        ("tasks.research_task.markdown", 5),
        ("tasks.research_task.guardrail", 6),
    }
    assert all("CrewAI" in w.message and "ignored" in w.message for w in project.warnings)
    assert project.crew.tasks[0].guardrail is None  # CrewAI's text guardrail: warned about, not half-applied


def test_crewai_project_layout_loads_from_its_root(crew_dir, monkeypatch) -> None:
    """`crewai create` makes src/<project>/config/{agents,tasks}.yaml and src/<project>/tools/."""
    root = crew_dir(
        {
            "pyproject.toml": "[project]\nname = 'latest_ai'\n",
            "src/latest_ai/__init__.py": "",
            "src/latest_ai/crew.py": "from crewai import Agent  # CrewAI's own file: never imported\n",
            "src/latest_ai/tools/__init__.py": "",
            "src/latest_ai/tools/custom_tool.py": """
            from crew import BaseTool

            class MyCustomTool(BaseTool):
                name: str = "my_tool"
                description: str = "Clear description for what this tool is useful for."

                def _run(self, argument: str) -> str:
                    return "example output"
            """,
            "src/latest_ai/crew.yaml": "tools:\n  my_tool: tools.custom_tool:MyCustomTool\n",
            "src/latest_ai/config/agents.yaml": """
            researcher: {role: Researcher, goal: Research, llm: test, tools: [my_tool]}
            """,
            "src/latest_ai/config/tasks.yaml": """
            research_task: {description: Research, agent: researcher}
            """,
        },
        name="latest-ai",
    )
    monkeypatch.chdir(root)
    project = load_project(".")
    assert project.files == [
        "src/latest_ai/crew.yaml",
        "src/latest_ai/config/agents.yaml",
        "src/latest_ai/config/tasks.yaml",
    ]
    assert project.crew.name == "latest_ai" and project.tools["my_tool"].run(argument="x") == "example output"


def test_env_substitution_and_yaml_anchors(tmp_path, monkeypatch) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(
        "base: &b {x: 1, y: 2}\nmerged:\n  <<: *b\n  y: 3\n"
        "model: ${CREW_X_MODEL:-test}\nset: ${CREW_X_SET}\nliteral: $${HOME}\n"
    )
    monkeypatch.setenv("CREW_X_SET", "yes")
    data, problems = load_yaml(path)
    assert problems == []
    assert data["merged"] == {"x": 1, "y": 3} and data["merged"].duplicates == []
    assert (data["model"], data["set"], data["literal"]) == ("test", "yes", "${HOME}")
    assert data.line_of("model") == 5 and data["merged"].line_of("y") == 4


def test_two_crew_folders_with_a_tools_module_each_load_in_one_process(crew_dir) -> None:
    first = load_project(crew_dir({"crew.yaml": SIMPLE}, name="one"))
    other = crew_dir(
        {
            "crew.yaml": SIMPLE,
            "tools.py": '''
        from crew import tool

        @tool
        def search(query: str) -> str:
            """Search the other index."""
            return "other"
        ''',
        },
        name="two",
    )
    second = load_project(other)
    assert first.tools["search"].run(query="q") == "results for q"
    assert second.tools["search"].run(query="q") == "other"
    again = load_project(first.folder)  # back to the first folder: its own tools.py, not the other's
    assert again.tools["search"].run(query="q") == "results for q"
    assert load_project(other).tools["search"].run(query="q") == "other"


def test_json_schema_covers_every_model_field_and_accepts_the_examples() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    import yaml

    schema = crew_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    for section, props in (
        ("crew", schema["properties"]),
        ("agent", schema["$defs"]["Agent"]["properties"]),
        ("task", schema["$defs"]["Task"]["properties"]),
        ("tool", schema["$defs"]["Tool"]["properties"]),
    ):
        assert set(fields_of(section)) == {k for k, v in props.items() if not v.get("deprecated")}, section
        assert all(props[k].get("deprecated") for k in CREWAI_KEYS[section] - set(fields_of(section))), section
    validator = jsonschema.Draft202012Validator(schema)
    for crew_yaml in sorted(EXAMPLES.glob("*/crew.yaml")):
        errors = list(validator.iter_errors(yaml.safe_load(crew_yaml.read_text())))
        assert errors == [], (crew_yaml, [e.message for e in errors])
    assert list(validator.iter_errors({"agents": {"a": {"role": "r", "goal": "g", "max_itr": 3}}}))


def test_docs_yaml_reference_lists_every_key_of_every_section() -> None:
    text = (REPO / "docs" / "yaml.md").read_text(encoding="utf-8")
    for section, heading in (
        ("crew", "## Crew settings"),
        ("agent", "## Agents"),
        ("task", "## Tasks"),
        ("tool", "## Tools"),
    ):
        body = text.split(heading, 1)[1].split("\n## ", 1)[0]
        documented = {line.split("`")[1] for line in body.splitlines() if line.startswith("| `")}
        assert documented == set(fields_of(section)), (section, documented ^ set(fields_of(section)))


def test_cli_import_stays_light() -> None:
    """`crew --help` must not pay for pydantic, yaml, litellm or networkx."""
    code = (
        "import sys, crew.cli; crew.cli.build_parser(); "
        "print(sorted(m for m in ('pydantic', 'yaml', 'litellm', 'networkx', 'structlog') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_validate_path_does_not_import_litellm() -> None:
    code = (
        "import sys; from crew.config import load_project; "
        f"load_project({str(EXAMPLES / 'trip_planner')!r}); print('litellm' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_missing_folder_and_empty_folder_are_clear_errors(tmp_path) -> None:
    with pytest.raises(ConfigError, match="no such file or folder"):
        load_project(tmp_path / "nope")
    with pytest.raises(ConfigError, match=r"no crew in .*: expected crew\.yaml"):
        load_project(tmp_path)


def test_a_crew_file_path_works_like_its_folder(crew_dir) -> None:
    folder = crew_dir({"crew.yaml": SIMPLE})
    assert load_crew(Path(folder) / "crew.yaml").name == "simple"
    with pytest.raises(ConfigError, match=r"tools.py: expected a crew folder or a \.yaml file"):
        load_project(Path(folder) / "tools.py")


def test_manager_agent_is_named_and_left_out_of_the_workers(crew_dir) -> None:
    crew = load_crew(
        crew_dir(
            {
                "crew.yaml": """
        llm: test
        process: hierarchical
        manager_agent: lead
        agents:
          lead: {role: Lead, goal: Coordinate, allow_delegation: true}
          analyst: {role: Analyst, goal: Analyse}
        tasks:
          study: {description: Study the data}
          report: {description: Report on it, agent: analyst, context: [study]}
        """
            }
        )
    )
    assert crew.manager_agent.name == "lead"
    assert [a.name for a in crew.agents] == ["analyst"]
    assert crew.tasks[0].agent is None and crew.tasks[1].agent is crew.agents[0]
    assert crew.tasks[1].context == ["study"]


def test_inspecting_a_crew_with_a_real_model_does_not_load_litellm(crew_dir) -> None:
    """validate, plot and tools only build the crew: litellm's ~5 s import must not start."""
    folder = crew_dir({"crew.yaml": SIMPLE.replace("llm: test", "llm: openai/gpt-4o-mini")})
    code = (
        "import sys, threading, time\n"
        "from crew.config import load_project\n"
        f"load_project({str(folder)!r})\n"
        "time.sleep(0.2)\n"
        "print('litellm' in sys.modules, threading.active_count())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["False", "1"], done.stderr


HOOKS_PY = """
from pydantic import BaseModel

def on_step(step): pass
def on_task(output): pass
def ask(output): return ""
def never(arguments, result): return False
def accept(output): return (True, None)
def always(outputs): return True

class SearchArgs(BaseModel):
    query: str

class Hit(BaseModel):
    title: str
"""

EVERY_KEY = """
    name: everything
    description: Sets every key.
    process: graph
    llm: test
    manager_llm: {model: openai/gpt-4o-mini, temperature: 0.1}
    manager_agent: lead
    max_concurrency: 3
    cache: false
    max_rpm: 120
    max_tokens: 5000
    max_cost: 0.5
    on_error: continue
    step_callback: hooks:on_step
    task_callback: hooks:on_task
    human_feedback: hooks:ask
    approver: hooks:ask
    verbose: true
    backend: ray
    memory: {limit: 3, embedder: none, path: mem/memory.db}
    embedder: none
    knowledge: [{content: Tea grows on hills.}]
    knowledge_sources: [{content: Tea is picked by hand.}]
    inputs: {topic: tea}
    mcp_servers:
      time: {command: mcp-server-time}
    tools:
      search: tools:search
      full:
        import: tools:search
        description: Search everything.
        args_schema: hooks:SearchArgs
        result_schema: hooks:Hit
        env_vars: [SEARCH_KEY]
        cache_function: hooks:never
        result_as_answer: true
        max_usage_count: 2
        requires_approval: true
        handle_tool_error: "the search failed"
        handle_validation_error: false
        response_format: content
        tags: [web]
        metadata: {owner: me}
        extras: {x: 1}
    agents:
      lead: {role: Lead, goal: Lead the team}
      writer:
        role: Writer
        goal: Write about {topic}
        backstory: Writes for a living.
        name: scribe
        llm: test
        tools: [search, full]
        mcp: [time]
        max_iter: 4
        max_tool_calls_per_reply: 8
        max_execution_time: 30
        allow_delegation: true
        verbose: true
        system_template: "You are {role}. {tools}"
        prompt_template: "{prompt} Be brief."
        function_calling_llm: test
        step_callback: hooks:on_step
        memory: true
        knowledge: [{content: Green tea is steamed.}]
        knowledge_sources: [{content: Black tea is oxidised.}]
    tasks:
      first: {description: First, agent: writer}
      second:
        description: Second about {topic}
        expected_output: Text
        name: second
        agent: writer
        context: [first]
        tools: [search]
        output_pydantic: hooks:Hit
        output_file: out/{topic}.json
        guardrail: hooks:accept
        guardrail_max_retries: 1
        callback: hooks:on_task
        async_execution: true
        human_input: true
        condition: hooks:always
        max_retries: 2
        timeout: 9.5
      third: {description: Third, agent: writer, output_json: hooks:Hit}
    """


def test_every_field_of_every_model_can_be_set_from_yaml(crew_dir) -> None:
    """One key per model field (fields_of lists them from the models): each lands on the object."""
    from crew.config.fields import fields_of

    project = load_project(crew_dir({"crew.yaml": EVERY_KEY, "hooks.py": HOOKS_PY}))
    crew = project.crew
    import hooks

    writer = next(a for a in crew.agents if a.name == "scribe")
    _first, second, third = crew.tasks
    full = project.tools["full"]
    expected = {
        "crew": {
            "name": "everything",
            "description": "Sets every key.",
            "process": "graph",
            "llm": "test",
            "max_concurrency": 3,
            "cache": False,
            "max_rpm": 120,
            "max_tokens": 5000,
            "max_cost": 0.5,
            "on_error": "continue",
            "step_callback": hooks.on_step,
            "task_callback": hooks.on_task,
            "human_feedback": hooks.ask,
            "approver": hooks.ask,
            "verbose": True,
            "backend": "ray",
            "embedder": "none",
        },
        "agent": {
            "role": "Writer",
            "goal": "Write about {topic}",
            "backstory": "Writes for a living.",
            "name": "scribe",
            "llm": "test",
            "max_iter": 4,
            "max_tool_calls_per_reply": 8,
            "max_execution_time": 30,
            "allow_delegation": True,
            "verbose": True,
            "system_template": "You are {role}. {tools}",
            "prompt_template": "{prompt} Be brief.",
            "function_calling_llm": "test",
            "step_callback": hooks.on_step,
            "memory": True,
        },
        "task": {
            "description": "Second about {topic}",
            "expected_output": "Text",
            "name": "second",
            "context": ["first"],
            "output_pydantic": hooks.Hit,
            "output_file": "out/{topic}.json",
            "guardrail": hooks.accept,
            "guardrail_max_retries": 1,
            "callback": hooks.on_task,
            "async_execution": True,
            "human_input": True,
            "condition": hooks.always,
            "max_retries": 2,
            "timeout": 9.5,
        },
        "tool": {
            "description": "Search everything.",
            "args_schema": hooks.SearchArgs,
            "result_schema": hooks.Hit,
            "cache_function": hooks.never,
            "result_as_answer": True,
            "max_usage_count": 2,
            "requires_approval": True,
            "handle_tool_error": "the search failed",
            "handle_validation_error": False,
            "response_format": "content",
            "tags": ["web"],
            "metadata": {"owner": "me"},
            "extras": {"x": 1},
        },
    }
    objects = {"crew": crew, "agent": writer, "task": second, "tool": full}
    for section, values in expected.items():
        for key, value in values.items():
            assert getattr(objects[section], key) == value, (section, key)
    # the keys not compared as plain values above, each checked its own way
    assert crew.manager_llm.model == "openai/gpt-4o-mini" and crew.manager_llm.temperature == 0.1
    assert crew.manager_agent.name == "lead" and crew.manager_agent not in crew.agents
    assert project.inputs == {"topic": "tea"}
    assert (crew.memory.limit, crew.memory.embedder) == (3, "none")
    assert crew.memory.path == project.folder / "mem" / "memory.db"  # a relative path is in the crew's folder
    assert [t.name for t in writer.tools] == ["search", "full"]
    assert writer.mcp == [project.servers["time"]] and project.servers["time"].command == "mcp-server-time"
    assert second.agent is writer and [t.name for t in second.tools] == ["search"]
    assert third.output_json is hooks.Hit
    assert [v.name for v in full.env_vars] == ["SEARCH_KEY"]
    assert [s.content for s in crew.knowledge_sources] == ["Tea grows on hills.", "Tea is picked by hand."]
    assert [s.content for s in writer.knowledge_sources] == ["Green tea is steamed.", "Black tea is oxidised."]
    knowledge = {"knowledge", "knowledge_sources"}
    checked = {
        "crew": set(expected["crew"])
        | {"manager_llm", "manager_agent", "agents", "tasks", "tools", "inputs", "mcp_servers", "memory"}
        | knowledge,
        "agent": set(expected["agent"]) | {"tools", "mcp"} | knowledge,
        "task": set(expected["task"]) | {"agent", "tools", "output_json"},
        "tool": set(expected["tool"]) | {"env_vars", "import"},
    }
    for section, keys in checked.items():  # a new model field fails here until it is set above
        assert set(fields_of(section)) == keys, (section, set(fields_of(section)) ^ keys)
