"""`crew kickoff PATH --llm test --json` on CrewAI projects, through the real command."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from crewai_kit import PROJECTS

from crew.memory import Memory

from cli_kit import crew_env, run_crew  # isort: skip  (crewai_kit puts it on the path)


def _kickoff(path: Path, tmp_path: Path, *extra: str) -> dict:
    done = run_crew("kickoff", str(path), "--llm", "test", "--json", "-q", "--out", str(tmp_path), *extra)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["status"] == "done"
    document["stderr"] = done.stderr
    return document


def test_src_layout_runs_its_crew_py_with_agents_tools_context_and_output_models(tmp_path: Path) -> None:
    document = _kickoff(PROJECTS / "latest_ai", tmp_path, "--store", str(tmp_path / "runs.db"))
    tasks = {t["name"]: t for t in document["tasks_output"]}
    # the order and the names of the @task methods; write_report's agent comes from crew.py (agent=self.analyst()),
    # overriding tasks.yaml's `agent: researcher`
    assert list(tasks) == ["research_task", "write_report"]
    assert tasks["research_task"]["agent"] == "AI LLMs Senior Data Researcher"  # main.py's inputs are the defaults
    assert tasks["write_report"]["agent"] == "AI LLMs Reporting Analyst"
    # output_pydantic from the project's types.py, and from a class defined inside crew.py
    assert set(tasks["research_task"]["pydantic"]) == {"topic", "bullet_points"}
    assert set(tasks["write_report"]["pydantic"]) >= {"title", "sections"}
    # a crewai BaseTool subclass (through the stand-in) and a LangChain @tool, both called through our executor
    calls = {c["name"]: c for c in tasks["research_task"]["tool_calls"]}
    assert set(calls) == {"Name_of_my_tool", "word_count"} and all(c["status"] == "success" for c in calls.values())
    assert tasks["write_report"]["tool_calls"] == []
    assert (
        json.loads((tmp_path / "report.md").read_text(encoding="utf-8"))["title"]
        == tasks["write_report"]["pydantic"]["title"]
    )
    crew_py = "src/latest_ai/crew.py"
    warnings = [line for line in document["stderr"].splitlines() if "warning:" in line]
    assert not any(": memory: warning" in w for w in warnings)  # crew.py's memory=True is crew's memory:
    memory = Memory(tmp_path / "memory.db")  # beside the run store, one record per finished task
    assert sorted(r.metadata["task"] for r in memory.list_records()) == ["research_task", "write_report"]
    assert any(crew_py + ":77: planning: warning: CrewAI key 'planning'" in w for w in warnings)
    assert any("tasks.yaml:16: tasks.reporting_task.markdown: warning" in w for w in warnings)


def test_flat_layout_with_method_names_unlike_the_config_keys(tmp_path: Path) -> None:
    document = _kickoff(PROJECTS / "flat_crew", tmp_path)
    tasks = {t["name"]: t for t in document["tasks_output"]}
    assert list(tasks) == ["find_audience", "write_post", "title"]
    # tasks.yaml says `agent: scout` / `agent: writer` (method names); crew.py gives `title` its agent
    assert [t["agent"] for t in tasks.values()] == ["Market Researcher", "Copywriter", "Copywriter"]
    assert [c["name"] for c in tasks["find_audience"]["tool_calls"]] == [
        "Market_search"
    ]  # CrewAI's @tool("Market search")
    assert "a solar kettle" in tasks["find_audience"]["description"]  # inputs from crew.py's __main__ kickoff
    assert (tmp_path / "post.md").read_text(encoding="utf-8") == tasks["write_post"]["raw"]
    assert "crew.py:15: prepare: warning: @before_kickoff method 'prepare' is not supported" in document["stderr"]


def test_an_older_examples_style_crew_sibling_tools_verbose_level_and_class_attribute_llm(tmp_path: Path) -> None:
    """crewAI-examples' stock_analysis / job-posting style: `from tools.x import`, `verbose=2`, `llm = LLM(...)`."""
    document = _kickoff(PROJECTS / "market_desk", tmp_path)
    tasks = {t["name"]: t for t in document["tasks_output"]}
    assert [(name, t["agent"]) for name, t in tasks.items()] == [
        ("size_market", "Market Analyst"),
        ("morning_note", "Desk Writer"),
    ]
    # the project's own tool, imported through `tools.calculator_tool` beside crew.py, ran through our executor
    assert [(c["name"], c["status"]) for c in tasks["size_market"]["tool_calls"]] == [("Calculator_tool", "success")]
    assert set(tasks["size_market"]["json_dict"]) == {"units", "revenue"}  # output_json from crew.py's class
    assert "ACME Kettles" in tasks["morning_note"]["description"]  # main.py's inputs
    assert "verbose" not in document["stderr"] and "class attribute" not in document["stderr"]


@pytest.mark.parametrize("where", ["src/poem_flow/crews/poem_crew", "src/poem_flow/crews/poem_crew/config"])
def test_a_flows_crew_folder_runs_and_the_flow_itself_is_refused(where: str, tmp_path: Path) -> None:
    document = _kickoff(PROJECTS / "poem_flow" / where, tmp_path, "-i", "sentence_count=3")
    [task] = document["tasks_output"]
    assert (
        task["name"] == "write_poem" and task["agent"] == "CrewAI Poem Writer" and "count of 3" in task["description"]
    )


def test_the_root_of_a_flow_project_runs_its_flow() -> None:
    done = run_crew("kickoff", str(PROJECTS / "poem_flow"), "--llm", "test", "--json", "-q")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["flow"] == "PoemFlow" and document["status"] == "done"
    assert "sentence count of" in document["state"]["poem"]  # the poem crew's task, as crew read it


def test_missing_crewai_tools_stop_with_one_message_per_tool_and_nothing_runs() -> None:
    done = run_crew("kickoff", str(PROJECTS / "web_research"), "--llm", "test", "-i", "topic=x", "--json")
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    serper = [line for line in lines if "SerperDevTool" in line]
    scrape = [line for line in lines if "ScrapeWebsiteTool" in line]
    assert len(serper) == 1 and len(scrape) == 1 and "Traceback" not in done.stderr
    assert "crew.py:5:" in serper[0] and "wanted by agent 'searcher')" in serper[0]
    assert "wanted by agent 'searcher', agent 'reader'" in scrape[0]
    assert all("pip install crewai-tools" in line for line in serper + scrape)
    assert lines[-1] == "crew: 2 errors; nothing was run"


def test_a_scripted_crew_py_is_refused_naming_the_construct_and_line() -> None:
    done = run_crew("validate", str(PROJECTS / "scripted"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "crew.py:11: `analysis.execute_sync()` runs a task from Python code" in done.stderr
    assert "crew.py:12: a Crew(...) composed by a script at run time" in done.stderr


@pytest.mark.parametrize("where", ["", "src/latest_ai", "src/latest_ai/config"])
def test_validate_plot_and_tools_accept_the_root_the_package_and_the_config_folder(where: str) -> None:
    path = str(PROJECTS / "latest_ai" / where)
    checked = run_crew("validate", path)
    assert checked.returncode == 0, checked.stderr
    assert "2 agents, 2 tasks, 2 tools" in checked.stdout and "src/latest_ai/crew.py" in checked.stdout
    if where == "src/latest_ai":
        plot = run_crew("plot", path)
        assert plot.returncode == 0 and "t0 --> t1" in plot.stdout and "write_report" in plot.stdout
        tools = run_crew("tools", path, "--json")
        names = {t["function"]["name"] for t in json.loads(tools.stdout)}
        assert names == {"Name_of_my_tool", "word_count"}


@pytest.mark.parametrize("name", ["latest_ai", "flat_crew", "market_desk"])
def test_migrate_writes_a_crew_folder_that_runs_the_same_tasks_with_the_same_agents(name: str, tmp_path: Path) -> None:
    project = tmp_path / name
    shutil.copytree(PROJECTS / name, project)
    done = run_crew("migrate", str(project))
    assert done.returncode == 0, done.stderr
    native = project / "crew_native"
    assert ("left out (not supported)" in done.stderr) == (name != "market_desk")  # it uses nothing unsupported
    if name == "latest_ai":  # main.py computes current_year at each run; the migrated crew has one day's value
        assert "inputs.current_year: written as today's value, which stays" in done.stderr
        assert "# inputs.current_year: today's value" in (project / "crew_native" / "crew.yaml").read_text()
    assert run_crew("validate", str(native)).returncode == 0
    before = _kickoff(project, tmp_path / "a")
    after = _kickoff(native, tmp_path / "b")

    def shape(document: dict) -> list[tuple]:
        return [
            (t["name"], t["agent"], sorted(t["pydantic"] or {}), [c["name"] for c in t["tool_calls"]])
            for t in document["tasks_output"]
        ]

    assert shape(before) == shape(after)
    again = run_crew("migrate", str(project))
    assert again.returncode == 2 and "already holds crew.yaml" in again.stderr


def test_the_run_commands_find_the_runs_kickoff_recorded_in_a_src_layout(tmp_path: Path) -> None:
    """Kickoff stored runs in src/<project>/.crew; `crew runs`, `show` and `resume` looked in the root."""
    project = tmp_path / "latest_ai"
    shutil.copytree(PROJECTS / "latest_ai", project)
    env = {k: v for k, v in crew_env().items() if k != "CREW_STORE"}  # each crew folder's own store
    done = run_crew("kickoff", str(project), "--llm", "test", "--json", "-q", "--out", str(tmp_path), env=env)
    assert done.returncode == 0, done.stderr
    run_id = json.loads(done.stdout)["run_id"]
    assert (project / "src" / "latest_ai" / ".crew" / "runs.db").is_file()
    listed = run_crew("runs", "--json", cwd=project, env=env)
    assert listed.returncode == 0, listed.stderr
    assert [r["id"] for r in json.loads(listed.stdout)] == [run_id]
    shown = run_crew("show", run_id[:12], cwd=project, env=env)
    assert shown.returncode == 0 and run_id[:12] in shown.stdout


def test_an_old_crewai_tools_import_under_crewai_tools_1_says_where_and_what_to_write(tmp_path: Path) -> None:
    """crewai-tools 1.x has no BaseTool: `from crewai_tools import BaseTool` (older projects) fails
    under CrewAI too, so the error must name the tool module's line and the import that works."""
    site = tmp_path / "site" / "crewai_tools"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text('"""crewai-tools 1.x: tools only, BaseTool lives in crewai.tools."""\n')
    env = crew_env(PYTHONPATH=str(tmp_path / "site"))
    done = run_crew("validate", str(PROJECTS / "market_desk"), env=env, process=True)  # PYTHONPATH: a new process
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "calculator_tool.py:1): ImportError: cannot import name 'BaseTool' from 'crewai_tools'" in done.stderr
    assert "write `from crewai.tools import BaseTool` there" in done.stderr
