"""The one scrubbing mechanism (crew.common.secrets) and the exits it guards: events, observations, outputs."""

from __future__ import annotations

from crew import Agent, Crew, Task, tool
from crew.common.events import bus
from crew.common.secrets import register, register_environment, register_headers, scrub, scrub_data
from crew.testing import FunctionModel
from crew.tools import ToolExecutor


def test_registered_values_and_key_shapes_are_replaced():
    register("registered-value-0001")
    register("short")  # too short to register: it would mask ordinary words
    text = (
        "a registered-value-0001 b short c sk-ant-api03-abcdefghijklmnopqrstuv d ghp_abcdefghijklmnopqrstuvwxyz012345"
    )
    assert scrub(text) == "a *** b short c *** d ***"
    assert scrub_data({"k": ["registered-value-0001", 3], "n": None}) == {"k": ["***", 3], "n": None}


def test_the_shortest_key_of_every_shape_is_found_alone_and_in_a_text():
    from crew.common.secrets import _SHORTEST_SHAPE

    shortest = [
        "sk-" + "a" * 16,
        "ghp_" + "a" * 20,
        "github_pat_" + "a" * 20,
        "xoxb-" + "a" * 10,
        "AKIA" + "A" * 16,
        "AIza" + "a" * 30,
        "hf_" + "a" * 20,
    ]
    for key in shortest:
        assert scrub(key) == "***", key
        assert scrub(f"x {key} y") == "x *** y", key
        assert scrub(key[:-1]) == key[:-1]  # one character short of its shape: not a key
    # texts shorter than the shortest shape skip the scan: it must really be the shortest
    assert min(map(len, shortest)) == _SHORTEST_SHAPE


def test_secret_looking_headers_and_environment_are_registered(monkeypatch):
    register_headers({"Authorization": "Bearer tok-123456789abc", "X-Trace": "trace-id-visible-1"})
    assert scrub("Bearer tok-123456789abc / tok-123456789abc / trace-id-visible-1") == "*** / *** / trace-id-visible-1"
    monkeypatch.setenv("MY_DB_PASSWORD", "hunter2-but-longer")
    monkeypatch.setenv("MY_DB_HOST", "db.internal.example")
    register_environment()
    assert scrub("hunter2-but-longer@db.internal.example") == "***@db.internal.example"


def test_a_tool_error_quoting_a_key_reaches_no_model_event_or_output(monkeypatch):
    """Item 8: the exception text went to the model, the answer and the events."""
    monkeypatch.setenv("PAYMENTS_API_KEY", "pk-live-abcdef0123456789")

    @tool
    def charge(amount: int) -> str:
        """Charge the card."""
        raise RuntimeError("denied for key pk-live-abcdef0123456789")

    seen_by_model: list[str] = []

    def model(messages, tools):
        seen_by_model.extend(str(m.get("content")) for m in messages)
        if not any(m["role"] == "tool" for m in messages):
            return [{"name": "charge", "args": {"amount": 1}}]
        return "echo: " + messages[-1]["content"] + " pk-live-abcdef0123456789"

    events = []
    unsubscribe = bus.subscribe(events.append)
    try:
        agent = Agent(role="cashier", goal="g", llm=FunctionModel(model), tools=[charge])
        out = Crew(agents=[agent], tasks=[Task(name="t", description="pay", agent=agent)]).kickoff()
    finally:
        unsubscribe()
    assert "denied for key ***" in "".join(seen_by_model)
    assert "pk-live-abcdef0123456789" not in "".join(seen_by_model)
    assert "pk-live" not in out.raw and "pk-live" not in out.tasks_output[0].raw
    assert all("pk-live-abcdef0123456789" not in str(e.data) for e in events)


def test_the_executor_scrubs_successful_observations_too():
    register("token-from-somewhere-42")

    @tool
    def leak(x: int) -> str:
        """Returns a secret."""
        return "the token is token-from-somewhere-42"

    result = ToolExecutor([leak]).execute({"name": "leak", "args": {"x": 1}})
    assert result.content == "the token is ***"
