"""TestModel pointed at real tools: values the tools accept, and hands off what a server marks risky."""

from __future__ import annotations

import random
from typing import Any

import pytest
from pydantic import BaseModel, Field

from crew import Agent, Task
from crew.mcp import MCPServer
from crew.testing import TestModel, example_value

pytest.importorskip("mcp")


def _time_server() -> MCPServer:
    return MCPServer.stdio("mcp-server-time", args=["--local-timezone", "UTC"], name="time")


def test_the_real_time_server_accepts_every_call_given_the_crews_inputs() -> None:
    # the time server wants real IANA zones and an HH:MM time; its schema says only "string"
    model = TestModel(inputs={"city": "Lisbon", "timezone": "Europe/Lisbon"})
    agent = Agent(role="Timekeeper", goal="Tell the time", llm=model, tools=[_time_server()])
    out = agent.execute_task(Task(description="What time is it in Lisbon?", expected_output="the time"))
    calls = {c.name: c for c in out.tool_calls}
    assert set(calls) == {"get_current_time", "convert_time"}
    assert all(c.status == "success" for c in calls.values()), [c.result for c in calls.values()]
    assert calls["get_current_time"].args == {"timezone": "Europe/Lisbon"}
    # source_timezone and target_timezone end with an input's name; the time comes from "(HH:MM)"
    assert calls["convert_time"].args["source_timezone"] == "Europe/Lisbon"
    assert calls["convert_time"].args["time"] == "10:30"


class Booking(BaseModel):
    city: str
    nights: int = Field(default=2, ge=1)
    code: str = Field(description='The booking code, e.g. "BK-1042".', pattern=r"^BK-\d+$")
    kind: str = Field(json_schema_extra={"examples": ["hotel", "hostel"]})
    currency: str = "EUR"


@pytest.mark.parametrize("seed", range(5))
def test_values_come_from_what_the_schema_offers(seed: int) -> None:
    schema = Booking.model_json_schema()
    value = example_value(schema, random.Random(seed), inputs={"city": "Oslo", "code": "not a code"})
    assert value["city"] == "Oslo"  # the input of that name
    assert value["code"] == "BK-1042"  # the input did not fit the pattern; the description's example does
    assert value["kind"] == "hotel"  # the first of the examples
    assert value.get("nights", 2) == 2 and value.get("currency", "EUR") == "EUR"  # defaults
    Booking.model_validate(value)


NOT_THE_INPUT = object()


@pytest.mark.parametrize(
    ("schema", "name", "inputs", "expected"),
    [
        ({"type": "string"}, "source_timezone", {"timezone": "Asia/Tokyo"}, "Asia/Tokyo"),  # its last word
        ({"type": "string"}, "homeCity", {"city": "Rome"}, "Rome"),  # camelCase words
        ({"type": "string"}, "lifetime", {"time": "10:00"}, NOT_THE_INPUT),  # "time" is no word of the name
        ({"type": "integer", "maximum": 5}, "days", {"days": 9}, NOT_THE_INPUT),  # out of bounds
        ({"type": "integer"}, "days", {"days": 3}, 3),
        ({"enum": ["a", "b"]}, "grade", {"grade": "b"}, "b"),
        (
            {"type": "string", "format": "date-time", "examples": ["2030-01-01T00:00:00Z"]},
            "at",
            {},
            "2030-01-01T00:00:00Z",
        ),
    ],
)
def test_inputs_are_used_where_they_fit(schema: dict[str, Any], name: str, inputs: dict, expected: Any) -> None:
    value = example_value({"type": "object", "properties": {name: schema}, "required": [name]}, inputs=inputs)[name]
    if expected is NOT_THE_INPUT:
        assert value not in inputs.values()
    else:
        assert value == expected


def _risky_server(calls: list[str]) -> Any:
    from mcp.server.mcpserver import MCPServer as SDKServer
    from mcp_types import ToolAnnotations

    server = SDKServer("notes")

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False))
    def read_note(name: str) -> str:
        """Read a note."""
        calls.append("read_note")
        return f"note {name}"

    @server.tool(annotations=ToolAnnotations(destructiveHint=True))
    def delete_note(name: str) -> str:
        """Delete a note for good."""
        calls.append("delete_note")
        return "deleted"

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=True))
    def fetch_url(url: str) -> str:
        """Fetch a page from the internet."""
        calls.append("fetch_url")
        return "a page"

    @server.tool()
    def count_notes() -> int:
        """How many notes there are (no hints: nothing marked)."""
        calls.append("count_notes")
        return 3

    return server


@pytest.mark.parametrize(("risky", "expected"), [(False, ["count_notes", "read_note"]), (True, None)])
def test_tools_a_server_marks_destructive_or_open_world_are_left_alone(risky: bool, expected: Any) -> None:
    calls: list[str] = []
    server = MCPServer.in_process(_risky_server(calls), name="notes")
    model = TestModel(risky_tools=risky)
    agent = Agent(role="Clerk", goal="Keep notes", llm=model, tools=[server])
    out = agent.execute_task(Task(description="Tidy the notes", expected_output="a summary"))
    everything = ["count_notes", "delete_note", "fetch_url", "read_note"]
    assert sorted(calls) == (expected or everything)
    assert sorted(c.name for c in out.tool_calls) == (expected or everything)
