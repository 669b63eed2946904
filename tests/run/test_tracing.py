"""OpenTelemetry spans of a run, checked with the SDK's in-memory exporter."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from crew import Agent, Crew, CrewRunError, Task, tool
from crew.common.secrets import register
from crew.testing import FunctionModel

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

from opentelemetry import trace
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

SECRET = "sk-span-secret-9999"


@pytest.fixture
def exporter(span_exporter: InMemorySpanExporter) -> InMemorySpanExporter:
    return span_exporter


@tool
def lookup(term: str) -> str:
    """Look a term up."""
    if term == "boom":
        raise RuntimeError(f"lookup failed with key {SECRET}")
    return f"definition of {term}"


def _reply(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
    text = messages[1]["content"]
    if "fail" in text:
        raise RuntimeError("the model is down")
    if tools and not any(m["role"] == "tool" for m in messages):
        return [{"name": "lookup", "args": {"term": "boom" if "explode" in text else "bees"}}]
    return "done"


def _crew(*descriptions: str) -> Crew:
    agent = Agent(role="Analyst", goal="answer", llm=FunctionModel(_reply, model="openai/gpt-4o-mini"), tools=[lookup])
    tasks = [Task(name=f"t{i + 1}", description=d, agent=agent) for i, d in enumerate(descriptions)]
    return Crew(agents=[agent], tasks=tasks, name="traced")


def test_one_span_per_run_task_turn_model_call_and_tool_call_with_genai_names(exporter) -> None:
    exporter.clear()
    out = _crew("look bees up", "explode").kickoff()
    spans = [s for s in exporter.get_finished_spans() if s.attributes.get("crew.run.kickoff.id") == out.run_id]
    by_name: dict[str, list[Any]] = {}
    for span in spans:
        by_name.setdefault(span.name, []).append(span)
    assert sorted(by_name) == [
        "chat openai/gpt-4o-mini",
        "execute_tool lookup",
        "invoke_agent Analyst",
        "invoke_workflow traced",
        "turn 1 Analyst",
        "turn 2 Analyst",
    ]
    (run,) = by_name["invoke_workflow traced"]
    assert run.parent is None and run.attributes["gen_ai.operation.name"] == "invoke_workflow"
    assert run.attributes["gen_ai.workflow.name"] == "traced"
    tasks = by_name["invoke_agent Analyst"]
    assert sorted(t.attributes["crew.task.name"] for t in tasks) == ["t1", "t2"]
    assert all(t.parent.span_id == run.context.span_id for t in tasks)
    assert all(t.attributes["gen_ai.agent.name"] == "Analyst" for t in tasks)
    task_ids = {t.context.span_id: t.attributes["crew.task.name"] for t in tasks}
    turns = by_name["turn 1 Analyst"] + by_name["turn 2 Analyst"]
    assert len(turns) == 4 and all(t.parent.span_id in task_ids for t in turns)
    turn_ids = {t.context.span_id for t in turns}
    chats = by_name["chat openai/gpt-4o-mini"]
    assert len(chats) == 4 and all(c.parent.span_id in turn_ids for c in chats)
    chat = chats[0]
    assert chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["gen_ai.request.model"] == "openai/gpt-4o-mini"
    assert chat.attributes["gen_ai.provider.name"] == "openai"
    assert chat.attributes["gen_ai.usage.input_tokens"] > 0 and "gen_ai.usage.output_tokens" in chat.attributes
    assert run.start_time <= chat.start_time <= chat.end_time <= run.end_time
    tools = by_name["execute_tool lookup"]
    assert len(tools) == 2 and all(t.parent.span_id in turn_ids for t in tools)
    assert {t.attributes["gen_ai.tool.name"] for t in tools} == {"lookup"}
    failed = [t for t in tools if t.attributes["crew.tool.status"] == "error"]
    assert len(failed) == 1 and failed[0].status.status_code == trace.StatusCode.ERROR
    assert failed[0].attributes["crew.task.name"] == "t2"


def test_a_failed_task_and_run_are_marked_and_secrets_stay_out_of_spans(exporter) -> None:
    exporter.clear()
    register(SECRET)
    with pytest.raises(CrewRunError) as caught:
        _crew("explode", "fail now").kickoff()
    run_id = caught.value.output.run_id
    spans = [s for s in exporter.get_finished_spans() if s.attributes.get("crew.run.kickoff.id") == run_id]
    failed = [s for s in spans if s.attributes.get("crew.task.status") == "failed"]
    assert len(failed) == 1 and failed[0].status.status_code == trace.StatusCode.ERROR
    assert "the model is down" in (failed[0].status.description or "")
    (run,) = [s for s in spans if s.name == "invoke_workflow traced"]
    assert run.status.status_code == trace.StatusCode.ERROR and run.attributes["crew.run.kickoff.status"] == "failed"
    dump = repr([(s.name, dict(s.attributes), s.status.description, s.events) for s in spans])
    assert SECRET not in dump


def test_a_failed_model_calls_span_names_the_errors_class(exporter, openai_server) -> None:
    """``error.type`` was the retry policy's reason ("not retryable"), not what went wrong."""
    from crew.models import LLM
    from crew.testing import Reply

    exporter.clear()
    openai_server.handler = lambda request: Reply.error(404, "no such model")
    llm = LLM("openai/gpt-4o-mini", api_base=openai_server.url, api_key="sk-none", num_retries=0)
    agent = Agent(role="Analyst", goal="answer", llm=llm)
    with pytest.raises(CrewRunError) as caught:
        Crew(agents=[agent], tasks=[Task(name="t", description="d", agent=agent)], name="traced").kickoff()
    run_id = caught.value.output.run_id
    spans = [s for s in exporter.get_finished_spans() if s.attributes.get("crew.run.kickoff.id") == run_id]
    (chat,) = [s for s in spans if s.name.startswith("chat ")]
    assert chat.status.status_code == trace.StatusCode.ERROR
    assert chat.attributes["error.type"] == "NotFoundError" and chat.attributes["crew.error.reason"] == "not retryable"


def test_without_a_configured_provider_nothing_is_traced_or_imported() -> None:
    code = textwrap.dedent(
        """
        import sys
        from crew import Agent, Crew, Task
        agent = Agent(role="A", goal="g", llm="test")
        Crew(agents=[agent], tasks=[Task(description="d", agent=agent)]).kickoff()
        print("otel imported:", any(m.startswith("opentelemetry") for m in sys.modules))
        import opentelemetry.trace  # imported, but no provider configured: still no spans
        from crew.run.tracing import start_tracing
        print("tracing:", start_tracing("r"))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert re.findall(r"(otel imported|tracing): (\w+)", done.stdout) == [
        ("otel imported", "False"),
        ("tracing", "None"),
    ]
