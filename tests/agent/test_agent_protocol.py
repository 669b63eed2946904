"""A model taken for a text-protocol one still gets its tool calls run, and which protocol an agent
speaks is said where the user looks."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from crew.agent.agent import Agent
from crew.agent.modes import protocol_of
from crew.common.events import bus
from crew.models import LLM
from crew.tasks.task import Task
from crew.testing import Reply, TestModel
from crew.tools import tool

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from cli_kit import in_process

CALLS: list[str] = []


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    CALLS.append(city)
    return f"3 degrees in {city}"


def unknown_model(server) -> LLM:
    """A name no model table knows: the agent speaks the text protocol to it."""
    return LLM("openai/house-model-7b", api_base=server.url, api_key="sk-test", num_retries=0)


async def test_tool_calls_a_text_protocol_model_returns_are_run_and_answered(openai_server):
    openai_server.enqueue(
        Reply.tools({"name": "get_weather", "args": {"city": "Oslo"}, "id": "call_1"}),
        Reply.text("Final Answer: 3 degrees in Oslo."),
    )
    agent = Agent(role="Forecaster", goal="Report", llm=unknown_model(openai_server), tools=[get_weather])
    assert protocol_of(agent.chat_model()) == "text"
    out = await agent.aexecute_task(Task(description="Weather in Oslo?", expected_output="one sentence"))

    assert CALLS == ["Oslo"] and out.raw == "3 degrees in Oslo."
    assert [(r.name, r.args, r.status) for r in out.tool_calls] == [("get_weather", {"city": "Oslo"}, "success")]
    sent = openai_server.requests[1].messages
    assert sent[-2]["tool_calls"][0]["id"] == "call_1"  # the call goes back as the model made it
    assert sent[-1] == {"role": "tool", "tool_call_id": "call_1", "content": "3 degrees in Oslo"}


def test_the_protocol_is_read_without_calling_the_model():
    assert protocol_of(TestModel()) == "function calling"
    assert protocol_of(LLM("openai/gpt-4o-mini")) == "function calling"
    assert protocol_of(LLM("openai/house-model-7b")) == "text"
    assert protocol_of(LLM("openai/house-model-7b", function_calling=True)) == "function calling"


async def test_every_turn_event_names_the_protocol_the_agent_speaks(openai_server):
    openai_server.enqueue(Reply.text("Final Answer: mild."))
    seen: list[str] = []
    unsubscribe = bus.subscribe(
        lambda event: seen.append(event.data["protocol"]) if event.type == "agent.turn" else None
    )
    try:
        agent = Agent(role="Forecaster", goal="Report", llm=unknown_model(openai_server), tools=[get_weather])
        await agent.aexecute_task(Task(description="Weather?", expected_output="a word"))
    finally:
        unsubscribe()
    assert seen == ["text"]


def test_validate_says_which_protocol_each_agent_speaks(tmp_path):
    (tmp_path / "crew.yaml").write_text(
        textwrap.dedent("""
        llm: openai/gpt-4o-mini
        agents:
          a: {role: Analyst, goal: G, backstory: B}
          b: {role: Editor, goal: G, backstory: B, llm: {model: openai/house-model-7b}}
        tasks:
          t1: {description: d, expected_output: x, agent: a}
          t2: {description: d, expected_output: x, agent: b}
        """)
    )
    env = {**os.environ, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    command = [sys.executable, "-m", "crew", "validate", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    assert "  protocol: function calling (Analyst); text (Editor)" in done.stdout.splitlines()


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "OPENAI_API_BASE")}
    env["OPENAI_API_KEY"] = "sk-test"
    return in_process(*args, env=env)  # the command in this process, as a process would run it


def test_transport_picks_the_door_of_every_model_on_kickoff_and_validate(tmp_path, openai_server):
    (tmp_path / "crew.yaml").write_text(
        textwrap.dedent(f"""
        llm: {{model: anthropic/claude-3-5-haiku-latest, api_base: "{openai_server.url}", function_calling: true}}
        agents:
          a: {{role: Analyst, goal: G, backstory: B}}
        tasks:
          t1: {{description: d, expected_output: x, agent: a}}
        """)
    )
    validated = _run("validate", str(tmp_path), "--transport", "native")
    assert validated.returncode == 0, validated.stderr
    assert f"anthropic/claude-3-5-haiku-latest (native, {openai_server.url})" in validated.stdout
    assert "(litellm)" in _run("validate", str(tmp_path)).stdout  # the default door of that model

    openai_server.enqueue(Reply.text("answered over the native door"))
    done = _run("kickoff", str(tmp_path), "--transport", "native", "--no-store", "-q")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "answered over the native door" and len(openai_server.requests) == 1
    refused = _run("kickoff", str(tmp_path), "--transport", "ftp")
    assert refused.returncode == 2 and "invalid choice: 'ftp'" in refused.stderr


def test_kickoff_names_the_agents_that_speak_the_text_protocol_before_the_run(tmp_path, openai_server):
    url = openai_server.url
    (tmp_path / "crew.yaml").write_text(
        textwrap.dedent(f"""
        agents:
          a: {{role: Analyst, goal: G, backstory: B, llm: {{model: openai/gpt-4o-mini, api_base: "{url}"}}}}
          b: {{role: Editor, goal: G, backstory: B, llm: {{model: openai/house-model-7b, api_base: "{url}"}}}}
        tasks:
          t1: {{description: d, expected_output: x, agent: a}}
          t2: {{description: d, expected_output: x, agent: b, context: [t1]}}
        """)
    )
    openai_server.enqueue(Reply.text("facts"), Reply.text("Final Answer: edited"))
    done = _run("kickoff", str(tmp_path), "--no-store")
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("protocol:")]
    assert said == [
        "protocol: text for Editor (the model is not known to call functions: its tool descriptions go in the "
        "prompt; tool calls it returns still run)"
    ]
    assert done.stderr.index("protocol:") < done.stderr.index("running")  # before anything runs
    quiet = _run("kickoff", str(tmp_path), "--no-store", "-q")
    assert "protocol:" not in quiet.stderr


def test_reading_the_protocol_never_imports_litellm():
    code = (
        "import sys; from crew.agent.modes import protocol_of; from crew.models import LLM; "
        "print(protocol_of(LLM('anthropic/claude-haiku-4-5')), '|', protocol_of(LLM('ollama/llama3')), '|', "
        "'litellm' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split(" | ") == ["function calling", "text", "False\n"], done.stderr
