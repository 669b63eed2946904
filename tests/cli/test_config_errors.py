"""Broken crew files: each error names the exact file, line and key path.

Every case is a complete crew folder with one mistake (or a few, when the case is
about reporting them together); the expected message starts with
``<file>:<line>: <key.path>: `` and contains a distinctive fragment.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from crew.config import load_project
from crew.errors import ConfigError

BASE_AGENTS = """
        agents:
          writer:
            role: Writer
            goal: Write
        """  # indented like the cases, so textwrap.dedent treats the joined text as one block

CASES: list[tuple[str, dict[str, str], tuple[str, int, str, str]]] = [
    (
        "yaml-syntax",
        {
            "crew.yaml": """
        name: t
        tasks: [a, b
        agents: {}
        """
        },
        ("crew.yaml", 3, "tasks[1]", "invalid YAML"),
    ),
    (
        "yaml-indent",
        {
            "crew.yaml": """
        name: t
        agents:
          writer:
            role: Writer
           goal: Write
        """
        },
        ("crew.yaml", 5, "agents", "invalid YAML"),
    ),
    (
        "yaml-syntax-deep-inside",
        {
            "crew.yaml": BASE_AGENTS
            + """
        tasks:
          draft:
            description: "Draft it
            agent: writer
        """
        },
        ("crew.yaml", 10, "tasks.draft.description", "invalid YAML: found unexpected end of stream"),
    ),
    (
        "yaml-mapping-in-plain-text",
        {
            "crew.yaml": BASE_AGENTS
            + """
        tasks:
          draft:
            description: Note: keep it short
            agent: writer
        """
        },
        ("crew.yaml", 8, "tasks.draft", "a text holding ': ' must be quoted"),
    ),
    (
        "python-tag-refused",
        {
            "crew.yaml": """
        name: t
        llm: !!python/object/apply:os.system ["echo hacked"]
        """
        },
        ("crew.yaml", 2, "", "could not determine a constructor"),
    ),
    (
        "duplicate-top-key",
        {
            "crew.yaml": """
        name: t
        llm: test
        name: u
        tasks: {}
        """
        },
        ("crew.yaml", 3, "name", "duplicate key 'name' (first written on line 1"),
    ),
    (
        "duplicate-agent-key",
        {
            "crew.yaml": """
        agents:
          writer:
            role: Writer
            goal: Write
            role: Editor
        tasks:
          draft: {description: Draft, agent: writer}
        """
        },
        ("crew.yaml", 5, "agents.writer.role", "duplicate key 'role'"),
    ),
    (
        "unknown-top-key",
        {
            "crew.yaml": """
        name: t
        procss: graph
        """
            + BASE_AGENTS
        },
        ("crew.yaml", 2, "procss", "unknown key 'procss' (did you mean 'process'?)"),
    ),
    (
        "unknown-agent-key",
        {
            "crew.yaml": """
        agents:
          writer:
            rol: Writer
            goal: Write
        tasks:
          draft: {description: Draft, agent: writer}
        """
        },
        ("crew.yaml", 3, "agents.writer.rol", "unknown key 'rol' (did you mean 'role'?)"),
    ),
    (
        "unknown-task-key",
        {
            "crew.yaml": BASE_AGENTS
            + """
        tasks:
          draft:
            descripton: Draft it
            agent: writer
        """
        },
        ("crew.yaml", 8, "tasks.draft.descripton", "(did you mean 'description'?)"),
    ),
    (
        "wrong-type-int",
        {
            "crew.yaml": """
        agents:
          writer:
            role: Writer
            goal: Write
            max_iter: ten
        tasks:
          draft: {description: Draft, agent: writer}
        """
        },
        ("crew.yaml", 5, "agents.writer.max_iter", "valid integer"),
    ),
    (
        "wrong-type-bool",
        {
            "crew.yaml": BASE_AGENTS
            + """
        tasks:
          draft:
            description: Draft
            agent: writer
            human_input: maybe
        """
        },
        ("crew.yaml", 10, "tasks.draft.human_input", "valid boolean"),
    ),
    (
        "bad-process",
        {
            "crew.yaml": """
        process: paralel
        """
            + BASE_AGENTS
            + """
        tasks:
          draft: {description: Draft, agent: writer}
        """
        },
        ("crew.yaml", 1, "process", "'sequential', 'graph' or 'hierarchical'"),
    ),
    (
        "crew-setting-bound",
        {
            "crew.yaml": BASE_AGENTS
            + """
        max_concurrency: 0
        tasks:
          draft: {description: Draft, agent: writer}
        """
        },
        ("crew.yaml", 6, "max_concurrency", "greater than or equal to 1"),
    ),
    (
        "missing-agent-goal",
        {
            "crew.yaml": """
        agents:
          writer:
            role: Writer
        tasks:
          draft: {description: Draft, agent: writer}
        """
        },
        ("crew.yaml", 2, "agents.writer.goal", "required key is missing"),
    ),
    (
        "missing-task-description",
        {
            "crew.yaml": BASE_AGENTS
            + """
        tasks:
          draft:
            agent: writer
        """
        },
        ("crew.yaml", 7, "tasks.draft.description", "required key is missing"),
    ),
    (
        "unknown-agent",
        {
            "crew.yaml": BASE_AGENTS
            + """
        tasks:
          summarise:
            description: Sum up
            agent: writter
        """
        },
        ("crew.yaml", 9, "tasks.summarise.agent", "unknown agent 'writter' (did you mean 'writer'?)"),
    ),
    (
        "unknown-context-task",
        {
            "crew.yaml": BASE_AGENTS
            + """
        process: graph
        tasks:
          research: {description: Research, agent: writer}
          draft:
            description: Draft
            agent: writer
            context:
              - research
              - reserch
        """
        },
        ("crew.yaml", 14, "tasks.draft.context[1]", "unknown task 'reserch' (did you mean 'research'?)"),
    ),
    (
        "self-context",
        {
            "crew.yaml": BASE_AGENTS
            + """
        tasks:
          draft:
            description: Draft
            agent: writer
            context: [draft]
        """
        },
        ("crew.yaml", 10, "tasks.draft.context[0]", "its own output"),
    ),
    (
        "cycle",
        {
            "crew.yaml": BASE_AGENTS
            + """
        process: graph
        tasks:
          a: {description: A, agent: writer, context: [c]}
          b: {description: B, agent: writer, context: [a]}
          c: {description: C, agent: writer, context: [b]}
        """
        },
        ("crew.yaml", 9, "tasks.b.context", "cycle: a -> b -> c -> a"),
    ),
    (
        "sequential-forward-context",
        {
            "crew.yaml": BASE_AGENTS
            + """
        tasks:
          a: {description: A, agent: writer, context: [b]}
          b: {description: B, agent: writer}
        """
        },
        ("crew.yaml", 7, "tasks.a.context[0]", "declared after 'a'"),
    ),
    (
        "task-without-agent",
        {
            "crew.yaml": BASE_AGENTS
            + """
        tasks:
          draft:
            description: Draft
        """
        },
        ("crew.yaml", 7, "tasks.draft", "no `agent:`"),
    ),
    (
        "unknown-tool-name",
        {
            "crew.yaml": """
        tools:
          search: tools:search
        agents:
          writer:
            role: Writer
            goal: Write
            tools: [search, serch]
        tasks:
          draft: {description: Draft, agent: writer}
        """
        },
        ("crew.yaml", 7, "agents.writer.tools[1]", "unknown tool 'serch' (did you mean 'search'?)"),
    ),
    (
        "tool-module-missing",
        {
            "crew.yaml": """
        tools:
          search: websearch:search
        """
            + BASE_AGENTS
        },
        ("crew.yaml", 2, "tools.search", "no module 'websearch'"),
    ),
    (
        "tool-attr-missing",
        {
            "crew.yaml": """
        tools:
          search: tools:serch
        """
            + BASE_AGENTS
        },
        ("crew.yaml", 2, "tools.search", "no attribute 'serch' (did you mean 'search'?)"),
    ),
    (
        "tool-path-format",
        {
            "crew.yaml": """
        name: t
        tools:
          search: tools.search
        """
            + BASE_AGENTS
        },
        ("crew.yaml", 3, "tools.search", "expected an import path 'module:attr'"),
    ),
    (
        "tool-function-without-docstring",
        {
            "crew.yaml": """
        tools:
          nodoc: tools:nodoc
        """
            + BASE_AGENTS
        },
        ("crew.yaml", 2, "tools.nodoc", "no description"),
    ),
    (
        "tool-not-a-tool",
        {
            "crew.yaml": """
        tools:
          limit: tools:LIMIT
        """
            + BASE_AGENTS
        },
        ("crew.yaml", 2, "tools.limit", "expected a tool, a BaseTool subclass or a function"),
    ),
    (
        "tool-bad-limit",
        {
            "crew.yaml": """
        tools:
          search:
            import: tools:search
            max_usage_count: 0
        """
            + BASE_AGENTS
        },
        ("crew.yaml", 4, "tools.search.max_usage_count", "positive"),
    ),
    (
        "tool-unknown-setting",
        {
            "crew.yaml": """
        tools:
          search:
            import: tools:search
            result_as_anwser: true
        """
            + BASE_AGENTS
        },
        ("crew.yaml", 4, "tools.search.result_as_anwser", "(did you mean 'result_as_answer'?)"),
    ),
    (
        "tools-module-raises",
        {
            "crew.yaml": """
        tools:
          boom: broken:thing
        """
            + BASE_AGENTS,
            "broken.py": "x = 1 / 0\n",
        },
        ("crew.yaml", 2, "tools.boom", "ZeroDivisionError"),
    ),
    (
        "agents-not-a-mapping",
        {
            "crew.yaml": """
        name: t
        agents:
          - writer
        tasks: {}
        """
        },
        ("crew.yaml", 2, "agents", "expected a mapping of agent names"),
    ),
    (
        "task-is-a-string",
        {
            "crew.yaml": BASE_AGENTS
            + """
        tasks:
          draft: write something
        """
        },
        ("crew.yaml", 7, "tasks.draft", "expected a mapping of task keys, got a string"),
    ),
    (
        "output-model-missing",
        {
            "crew.yaml": BASE_AGENTS
            + """
        tasks:
          draft:
            description: Draft
            agent: writer
            output_pydantic: tools:Reprot
        """
        },
        ("crew.yaml", 10, "tasks.draft.output_pydantic", "(did you mean 'Report'?)"),
    ),
    (
        "llm-wrong-type",
        {
            "crew.yaml": """
        agents:
          writer:
            role: Writer
            goal: Write
            llm: 42
        tasks:
          draft: {description: Draft, agent: writer}
        """
        },
        ("crew.yaml", 5, "agents.writer.llm", "expected a model name"),
    ),
    (
        "env-var-unset",
        {
            "crew.yaml": """
        name: t
        llm: ${CREW_TEST_SURELY_UNSET}
        """
            + BASE_AGENTS
        },
        ("crew.yaml", 2, "llm", "environment variable CREW_TEST_SURELY_UNSET is not set"),
    ),
    (
        "env-var-unset-in-a-flow-mapping",  # several keys on one line: it named the last, not its own
        {
            "crew.yaml": """
        name: t
        llm: test
        agents:
          writer: {role: "${CREW_TEST_SURELY_UNSET}", goal: g, backstory: b}
        tasks:
          draft: {description: Draft, agent: writer}
        """
        },
        ("crew.yaml", 4, "agents.writer.role", "environment variable CREW_TEST_SURELY_UNSET is not set"),
    ),
    (
        "llm-setting-misspelt",  # it went to the provider as it was, ignored, never reported
        {
            "crew.yaml": """
        name: t
        llm: {model: openai/gpt-4o-mini, temprature: 0}
        tasks:
          draft: {description: Draft, agent: writer}
        """
            + BASE_AGENTS
        },
        ("crew.yaml", 2, "llm", "unknown LLM setting 'temprature': did you mean 'temperature'?"),
    ),
    (
        "cache-not-a-boolean",
        {
            "crew.yaml": """
        name: t
        cache: maybe
        tasks:
          draft: {description: Draft, agent: writer}
        """
            + BASE_AGENTS
        },
        ("crew.yaml", 2, "cache", "cache must be true (in memory), false, or a backend"),
    ),
    (
        "top-level-list",
        {
            "crew.yaml": """
        - writer
        - editor
        """
        },
        ("crew.yaml", 1, "", "expected a mapping of crew settings keys, got a list"),
    ),
    (
        "inputs-not-a-mapping",
        {
            "crew.yaml": BASE_AGENTS
            + """
        inputs: [city]
        tasks:
          draft: {description: Draft, agent: writer}
        """
        },
        ("crew.yaml", 6, "inputs", "expected a mapping of input names"),
    ),
    (
        "callback-not-importable",
        {
            "crew.yaml": BASE_AGENTS
            + """
        task_callback: tools:on_done
        tasks:
          draft: {description: Draft, agent: writer}
        """
        },
        ("crew.yaml", 6, "task_callback", "no attribute 'on_done'"),
    ),
    (
        "llm-settings-wrong-value",
        {
            "crew.yaml": """
        agents:
          writer:
            role: Writer
            goal: Write
            llm:
              model: test
              temperature: hot
        tasks:
          draft: {description: Draft, agent: writer}
        """
        },
        ("crew.yaml", 7, "agents.writer.llm.temperature", "as a number (got 'hot')"),
    ),
    (
        "no-tasks",
        {
            "crew.yaml": BASE_AGENTS
            + """
        llm: test
        tasks:
        """
        },
        ("crew.yaml", 7, "tasks", "no tasks: a crew needs at least one"),
    ),
    (
        "unknown-tool-lists-the-declared-ones",
        {
            "crew.yaml": """
        tools:
          search: tools:search
          shout: tools:shout
        agents:
          writer: {role: Writer, goal: Write, tools: [browse]}
        tasks:
          draft: {description: Draft, agent: writer}
        """
        },
        ("crew.yaml", 5, "agents.writer.tools[0]", "unknown tool 'browse' (declared tools: search, shout)"),
    ),
    (
        "crewai-tool-never-declared",
        {
            "agents.yaml": """
            researcher:
              role: Researcher
              goal: Research
              tools:
                - SerperDevTool
            """,
            "tasks.yaml": """
            research_task: {description: Research, agent: researcher}
            """,
        },
        ("agents.yaml", 5, "agents.researcher.tools[0]", "as `SerperDevTool: module:attr`"),
    ),
    (
        "crewai-empty-tasks-file",
        {
            "agents.yaml": """
            researcher: {role: Researcher, goal: Research}
            """,
            "tasks.yaml": """
            # to do
            """,
        },
        ("tasks.yaml", 1, "tasks", "no tasks"),
    ),
    (
        "crewai-tasks-file",
        {
            "config/agents.yaml": """
            researcher:
              role: Researcher
              goal: Research
            """,
            "config/tasks.yaml": """
            research_task:
              description: Research
              expected_output: Notes
              agent: reseacher
            """,
        },
        ("config/tasks.yaml", 4, "tasks.research_task.agent", "(did you mean 'researcher'?)"),
    ),
    (
        "agent-declared-twice",
        {
            "crew.yaml": """
            name: t
            agents:
              writer: {role: Writer, goal: Write}
            """,
            "agents.yaml": """
            editor: {role: Editor, goal: Edit}
            writer: {role: Writer, goal: Write}
            """,
            "tasks.yaml": """
            draft: {description: Draft, agent: writer}
            """,
        },
        ("agents.yaml", 2, "agents.writer", "also declared in crew.yaml:3"),
    ),
]


@pytest.mark.parametrize("files, expected", [pytest.param(f, e, id=i) for i, f, e in CASES])
def test_config_error_names_file_line_and_key(crew_dir, monkeypatch, files, expected) -> None:
    folder: Path = crew_dir(files)
    monkeypatch.chdir(folder)
    with pytest.raises(ConfigError) as caught:
        load_project(".")
    file, line, path, fragment = expected
    prefix = f"{file}:{line}: " + (f"{path}: " if path else "")
    hits = [e for e in caught.value.errors if e.startswith(prefix) and fragment in e]
    assert hits, f"no error starting {prefix!r} containing {fragment!r} in:\n" + "\n".join(caught.value.errors)


def test_config_error_cases_are_many_and_distinct() -> None:
    assert len(CASES) >= 25
    assert len({case_id for case_id, _, _ in CASES}) == len(CASES)


def test_config_errors_of_a_file_are_reported_together(crew_dir, monkeypatch) -> None:
    folder = crew_dir(
        {
            "crew.yaml": """
        name: t
        procss: graph
        tools:
          search: tools:serch
        agents:
          writer:
            role: Writer
            goal: Write
            max_iter: ten
            tools: [search]
        tasks:
          draft:
            description: Draft
            agent: writter
        max_concurrency: lots
        on_error: explode
        """
        }
    )
    monkeypatch.chdir(folder)
    with pytest.raises(ConfigError) as caught:
        load_project(".")
    located = [e.split(": ", 2)[:2] for e in caught.value.errors]
    assert located == [
        ["crew.yaml:2", "procss"],
        ["crew.yaml:4", "tools.search"],
        ["crew.yaml:9", "agents.writer.max_iter"],
        ["crew.yaml:14", "tasks.draft.agent"],
        ["crew.yaml:15", "max_concurrency"],  # crew settings too, though the crew itself cannot be built
        ["crew.yaml:16", "on_error"],
    ]


def test_config_missing_model_is_an_error_only_when_required(crew_dir, monkeypatch) -> None:
    folder = crew_dir(
        {
            "crew.yaml": """
        name: t
        agents:
          writer: {role: Writer, goal: Write}
        tasks:
          draft: {description: Draft, agent: writer}
        """
        }
    )
    monkeypatch.chdir(folder)
    project = load_project(".")
    notes = [str(p) for p in project.problems.of("note")]
    assert notes and "no model for 'writer'" in notes[0]
    with pytest.raises(ConfigError) as caught:
        load_project(".", require_model=True)
    assert caught.value.errors[0].startswith("crew.yaml:1: llm: no model for 'writer'")
    assert "--llm test" in caught.value.errors[0]
