"""`crew kickoff` with a real model string: the command, either transport and HTTP, against the local server."""

from __future__ import annotations

import json

import pytest
from cli_kit import crew_env, run_crew, write

from crew.testing import Reply

CREW = """
    llm:
      model: openai/gpt-4o-mini
      api_base: {url}
      transport: {transport}
    tools:
      search_attractions: tools:search_attractions
    agents:
      guide:
        role: Local guide
        goal: Find places in {{city}}
        backstory: Knows every street.
        tools: [search_attractions]
    tasks:
      plan:
        description: Plan a day in {{city}}.
        expected_output: A short plan
        agent: guide
    inputs:
      city: Osaka
    """

TOOLS = '''
def search_attractions(city: str, preference: str, limit: int = 5) -> list[str]:
    """Search attractions in a city that match a preference."""
    return [f"{city} {preference} spot {i}" for i in range(1, limit + 1)]
'''


@pytest.mark.parametrize("transport", ["litellm", "native"])
def test_kickoff_calls_the_tool_then_answers_and_never_shows_the_key(tmp_path, openai_server, transport):
    def reply(request):
        if not any(m["role"] == "tool" for m in request.messages):
            return Reply.tools(
                {"name": "search_attractions", "args": {"city": "Osaka", "preference": "food", "limit": 2}}
            )
        return Reply.text("Morning: Osaka food spot 1. Evening: Osaka food spot 2.")

    openai_server.handler = reply
    folder = write(
        tmp_path / "guide", {"crew.yaml": CREW.format(url=openai_server.url, transport=transport), "tools.py": TOOLS}
    )
    done = run_crew("kickoff", str(folder), "--json", env=crew_env(OPENAI_API_KEY="sk-never-shown-4242"), timeout=120)

    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["raw"] == "Morning: Osaka food spot 1. Evening: Osaka food spot 2."
    assert out["usage"]["requests"] == 2 and out["tool_stats"]["search_attractions"]["runs"] == 1
    first, second = openai_server.requests
    assert first.model == "gpt-4o-mini"
    assert [t["function"]["name"] for t in first.tools] == ["search_attractions"]
    assert "Plan a day in Osaka." in first.messages[-1]["content"]
    call_id = second.messages[-2]["tool_calls"][0]["id"]
    tool_message = second.messages[-1]
    assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == call_id
    assert json.loads(tool_message["content"]) == ["Osaka food spot 1", "Osaka food spot 2"]
    assert "sk-never-shown-4242" not in done.stdout + done.stderr


def test_kickoff_with_llm_flag_reaches_the_server_named_by_the_environment(tmp_path, openai_server):
    openai_server.handler = lambda request: Reply.text("A day in Osaka.")
    folder = write(tmp_path / "guide", {"crew.yaml": CREW.format(url="unused", transport="auto"), "tools.py": TOOLS})
    env = crew_env(OPENAI_API_KEY="sk-never-shown-4242", OPENAI_BASE_URL=openai_server.url)
    done = run_crew("kickoff", str(folder), "--json", "--llm", "openai/some-local-model", env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["raw"] == "A day in Osaka."
    assert {r.model for r in openai_server.requests} == {"some-local-model"}  # unknown model: text protocol
