"""What `crew kickoff` refuses before anything starts: one message each, exit 2, no task begun."""

from __future__ import annotations

from cli_kit import REPO, crew_env, run_crew, write

from crew.testing import Reply

TRIP = str(REPO / "examples" / "trip_planner")


def _nothing_started(stderr: str) -> bool:
    return "running" not in stderr and "failed:" not in stderr and "task '" not in stderr


def test_a_missing_key_is_said_once_before_any_task_starts() -> None:
    env = crew_env()
    env.pop("OPENAI_API_KEY", None)
    done = run_crew("kickoff", TRIP, "--llm", "openai/gpt-4o-mini", "--no-store", env=env)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.count("OPENAI_API_KEY") == 1 and _nothing_started(done.stderr), done.stderr
    assert "model 'openai/gpt-4o-mini' (for food_scout, sights_scout, logistics, planner) needs OPENAI_API_KEY" in (
        done.stderr
    )
    assert "Traceback" not in done.stderr


def test_a_misspelt_model_name_gets_the_name_it_resembles() -> None:
    env = crew_env()
    env.pop("OPENAI_API_KEY", None)
    for given, meant in (("gpt4o-mini", "gpt-4o-mini"), ("openai/gpt4o-mini", "openai/gpt-4o-mini")):
        done = run_crew("kickoff", TRIP, "--llm", given, "--no-store", env=env)
        assert done.returncode == 2, done.stderr
        assert f"did you mean '{meant}'?" in done.stderr and _nothing_started(done.stderr), done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_an_unknown_provider_is_named_with_the_closest_one() -> None:
    done = run_crew("kickoff", TRIP, "--llm", "opnai/gpt-4o-mini", "--no-store")
    assert done.returncode == 2 and "litellm knows no provider 'opnai' (did you mean 'openai'?)" in done.stderr
    assert _nothing_started(done.stderr)


def test_an_input_nothing_uses_is_refused_with_the_name_it_resembles(tmp_path) -> None:
    done = run_crew("kickoff", TRIP, "-i", "citty=Rome", "--no-store")
    assert done.returncode == 2 and done.stdout == ""
    assert "crew: -i citty: no placeholder of the crew reads it (did you mean 'city'?)" in done.stderr
    assert _nothing_started(done.stderr)
    used = run_crew("kickoff", TRIP, "-i", "city=Rome", "--no-store", "-q", cwd=tmp_path)  # a name it reads runs
    assert used.returncode == 0, used.stderr


def test_an_unused_input_from_a_file_names_the_file(tmp_path) -> None:
    inputs = tmp_path / "in.json"
    inputs.write_text('{"city": "Rome", "dayz": 3}')
    done = run_crew("kickoff", TRIP, "--inputs-file", str(inputs), "--no-store")
    assert done.returncode == 2 and _nothing_started(done.stderr)
    assert (
        f"crew: --inputs-file {inputs}: input 'dayz': no placeholder of the crew reads it (did you mean 'days'?)"
        in (done.stderr)
    )


SEARCH_TOOLS = '''
from crew import tool

@tool(env_vars=[{"name": "SEARCH_API_KEY", "description": "the search service's key"}])
def search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"
'''

SEARCH_CREW = """
    llm: {llm}
    tools:
      search: tools:search
    agents:
      finder: {{role: Finder, goal: Find things, tools: [search]}}
      helper: {{role: Helper, goal: Help, tools: [search]}}
    tasks:
      find: {{description: Find bees, expected_output: notes, agent: finder}}
      help: {{description: Help with bees, expected_output: notes, agent: helper}}
    """


def test_a_tools_declared_variable_is_required_before_a_real_model_runs(tmp_path, openai_server) -> None:
    openai_server.handler = lambda request: Reply.text("Bees are insects.")
    llm = f"{{model: openai/gpt-4o-mini, api_base: '{openai_server.url}'}}"
    folder = write(tmp_path / "finder", {"crew.yaml": SEARCH_CREW.format(llm=llm), "tools.py": SEARCH_TOOLS})
    env = crew_env(OPENAI_API_KEY="sk-local-only")
    env.pop("SEARCH_API_KEY", None)
    done = run_crew("kickoff", str(folder), "--no-store", env=env)
    assert done.returncode == 2 and openai_server.requests == [], done.stderr
    assert done.stderr.count("SEARCH_API_KEY") == 1, done.stderr
    assert "tool 'search' needs SEARCH_API_KEY, the search service's key (for finder, helper)" in done.stderr
    given = run_crew("kickoff", str(folder), "--no-store", "-q", env={**env, "SEARCH_API_KEY": "k"})
    assert given.returncode == 0 and given.stdout.startswith("Bees are insects."), given.stderr


def test_the_offline_model_needs_no_key_and_no_tool_variable(tmp_path) -> None:
    folder = write(tmp_path / "finder", {"crew.yaml": SEARCH_CREW.format(llm="test"), "tools.py": SEARCH_TOOLS})
    env = crew_env()
    for name in ("OPENAI_API_KEY", "SEARCH_API_KEY"):
        env.pop(name, None)
    done = run_crew("kickoff", str(folder), "--no-store", "-q", env=env)
    assert done.returncode == 0, done.stderr
    trip = run_crew("kickoff", TRIP, "--no-store", "-q", env=env, cwd=tmp_path)  # its out/ under tmp_path
    assert trip.returncode == 0, trip.stderr


def test_only_names_that_would_certainly_fail_are_refused(monkeypatch) -> None:
    """A local server's model, or one newer than litellm's table, is the provider's to judge."""
    from crew import LLM, Agent, Crew, Task
    from crew.cli.preflight import problems

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)

    def crew(llm: object) -> Crew:
        agent = Agent(role="Writer", goal="Write", backstory="Writes.", llm=llm)
        return Crew(agents=[agent], tasks=[Task(description="Write on {x}", expected_output="text", agent=agent)])

    for fine in (
        "ollama/llama3.1",
        "ollama/llama-3.1",
        "test",
        LLM("openai/gpt4o-mini", api_base="http://127.0.0.1:1/v1"),
    ):
        assert problems(crew(fine), {"x": 1}, {"x": "-i"}) == [], fine
    assert problems(crew(LLM("openai/gpt-4o-mini", api_key="sk-local")), {"x": 1}, {}) == []
    assert problems(crew("openai/gpt-99-new"), {"x": 1}, {}) == [
        "model 'openai/gpt-99-new' (for Writer) needs OPENAI_API_KEY: set it in the environment, "
        "or run offline with --llm test"
    ]
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")  # a server of one's own: any name, no key asked
    assert problems(crew("openai/gpt4o-mini"), {"x": 1}, {}) == []
