"""OpenTelemetry spans of a run, made from its events (the optional ``crew-agents[otel]`` extra).

Only when the application has imported OpenTelemetry and configured a tracer provider
does a run get traced: crew itself never imports ``opentelemetry`` (it looks in
``sys.modules``), never configures a provider or an exporter, so nothing leaves the
machine unless the user set that up. Spans follow the GenAI semantic conventions:

- the run: ``invoke_workflow <crew>`` (``gen_ai.operation.name=invoke_workflow``, ``gen_ai.workflow.name``)
- each task: ``invoke_agent <role>`` (``gen_ai.agent.name``, ``crew.task.name``)
- each agent turn: ``turn <n> <role>`` (``crew.turn``, ``crew.turn.kind``)
- each model call: ``chat <model>`` (``gen_ai.request.model``, ``gen_ai.usage.input_tokens`` ...)
- each tool call: ``execute_tool <tool>`` (``gen_ai.tool.name``, ``crew.tool.cached``)

every one with ``crew.run.kickoff.id`` (and ``crew.task.name`` below the run). Events arrive when
a step ends, so spans are given their real start and end times explicitly. No message,
argument or result text goes into a span: only names, counts and timings.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

from crew.common.events import Event, bus


def start_tracing(run_id: str) -> Callable[[], None] | None:
    """Trace run ``run_id`` when OpenTelemetry is set up; returns the function that stops it (or None)."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return None
    provider = trace.get_tracer_provider()
    if isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
        return None  # imported, but nobody configured where spans go
    tracer = _RunTracer(trace, provider.get_tracer("crew"), run_id)
    unsubscribe = bus.subscribe(tracer.handle, run_id=run_id)

    def stop() -> None:
        unsubscribe()
        tracer.close()

    return stop


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


class _RunTracer:
    def __init__(self, trace: Any, tracer: Any, run_id: str) -> None:
        self.trace = trace
        self.tracer = tracer
        self.run_id = run_id
        self.run: Any = None
        self.tasks: dict[str, Any] = {}
        self.turns: dict[tuple[str | None, str | None], Any] = {}
        self.lock = threading.Lock()

    def handle(self, event: Event) -> None:
        if event.run_id != self.run_id:
            return
        method = _HANDLERS.get(event.type) or (_task_end if event.type in _TASK_ENDS else None)
        if method is not None:
            with self.lock:
                method(self, event.data, event.time)

    def close(self) -> None:
        with self.lock:
            for span in [*self.turns.values(), *self.tasks.values()]:
                span.end()
            self.turns.clear()
            self.tasks.clear()
            if self.run is not None:
                self.run.end()
                self.run = None

    # -- spans ---------------------------------------------------------------------------

    def span(self, name: str, parent: Any, start: float, attributes: dict[str, Any]) -> Any:
        context = self.trace.set_span_in_context(parent) if parent is not None else None
        attributes = {k: v for k, v in attributes.items() if v is not None}
        return self.tracer.start_span(name, context=context, start_time=_ns(start), attributes=attributes)

    def base(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"crew.run.kickoff.id": self.run_id, "crew.task.name": data.get("task")}

    def turn(self, data: dict[str, Any], start: float) -> Any:
        key = (data.get("task"), data.get("agent"))
        span = self.turns.get(key)
        if span is None:
            parent = self.tasks.get(str(data.get("task"))) or self.run
            attributes = {**self.base(data), "gen_ai.agent.name": data.get("agent")}
            span = self.turns[key] = self.span(f"turn {data.get('agent') or ''}".strip(), parent, start, attributes)
        return span

    def error(self, span: Any, message: str, kind: str) -> None:
        from opentelemetry.trace import Status, StatusCode

        span.set_attribute("error.type", kind)
        span.set_status(Status(StatusCode.ERROR, message))


def _run_start(self: _RunTracer, data: dict[str, Any], at: float) -> None:
    attributes = {
        "crew.run.kickoff.id": self.run_id,
        "gen_ai.operation.name": "invoke_workflow",
        "gen_ai.workflow.name": data.get("crew"),
        "crew.process": data.get("process"),
    }
    self.run = self.span(f"invoke_workflow {data.get('crew')}", None, at, attributes)


def _run_done(self: _RunTracer, data: dict[str, Any], at: float) -> None:
    if self.run is None:
        return
    status = str(data.get("status"))
    usage = data.get("usage") or {}
    self.run.set_attribute("crew.run.kickoff.status", status)
    for key, name in (
        ("prompt_tokens", "gen_ai.usage.input_tokens"),
        ("completion_tokens", "gen_ai.usage.output_tokens"),
    ):
        if key in usage:
            self.run.set_attribute(name, int(usage[key]))
    if status not in ("done",):
        self.error(self.run, f"run {status}", status)
    for span in [*self.turns.values(), *self.tasks.values()]:
        span.end(end_time=_ns(at))
    self.turns.clear()
    self.tasks.clear()
    self.run.end(end_time=_ns(at))
    self.run = None


def _task_start(self: _RunTracer, data: dict[str, Any], at: float) -> None:
    name = str(data.get("task"))
    attributes = {**self.base(data), "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": data.get("agent")}
    self.tasks[name] = self.span(f"invoke_agent {data.get('agent') or name}", self.run, at, attributes)


def _task_end(self: _RunTracer, data: dict[str, Any], at: float) -> None:
    name = str(data.get("task"))
    span = self.tasks.pop(name, None)
    if span is None:
        return  # skipped before it started: no span
    for key in [k for k in self.turns if k[0] == name]:
        self.turns.pop(key).end(end_time=_ns(at))
    output = data.get("output")
    if isinstance(output, dict):  # replayed from a Ray worker: the output as JSON data
        status, usage = output.get("status"), output.get("usage") or {}
        tokens = (usage.get("prompt_tokens"), usage.get("completion_tokens"))
    else:
        usage = getattr(output, "usage", None)
        status, tokens = getattr(output, "status", None), (None, None)
        if usage is not None:
            tokens = (usage.prompt_tokens, usage.completion_tokens)
    status = status or "done"
    span.set_attribute("crew.task.status", status)
    if tokens[0] is not None:
        span.set_attribute("gen_ai.usage.input_tokens", int(tokens[0]))
        span.set_attribute("gen_ai.usage.output_tokens", int(tokens[1] or 0))
    if status == "failed":
        self.error(span, str(data.get("error") or "failed"), "task_failed")
    span.end(end_time=_ns(at))


def _turn_end(self: _RunTracer, data: dict[str, Any], at: float) -> None:
    span = self.turns.pop((data.get("task"), data.get("agent")), None)
    if span is None:
        return
    span.update_name(f"turn {data.get('turn')} {data.get('agent') or ''}".strip())
    span.set_attribute("crew.turn", int(data.get("turn") or 0))
    span.set_attribute("crew.turn.kind", str(data.get("kind")))
    span.end(end_time=_ns(at))


def _model_call(self: _RunTracer, data: dict[str, Any], at: float) -> None:
    start = at - float(data.get("latency") or 0.0)
    model = str(data.get("model") or "")
    attributes = {
        **self.base(data),
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": model,
        "gen_ai.provider.name": model.split("/", 1)[0] if "/" in model else None,
        "gen_ai.agent.name": data.get("agent"),
        "gen_ai.usage.input_tokens": int(data.get("prompt_tokens") or 0),
        "gen_ai.usage.output_tokens": int(data.get("completion_tokens") or 0),
        "gen_ai.response.finish_reasons": [str(data["finish_reason"])] if data.get("finish_reason") else None,
        "crew.cost_usd": float(data.get("cost") or 0.0),
        "crew.attempts": int(data.get("attempts") or 1),
    }
    span = self.span(f"chat {model}", self.turn(data, start), start, attributes)
    span.end(end_time=_ns(at))


def _model_error(self: _RunTracer, data: dict[str, Any], at: float) -> None:
    model = str(data.get("model") or "")
    attributes = {**self.base(data), "gen_ai.operation.name": "chat", "gen_ai.request.model": model}
    span = self.span(f"chat {model}", self.turn(data, at), at, attributes)
    error = str(data.get("error") or "failed")
    kind = error.split(":", 1)[0].split(" (", 1)[0].strip()  # "NotFoundError (HTTP 404): ..." -> NotFoundError
    span.set_attribute("crew.error.reason", str(data.get("reason") or ""))  # why no attempt was left
    self.error(span, error, kind if kind.isidentifier() else "model_error")
    span.end(end_time=_ns(at))


def _tool_call(self: _RunTracer, data: dict[str, Any], at: float) -> None:
    start = at - float(data.get("duration") or 0.0)
    tool = str(data.get("tool"))
    parent = self.turns.get((data.get("task"), data.get("agent"))) or self.tasks.get(str(data.get("task"))) or self.run
    attributes = {
        **self.base(data),
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "gen_ai.agent.name": data.get("agent"),
        "crew.tool.cached": bool(data.get("cached")),
        "crew.tool.refused": bool(data.get("refused")),
        "crew.tool.status": str(data.get("status")),
    }
    span = self.span(f"execute_tool {tool}", parent, start, attributes)
    if data.get("status") == "error":
        self.error(span, f"tool {tool} failed", "tool_error")
    span.end(end_time=_ns(at))


_HANDLERS: dict[str, Callable[[_RunTracer, dict[str, Any], float], None]] = {
    "run.start": _run_start,
    "run.done": _run_done,
    "task.start": _task_start,
    "agent.turn": _turn_end,
    "llm.call": _model_call,
    "llm.error": _model_error,
    "tool.call": _tool_call,
}
_TASK_ENDS = frozenset({"task.done", "task.failed", "task.skipped"})
