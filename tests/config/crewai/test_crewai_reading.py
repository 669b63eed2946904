"""Reading crew.py statically: what is taken, what is warned about, what is refused (in process, fast)."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest
from crewai_kit import PROJECTS

from crew.config import load_project
from crew.errors import ConfigError

AGENTS = """
researcher:
  role: Researcher
  goal: Research {topic}
  backstory: Curious.
writer:
  role: Writer
  goal: Write about {topic}
  backstory: Clear.
"""
TASKS = """
research:
  description: Research {topic}.
  expected_output: Notes.
  agent: researcher
write:
  description: Write it up.
  expected_output: A post.
  agent: writer
"""
HEAD = """
from crewai import Agent, Crew, Process, Task
from crewai.project import CrewBase, agent, crew, task
"""


def project(tmp_path: Path, crew_py: str, **files: str) -> Path:
    contents = {
        "config/agents.yaml": AGENTS,
        "config/tasks.yaml": TASKS,
        "crew.py": HEAD + textwrap.dedent(crew_py),
        **files,
    }
    for name, text in contents.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return tmp_path


def errors_of(folder: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_project(folder)
    return caught.value.errors


def line_of(folder: Path, text: str) -> int:
    lines = (folder / "crew.py").read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


CLASS = """
@CrewBase
class Demo:
    @agent
    def researcher(self) -> Agent:
        return Agent(config=self.agents_config["researcher"])

    @agent
    def writer(self) -> Agent:
        return Agent(config=self.agents_config["writer"]{writer})

    @task
    def research(self) -> Task:
        return Task(config=self.tasks_config["research"])

    @task
    def write(self) -> Task:
        return Task(config=self.tasks_config["write"]{write})

    @crew
    def crew(self) -> Crew:
        return Crew(agents=self.agents, tasks=self.tasks{crew})
"""


def demo(tmp_path: Path, writer: str = "", write: str = "", crew: str = "", **files: str) -> Path:
    return project(tmp_path, CLASS.format(writer=writer, write=write, crew=crew), **files)


def test_literal_arguments_reach_the_agents_tasks_and_crew(tmp_path: Path) -> None:
    folder = demo(
        tmp_path,
        writer=', llm="openai/gpt-4o-mini", max_iter=4, allow_delegation=True',
        write=", context=[self.research()], async_execution=False",
        crew=', process=Process.hierarchical, manager_llm=LLM(model="openai/gpt-4o", temperature=0.1)',
    )
    crew = load_project(folder).crew
    writer = next(a for a in crew.agents if a.name == "writer")
    assert (writer.llm, writer.max_iter, writer.allow_delegation) == ("openai/gpt-4o-mini", 4, True)
    assert crew.process == "hierarchical" and crew.manager_llm.model == "openai/gpt-4o"
    assert [t.name for t in crew.tasks] == ["research", "write"] and crew.tasks[1].context == ["research"]


def test_a_bad_literal_points_at_its_line_in_crew_py(tmp_path: Path) -> None:
    folder = demo(tmp_path, writer=", max_iter=0")
    line = line_of(folder, "max_iter=0")
    assert errors_of(folder) == [
        f"{folder / 'crew.py'}:{line}: agents.writer.max_iter: Input should be greater than or equal to 1 (got 0)"
    ]


def test_an_unknown_config_key_is_an_error_with_a_suggestion(tmp_path: Path) -> None:
    folder = project(
        tmp_path,
        CLASS.format(writer="", write="", crew="").replace('agents_config["writer"]', 'agents_config["writter"]'),
    )
    [error] = [e for e in errors_of(folder) if "writter" in e]
    assert f"crew.py:{line_of(folder, 'writter')}: writer.config: no agent 'writter' in " in error
    assert "(did you mean 'writer'?)" in error


def test_a_method_that_composes_its_agent_at_run_time_is_refused(tmp_path: Path) -> None:
    folder = project(
        tmp_path,
        """
        @CrewBase
        class Demo:
            @agent
            def researcher(self) -> Agent:
                options = dict(self.agents_config["researcher"])
                for key in ("verbose",):
                    options[key] = True
                return Agent(**options)

            @task
            def research(self) -> Task:
                return Task(config=self.tasks_config["research"], agent=self.researcher())

            @crew
            def crew(self) -> Crew:
                return Crew(agents=[a for a in self.agents], tasks=self.tasks)
        """,
    )
    errors = errors_of(folder)
    assert any(
        f"crew.py:{line_of(folder, 'for key in')}: researcher: method 'researcher' builds its Agent at run time" in e
        for e in errors
    )
    assert any(
        f"crew.py:{line_of(folder, 'a for a in')}: crew.agents: `[a for a in self.agents]` is composed at run time" in e
        for e in errors
    )


def test_task_execute_inside_the_class_is_refused(tmp_path: Path) -> None:
    folder = demo(tmp_path)
    text = (folder / "crew.py").read_text(encoding="utf-8")
    (folder / "crew.py").write_text(text + "\n    def preview(self):\n        return self.research().execute_sync()\n")
    assert any("`self.research().execute_sync()` runs a task from Python code" in e for e in errors_of(folder))


def test_unreadable_and_unsupported_settings_are_warned_by_name(tmp_path: Path) -> None:
    folder = demo(
        tmp_path,
        writer=", step_callback=lambda step: print(step), memory=True",
        crew=", memory=True, planning=True, embedder={'provider': 'openai'}",
    )
    project_ = load_project(folder)
    warnings = [str(w) for w in project_.warnings]
    named = {w.split(": warning: ")[0].rsplit(": ", 1)[-1] for w in warnings}
    assert {"agents.writer.step_callback", "planning"} <= named
    assert not {"memory", "embedder", "agents.writer.memory"} & named  # memory, read as crew reads it
    assert next(a for a in project_.crew.agents if a.memory is not None).memory is True
    assert project_.crew.memory is not None and project_.crew.embedder == {"provider": "openai"}
    assert any("`step_callback=lambda step: print(step)` cannot be read without running" in w for w in warnings)


def test_yaml_entries_no_method_reads_are_warned_and_left_out(tmp_path: Path) -> None:
    folder = demo(tmp_path)
    (folder / "config/tasks.yaml").write_text(
        textwrap.dedent(TASKS).lstrip() + "spare:\n  description: x\n  expected_output: y\n"
    )
    project_ = load_project(folder)
    assert [t.name for t in project_.crew.tasks] == ["research", "write"]
    assert any("tasks.spare: warning: task 'spare' is not used by" in str(w) for w in project_.warnings)


def test_project_imports_leave_sys_path_and_sys_modules_as_they_were() -> None:
    path, modules = list(sys.path), set(sys.modules)
    project_ = load_project(PROJECTS / "latest_ai")
    assert project_.crew.tasks[0].output_pydantic.__name__ == "ResearchFindings"
    assert sys.path == path
    assert not {m for m in set(sys.modules) - modules if m.startswith(("latest_ai", "crewai"))}
    assert importlib.util.find_spec("crewai") is None  # the stand-in was only there while the tools imported


def test_a_real_crewai_is_never_shadowed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a `crewai` on the path, the project's tools subclass that one, not crew's stand-in."""
    fake = tmp_path / "site" / "crewai"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "tools.py").write_text(
        "from typing import ClassVar\nfrom pydantic import BaseModel\n"
        "class BaseTool(BaseModel):\n"
        "    REAL: ClassVar[bool] = True\n"
        "    name: str\n    description: str\n    args_schema: type | None = None\n"
        "    result_as_answer: bool = False\n    max_usage_count: int | None = None\n"
        "def tool(*a, **k):\n    raise RuntimeError('real crewai tool')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    folder = demo(
        tmp_path / "p",
        writer=", tools=[Echo()]",
        **{
            "tools/__init__.py": "",
            "tools/echo.py": """
            from pydantic import BaseModel
            from crewai.tools import BaseTool

            class EchoArgs(BaseModel):
                text: str

            class Echo(BaseTool):
                name: str = "echo"
                description: str = "Say it back."
                args_schema: type = EchoArgs

                def _run(self, text: str) -> str:
                    return text
            """,
        },
    )
    crew_py = folder / "crew.py"
    crew_py.write_text(
        crew_py.read_text().replace("from crewai.project", "from tools.echo import Echo\nfrom crewai.project")
    )
    try:
        crew = load_project(folder).crew
    finally:
        for name in [m for m in sys.modules if m == "crewai" or m.startswith("crewai.")]:
            del sys.modules[name]
    writer = next(a for a in crew.agents if a.name == "writer")
    [echo] = writer.tools
    assert getattr(type(echo.wrapped), "REAL", False) is True
    assert echo.run(text="hi") == "hi"


def test_main_py_inputs_literals_and_template_dates(tmp_path: Path) -> None:
    folder = demo(
        tmp_path,
        **{
            "main.py": """
            from datetime import datetime
            import os

            def run():
                inputs = {"topic": "AI", "current_year": str(datetime.now().year), "home": os.environ["HOME"]}
                Demo().crew().kickoff(inputs=inputs)
            """
        },
    )
    project_ = load_project(folder)
    assert project_.inputs["topic"] == "AI" and project_.inputs["current_year"].isdigit()
    assert "home" not in project_.inputs
    assert any(
        'main.py:5: inputs.home: warning: `os.environ["HOME"]` is computed at run time' in str(w)
        for w in project_.warnings
    )


def test_hierarchical_crew_with_a_manager_method_code_agents_task_tools_and_output_json(tmp_path: Path) -> None:
    folder = project(
        tmp_path,
        """
        from crewai.project import tool
        from pydantic import BaseModel

        from tools.lookup import lookup


        class Verdict(BaseModel):
            verdict: str
            confidence: float


        @CrewBase
        class Desk:
            @tool
            def lookup_tool(self):
                return lookup

            @agent
            def researcher(self) -> Agent:
                return Agent(config=self.agents_config["researcher"])

            @agent
            def judge(self) -> Agent:
                return Agent(role="Judge", goal="Decide on {topic}", backstory="Fair.", llm="openai/gpt-4o-mini")

            def boss(self) -> Agent:
                return Agent(
                    role="Desk chief", goal="Get {topic} right", backstory="Runs the desk.", allow_delegation=True
                )

            @task
            def research(self) -> Task:
                return Task(config=self.tasks_config["research"], tools=[lookup])

            @task
            def decide(self) -> Task:
                return Task(description="Decide on {topic}.", expected_output="A verdict.", output_json=Verdict)

            @crew
            def crew(self) -> Crew:
                return Crew(
                    agents=self.agents, tasks=self.tasks, process=Process.hierarchical, manager_agent=self.boss()
                )
        """,
        **{
            "config/agents.yaml": AGENTS.replace(
                "  backstory: Curious.", "  backstory: Curious.\n  tools: [lookup_tool]"
            ),
            "config/tasks.yaml": TASKS.split("write:")[0],
            "tools/__init__.py": "",
            "tools/lookup.py": """
            from crewai.tools import tool

            @tool("lookup")
            def lookup(term: str) -> str:
                \"\"\"Look a term up.\"\"\"
                return f"{term}: found"
            """,
        },
    )
    loaded = load_project(folder, llm="test")
    crew = loaded.crew
    assert crew.process == "hierarchical" and crew.manager_agent.role == "Desk chief"
    assert sorted(a.name for a in crew.agents) == ["judge", "researcher"]
    researcher = next(a for a in crew.agents if a.name == "researcher")
    assert [t.name for t in researcher.tools] == ["lookup"]  # agents.yaml `tools: [lookup_tool]` names the @tool method
    assert [t.name for t in crew.tasks[0].tools] == ["lookup"] and crew.tasks[1].output_json.__name__ == "Verdict"
    output = crew.kickoff({"topic": "tea"})
    assert set(output.tasks_output[1].json_dict) == {"verdict", "confidence"}
    assert any(w.path.endswith("writer") and "not used by" in w.message for w in loaded.warnings)


def test_module_level_llm_objects_positional_tool_arguments_and_unreadable_models(tmp_path: Path) -> None:
    folder = project(
        tmp_path,
        """
        from crewai import LLM
        from langchain_openai import ChatOpenAI

        from tools.quote import Quote

        llm = LLM(model="openai/gpt-4o-mini", temperature=0.2)


        @CrewBase
        class Desk:
            @agent
            def researcher(self) -> Agent:
                return Agent(config=self.agents_config["researcher"], llm=llm, tools=[Quote("ACME", currency="EUR")])

            @agent
            def writer(self) -> Agent:
                return Agent(config=self.agents_config["writer"], llm=ChatOpenAI(model="gpt-4o"))

            @task
            def research(self) -> Task:
                return Task(config=self.tasks_config["research"])

            @crew
            def crew(self) -> Crew:
                return Crew(agents=self.agents, tasks=self.tasks)
        """,
        **{
            "config/tasks.yaml": TASKS.split("write:")[0],
            "tools/__init__.py": "",
            "tools/quote.py": """
            from crewai.tools import BaseTool

            class Quote(BaseTool):
                name: str = "quote"
                description: str = "The price of the ticker."
                ticker: str = ""
                currency: str = "USD"

                def __init__(self, ticker: str, **data):
                    super().__init__(ticker=ticker, **data)

                def _run(self) -> str:
                    return f"{self.ticker}: 10 {self.currency}"
            """,
        },
    )
    loaded = load_project(folder)
    researcher, writer = loaded.crew.agents
    assert (researcher.llm.model, researcher.llm.temperature) == ("openai/gpt-4o-mini", 0.2)
    assert researcher.tools[0].run() == "ACME: 10 EUR"
    assert writer.llm is None  # not readable without running crew.py: warned, the crew's model is used
    [warning] = [str(w) for w in loaded.warnings if "ChatOpenAI" in str(w)]
    assert 'agents.writer.llm: warning: `llm=ChatOpenAI(model="gpt-4o")` cannot be read without running' in warning


def test_an_older_script_only_project_is_refused_at_its_crew_call(tmp_path: Path) -> None:
    """crewAI-examples' older layout: agents.py and tasks.py classes composed by main.py, no YAML."""
    (tmp_path / "agents.py").write_text("from crewai import Agent\n\nclass TripAgents:\n    pass\n")
    (tmp_path / "main.py").write_text(
        "from crewai import Crew\nfrom agents import TripAgents\n\n"
        "def run():\n    expert = TripAgents().local_expert()\n    return Crew(agents=[expert], tasks=[]).kickoff()\n"
    )
    [error] = errors_of(tmp_path)
    assert error.startswith(f"{tmp_path / 'main.py'}:6: a Crew(...) composed by a script at run time")


def test_functions_defined_in_crew_py_are_built_from_their_own_def(tmp_path: Path) -> None:
    folder = demo(tmp_path, write=", guardrail=short_enough, callback=announce")
    crew_py = folder / "crew.py"
    crew_py.write_text(
        crew_py.read_text().replace(
            "@CrewBase",
            "LIMIT = 10_000\n\n\ndef short_enough(output):\n    return (len(output.raw) < LIMIT, output.raw)\n\n\n"
            "def announce(output):\n    SEEN.append(output.name)\n\n\nSEEN = []\n\n\n@CrewBase",
        )
    )
    crew = load_project(folder, llm="test").crew
    task = crew.tasks[1]
    assert task.guardrail.__name__ == "short_enough" and task.callback.__name__ == "announce"
    assert task.guardrail.__code__.co_filename == str(crew_py)  # compiled from crew.py's own statements
    crew.kickoff({"topic": "tea"})
    assert task.callback.__globals__["SEEN"] == ["write"]  # its constants came along; the guardrail ran too


def test_an_installed_crewai_tools_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With `crewai_tools` importable, its tools are built (literal arguments) and adapted; no message."""
    fake = tmp_path / "site" / "crewai_tools"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "from pydantic import BaseModel\n"
        "class FileReadArgs(BaseModel):\n    file_path: str = ''\n"
        "class FileReadTool(BaseModel):\n"
        "    name: str = 'Read a file'\n    description: str = 'Read a file.'\n"
        "    args_schema: type = FileReadArgs\n    result_as_answer: bool = False\n"
        "    max_usage_count: int | None = None\n    file_path: str = ''\n"
        "    def _run(self, file_path: str = '') -> str:\n        return 'read ' + (file_path or self.file_path)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    folder = demo(tmp_path / "p", writer=", tools=[FileReadTool(file_path='notes.txt')]")
    crew_py = folder / "crew.py"
    crew_py.write_text(
        crew_py.read_text().replace("from crewai.project", "from crewai_tools import FileReadTool\nfrom crewai.project")
    )
    try:
        crew = load_project(folder).crew
    finally:
        sys.modules.pop("crewai_tools", None)
    [tool] = next(a for a in crew.agents if a.name == "writer").tools
    assert tool.name == "Read a file" and tool.run() == "read notes.txt"


def test_keywords_crewai_ignores_are_warned_and_config_loaded_by_yaml_calls_is_found(tmp_path: Path) -> None:
    folder = demo(tmp_path, write=", verbose=True, max_iters=3")
    crew_py = folder / "crew.py"
    crew_py.write_text(
        crew_py.read_text().replace(
            "class Demo:",
            "class Demo:\n    agents_config = yaml.safe_load(Path('config/agents.yaml').read_text())\n",
        )
    )
    loaded = load_project(folder)
    assert [t.name for t in loaded.crew.tasks] == ["research", "write"]
    warned = [str(w) for w in loaded.warnings]
    assert any("tasks.write.verbose: warning: 'verbose' is not a task setting, in CrewAI either" in w for w in warned)
    assert any("'max_iters' is not a task setting" in w and "did you mean 'max_retries'" in w for w in warned)


def test_a_tools_cursor_execute_is_not_a_task_and_a_native_crew_folder_keeps_its_scripts(tmp_path: Path) -> None:
    folder = demo(tmp_path / "a")
    crew_py = folder / "crew.py"
    crew_py.write_text(
        crew_py.read_text().replace(
            "@CrewBase", "def lookup(db, sql):\n    return db.cursor().execute(sql)\n\n\n@CrewBase"
        )
    )
    assert [t.name for t in load_project(folder).crew.tasks] == ["research", "write"]
    native = tmp_path / "b"
    native.mkdir()
    (native / "crew.yaml").write_text(
        "agents:\n  a: {role: A, goal: G}\ntasks:\n  t: {description: D, agent: a}\n", encoding="utf-8"
    )
    (native / "main.py").write_text("from crew import Crew, load_crew\nCrew(**{}).kickoff()\n", encoding="utf-8")
    assert load_project(native).crewai is None


def test_a_class_attribute_llm_is_read_where_self_llm_names_it() -> None:
    crew = load_project(PROJECTS / "market_desk").crew
    assert [(a.name, a.llm.model, a.llm.temperature) for a in crew.agents] == [
        ("analyst", "openai/gpt-4o-mini", 0.3),
        ("writer", "openai/gpt-4o-mini", 0.3),
    ]
    assert crew.verbose is True  # `verbose=2`, CrewAI's old verbose level


def test_a_tool_module_needing_a_missing_package_names_the_module_that_imports_it(tmp_path: Path) -> None:
    """stock_analysis' sec_tools.py: `from crewai_tools import RagTool` (not in the stand-in), then `sec_api`."""
    folder = demo(
        tmp_path,
        writer=", tools=[SEC10KTool('AMZN'), Quote()]",
        **{
            "tools/__init__.py": "",
            "tools/sec_tools.py": """
            from crewai_tools import RagTool

            class SEC10KTool(RagTool):
                pass
            """,
            "tools/quote.py": """
            from crewai.tools import BaseTool
            import sec_api_not_installed

            class Quote(BaseTool):
                name: str = "quote"
                description: str = "A quote."

                def _run(self) -> str:
                    return "10"
            """,
        },
    )
    crew_py = folder / "crew.py"
    crew_py.write_text(
        crew_py.read_text().replace(
            "@CrewBase", "from tools.sec_tools import SEC10KTool\nfrom tools.quote import Quote\n\n\n@CrewBase"
        )
    )
    errors = errors_of(folder)
    [sec] = [e for e in errors if "SEC10KTool" in e]
    assert "SEC10KTool (wanted by agent 'writer') needs the package crewai-tools (" in sec
    assert "tools/sec_tools.py:1 imports crewai_tools), which is not installed: `pip install crewai-tools`" in sec
    [quote] = [e for e in errors if "Quote" in e]
    assert "tools/quote.py:2 imports sec_api_not_installed)" in quote and "pip install sec-api-not-installed" in quote


def test_a_missing_module_named_unlike_its_distribution_names_the_distribution(tmp_path: Path) -> None:
    """markdown_validator's tool imports `pymarkdown`, which `pip install pymarkdownlnt` provides."""
    if importlib.util.find_spec("pymarkdown") is not None:
        pytest.skip("pymarkdown is installed here")
    folder = demo(
        tmp_path,
        writer=", tools=[markdown_validation_tool]",
        **{
            "tools/__init__.py": "",
            "tools/markdown_tools.py": """
            from crewai.tools import tool
            from pymarkdown.api import PyMarkdownApi

            @tool("markdown_validation_tool")
            def markdown_validation_tool(file_path: str) -> str:
                \"\"\"Review a file for markdown syntax errors.\"\"\"
                return str(PyMarkdownApi().scan_path(file_path))
            """,
        },
    )
    crew_py = folder / "crew.py"
    crew_py.write_text(
        crew_py.read_text().replace(
            "@CrewBase", "from tools.markdown_tools import markdown_validation_tool\n\n\n@CrewBase"
        )
    )
    [error] = errors_of(folder)
    assert "needs the package pymarkdownlnt (" in error and "`pip install pymarkdownlnt`" in error


def test_a_module_level_llm_that_cannot_be_read_is_warned_with_its_expression(tmp_path: Path) -> None:
    folder = demo(tmp_path, writer=", llm=llm")
    crew_py = folder / "crew.py"
    crew_py.write_text(
        crew_py.read_text().replace(
            "@CrewBase", 'from langchain.llms import Ollama\n\nllm = Ollama(model="llama3.1")\n\n\n@CrewBase'
        )
    )
    warnings = [str(w) for w in load_project(folder).warnings if ".llm:" in str(w)]
    assert len(warnings) == 1 and '`llm=Ollama(model="llama3.1")` cannot be read without running' in warnings[0]


def test_config_keys_missing_from_the_yaml_are_one_error_each(tmp_path: Path) -> None:
    """email_auto_responder_flow's crew: its agents.yaml and tasks.yaml belong to another crew."""
    folder = project(
        tmp_path,
        """
        @CrewBase
        class Inbox:
            @agent
            def email_filter_agent(self) -> Agent:
                return Agent(config=self.agents_config["email_filter_agent"], verbose=True)

            @task
            def filter_emails_task(self) -> Task:
                return Task(config=self.tasks_config["filter_emails"])

            @crew
            def crew(self) -> Crew:
                return Crew(agents=self.agents, tasks=self.tasks)
        """,
    )
    errors = [e.split(": ", 1)[1] for e in errors_of(folder)]
    assert errors == [
        "email_filter_agent.config: no agent 'email_filter_agent' in " + str(folder / "config/agents.yaml"),
        "filter_emails_task.config: no task 'filter_emails' in " + str(folder / "config/tasks.yaml"),
    ]


def test_a_refused_script_is_the_only_error_its_yaml_is_not_checked_as_a_crew(tmp_path: Path) -> None:
    """screenplay_writer: a script loads the YAML itself, wires agents in Python and calls task.execute()."""
    (tmp_path / "config").mkdir()
    (tmp_path / "config/agents.yaml").write_text(AGENTS, encoding="utf-8")
    (tmp_path / "config/tasks.yaml").write_text(
        "screen:\n  description: Is {post} spam?\n  expected_output: STOP or nothing.\n", encoding="utf-8"
    )
    (tmp_path / "screenplay.py").write_text(
        "import yaml\nfrom crewai import Agent, Task, Crew\n\n"
        "agents_config = yaml.safe_load(open('config/agents.yaml'))\n"
        "tasks_config = yaml.safe_load(open('config/tasks.yaml'))\n"
        "writer = Agent(config=agents_config['writer'])\n"
        "screen = Task(description=tasks_config['screen']['description'], agent=writer)\n"
        "result = screen.execute()\n",
        encoding="utf-8",
    )
    [error] = errors_of(tmp_path)
    assert error.startswith(f"{tmp_path / 'screenplay.py'}:8: `screen.execute()` runs a task from Python code")


def test_only_folders_beside_crew_py_that_the_source_root_lacks_import_as_the_packages_own(tmp_path: Path) -> None:
    from crew.config.crewai.objects import Project
    from crew.config.crewai.plan import Import

    package = tmp_path / "src" / "desk"
    (package / "tools").mkdir(parents=True)
    (package / "types.py").write_text("", encoding="utf-8")
    (tmp_path / "src" / "shared").mkdir()
    (package / "shared").mkdir()
    project = Project(tmp_path / "src", "desk")

    def absolute(module: str) -> str:
        return project.absolute(Import(module, "X", 0, 1))

    assert absolute("tools.calculator_tool") == "desk.tools.calculator_tool"  # beside crew.py only
    assert absolute("types") == "types"  # the standard library's, as the authors' own run had it
    assert absolute("shared.x") == "shared.x"  # the source root's comes first, as on sys.path
    assert absolute("desk.tools.x") == "desk.tools.x"
