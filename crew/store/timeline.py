"""A run drawn as a self-contained HTML page: tasks as bars on a time axis, their calls inside.

Everything is inline (CSS, a few lines of script, the SVG itself), so the page opens
from a file or an attachment with no network. The drawing is made here, in SVG,
so it shows even with scripts off; the script only adds a tooltip that follows the
pointer (every mark also has an SVG ``<title>``, the browser's own tooltip), a summary
line, and opens a step when its mark is clicked. Texts come from the store, where
secrets were already scrubbed.

What the page shows beyond the bars: the start-up before the first task (MCP servers
start there, one connection per run; each server a mark, named, with its time and tool
count or its failure), a task that never started as a row without a bar
(not as a bar across the run), the work an agent delegated in a lane of its own under
the task, and every step (a model call's prompt and reply, a tool call's arguments and
result) in a list below, each mark a link to its step (``#step-m3``), opened on click.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from crew.store.records import RunDetail, StoredModelCall, StoredStartup, StoredTask, StoredToolCall
from crew.store.timeline_recalls import recalls_html

_WIDTH = 960  # the drawing area, after the label column
_LABEL = 200
_ROW = 44
_LANE = 30  # each agent a task delegated to gets a lane this high under the task's bar
_TOP = 30

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d2430;background:#fff}
h1{font-size:20px;margin:0 0 4px} .meta{color:#586174;margin-bottom:12px}
.legend span{display:inline-block;margin-right:14px} .sw{width:12px;height:12px;display:inline-block;
vertical-align:middle;margin-right:4px;border-radius:2px}
svg{border:1px solid #dfe3ea;border-radius:6px;background:#fbfcfe}
.task rect.bar{rx:4} .done{fill:#cfe9d6;stroke:#3b9a57} .failed{fill:#f6d0d0;stroke:#c62828;stroke-width:2}
.skipped{fill:#eceff3;stroke:#9aa3b2;stroke-dasharray:4 3} .running,.pending{fill:#fdebc8;stroke:#d08a00}
.reused{fill:#e4e9f5;stroke:#7b8bb5;stroke-dasharray:2 2}
.model{fill:#4a7bd0} .model.error{fill:#c62828} .tool{fill:#8b5cc7} .tool.error{fill:#c62828}
.tool.cached{fill:#c5b3e6} .mark{fill:#c62828;font-weight:bold}
.axis{stroke:#c9cfda} .tick{fill:#6b7486;font-size:11px} .label{font-size:13px;fill:#1d2430}
.sub{font-size:11px;fill:#6b7486} .startup{fill:#eef0f4;stroke:#9aa3b2} .lane{font-size:11px;fill:#586174}
.server{fill:#2f8f83} .server.error{fill:#c62828}
.never{font-size:12px;fill:#6b7486;font-style:italic}
details.step{border:1px solid #e6e9ef;border-radius:4px;margin:6px 0;padding:4px 8px}
details.step[open]{background:#f7f9fc} details.step pre{white-space:pre-wrap;max-height:420px;overflow:auto;
background:#fff;border:1px solid #e6e9ef;padding:6px;font-size:12px}
#tip{position:fixed;pointer-events:none;background:#1d2430;color:#fff;padding:6px 8px;border-radius:4px;
font-size:12px;white-space:pre;display:none;max-width:480px}
table{border-collapse:collapse;margin-top:18px;width:100%} td,th{border-bottom:1px solid #e6e9ef;padding:6px 8px;
text-align:left;vertical-align:top} th{background:#f3f5f9} td.out{white-space:pre-wrap;max-width:520px;color:#333}
.st-failed{color:#c62828;font-weight:600}
"""

_JS = """
(function(){
  var tip=document.getElementById('tip');
  document.querySelectorAll('[data-tip]').forEach(function(el){
    el.addEventListener('mousemove',function(e){tip.textContent=el.getAttribute('data-tip');
      tip.style.display='block';tip.style.left=(e.clientX+12)+'px';tip.style.top=(e.clientY+12)+'px';});
    el.addEventListener('mouseleave',function(){tip.style.display='none';});
  });
  var d=JSON.parse(document.getElementById('run-data').textContent);
  var s=document.getElementById('summary');
  s.textContent=d.tasks+' tasks, '+d.model_calls+' model calls, '+d.tool_calls+' tool calls, '+
    d.failed+' failed';
  function openStep(){var id=location.hash.slice(1);var el=id&&document.getElementById(id);
    if(el&&el.tagName==='DETAILS'){el.open=true;el.scrollIntoView();}}
  window.addEventListener('hashchange',openStep);openStep();
  document.body.setAttribute('data-rendered','yes');
})();
"""


def render_timeline(detail: RunDetail) -> str:
    run = detail.run
    t0, t1 = _span(detail)
    scale = _WIDTH / max(t1 - t0, 1e-6)
    steps = _Steps(detail)
    rows, y = [_startup_row(detail, t0, scale)], _TOP + _ROW
    for task in detail.tasks:
        drawn, height = _task_row(task, y, _Frame(t0, scale), steps)
        rows.append(drawn)
        y += height
    height = y + 10
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_LABEL + _WIDTH + 20}" height="{height}" '
        f'role="img" aria-label="timeline of run {escape(run.id)}">{_axis(t1 - t0, scale, height)}{"".join(rows)}</svg>'
    )
    error = f'<p class="st-failed">error: {escape(run.error)}</p>' if run.error else ""
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>crew run {escape(run.id[:12])} · {escape(run.crew)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{escape(run.crew)}</h1><div class='meta'>{_meta(detail)}</div>{error}"
        f"<div class='legend'>{_legend()}</div><p id='summary'></p>{svg}{_table(detail)}{recalls_html(detail)}"
        f"{steps.html()}"
        "<div id='tip'></div>"
        f"<script type='application/json' id='run-data'>{_script_json(_summary(detail))}</script>"
        f"<script>{_JS}</script></body></html>\n"
    )


def _summary(detail: RunDetail) -> dict[str, Any]:
    return {
        "run": detail.run.id,
        "tasks": len(detail.tasks),
        "model_calls": len(detail.model_calls),
        "tool_calls": len(detail.tool_calls),
        "failed": sum(1 for t in detail.tasks if t.status == "failed"),
    }


def _meta(detail: RunDetail) -> str:
    run = detail.run
    duration = "running" if run.duration is None else f"{run.duration:.2f}s"
    meta = (
        f"run {escape(run.id)} · {escape(run.status)} · {escape(run.mode)} · {duration} · "
        f"{run.usage.total_tokens:,} tokens · ${run.usage.cost:.4f}"
    )
    if run.continued_from:
        meta += f" · continues {escape(run.continued_from[:12])}"
    return meta


def _legend() -> str:
    return "".join(
        f'<span><i class="sw" style="background:{color}"></i>{label}</span>'
        for label, color in (
            ("task done", "#cfe9d6"),
            ("task failed", "#f6d0d0"),
            ("reused output", "#e4e9f5"),
            ("start-up", "#eef0f4"),
            ("MCP server start", "#2f8f83"),
            ("model call", "#4a7bd0"),
            ("tool call", "#8b5cc7"),
            ("error", "#c62828"),
        )
    )


def write_timeline(detail: RunDetail, path: str | Path) -> Path:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_timeline(detail), encoding="utf-8")
    return target


# -- drawing ---------------------------------------------------------------------------------


def _span(detail: RunDetail) -> tuple[float, float]:
    run = detail.run
    times = [run.started_at, run.finished_at or run.started_at]
    for task in detail.tasks:
        times += [t for t in (task.started_at, task.finished_at) if t is not None and not task.reused]
    for call in [*detail.model_calls, *detail.tool_calls]:
        times.append(call.started_at)
    for step in detail.startup:
        times += [step.started_at, step.started_at + step.duration]
    start = min(times)
    return start, max(times) if max(times) > start else start + 1.0


def _axis(span: float, scale: float, height: int) -> str:
    step = _nice_step(span / 6)
    out = [f'<line class="axis" x1="{_LABEL}" y1="{_TOP - 8}" x2="{_LABEL + _WIDTH}" y2="{_TOP - 8}"/>']
    tick = 0.0
    while tick <= span + 1e-9:
        x = _LABEL + tick * scale
        out.append(f'<line class="axis" x1="{x:.1f}" y1="{_TOP - 12}" x2="{x:.1f}" y2="{height - 6}" opacity="0.35"/>')
        out.append(f'<text class="tick" x="{x + 2:.1f}" y="{_TOP - 14}">{_seconds(tick)}</text>')
        tick += step
    return "".join(out)


class _Frame:
    """Seconds to pixels: where an instant of the run is drawn."""

    def __init__(self, t0: float, scale: float) -> None:
        self.t0, self.scale = t0, scale

    def x(self, at: float) -> float:
        return _LABEL + (at - self.t0) * self.scale

    def width(self, seconds: float, least: float) -> float:
        return max(seconds * self.scale, least)


class _Steps:
    """Every model and tool call of the run as a step the page can open: its mark links to it."""

    def __init__(self, detail: RunDetail) -> None:
        self.tasks = {task.name for task in detail.tasks}
        self.models = _group(detail.model_calls, self.tasks)
        self.tools = _group(detail.tool_calls, self.tasks)
        self.items: list[str] = []

    def link(self, kind: str, call: StoredModelCall | StoredToolCall) -> str:
        return f"step-{kind}{call.id}"

    def add(self, kind: str, call: StoredModelCall | StoredToolCall, title: str) -> None:
        if isinstance(call, StoredModelCall):
            parts = [("prompt (the messages sent)", _pretty(call.messages)), ("reply", call.reply or call.error or "")]
        else:
            parts = [("arguments", _pretty(call.args)), ("result", call.result or "")]
        body = "".join(f"<h4>{label}</h4><pre>{escape(text)}</pre>" for label, text in parts)
        self.items.append(
            f"<details class='step' id='{self.link(kind, call)}'><summary>{escape(title)}</summary>{body}</details>"
        )

    def html(self) -> str:
        if not self.items:
            return ""
        return "<h2>Steps</h2><p class='meta'>click a mark on the timeline to open its step</p>" + "".join(self.items)


def _startup_row(detail: RunDetail, t0: float, scale: float) -> str:
    """From the run's start to its first task: MCP servers start here, before any task can run.

    Each server the run opened is a mark inside the row, from when it began to when it
    was ready (or failed), named in its tooltip; the row's label names them all.
    """
    run, y = detail.run, _TOP
    starts = [t.started_at for t in detail.tasks if t.started_at is not None and not t.reused]
    first = min(starts, default=run.finished_at or run.started_at)
    seconds = max(first - run.started_at, 0.0)
    servers = [step for step in detail.startup if step.kind == "mcp"]
    tip = f"start-up · {seconds:.2f}s\nfrom the run's start to its first task: MCP servers start, inputs are checked"
    tip += "".join(f"\n{_server_tip(step)}" for step in servers)
    x, width = _LABEL + (run.started_at - t0) * scale, max(seconds * scale, 2.0)
    names = f" · MCP: {', '.join(step.name for step in servers)}" if servers else ""
    marks = "".join(_server_mark(step, y, t0, scale) for step in servers)
    return (
        f'<g class="phase" data-phase="start-up"><text class="label" x="8" y="{y + 17}">start-up</text>'
        f'<text class="sub" x="8" y="{y + 32}">{escape(_clip(f"{seconds:.2f}s{names}", 30))}</text>'
        f'<rect class="startup" x="{x:.1f}" y="{y + 4}" width="{width:.1f}" height="{_ROW - 10}" '
        f'data-tip="{escape(tip)}"><title>{escape(tip)}</title></rect>{marks}</g>'
    )


def _server_tip(step: StoredStartup) -> str:
    head = f"MCP server '{step.name}' ({step.transport or '?'})"
    if step.error is not None:
        return f"{head} · failed after {step.duration:.2f}s: {_clip(step.error, 300)}"
    return f"{head} · ready in {step.duration:.2f}s · {step.tools} tool{'s' if step.tools != 1 else ''}"


def _server_mark(step: StoredStartup, y: int, t0: float, scale: float) -> str:
    tip = escape(_server_tip(step))
    x, width = _LABEL + (step.started_at - t0) * scale, max(step.duration * scale, 3.0)
    kind = "server error" if step.error is not None else "server"
    return (
        f'<rect class="{kind}" data-server="{escape(step.name)}" x="{x:.1f}" y="{y + 14}" width="{width:.1f}" '
        f'height="14" data-tip="{tip}"><title>{tip}</title></rect>'
    )


def _task_row(task: StoredTask, y: int, frame: _Frame, steps: _Steps) -> tuple[str, int]:
    """One task: its bar (none if it never started), then a lane per agent that worked on it."""
    models, tools = steps.models.get(task.name, []), steps.tools.get(task.name, [])
    tip = _task_tip(task, models, tools)
    parts = [
        f'<g class="task" data-task="{escape(task.name)}" data-status="{escape(task.status)}">',
        f'<text class="label" x="8" y="{y + 17}">{escape(_clip(task.name, 24))}</text>',
        f'<text class="sub" x="8" y="{y + 32}">{escape(_clip(task.agent or "", 28))}</text>',
        _bar(task, y, frame, tip),
    ]
    lanes = _lanes(task, models, tools)
    for i, (agent, (lane_models, lane_tools)) in enumerate(lanes.items()):
        top = y + i * _LANE
        if i:
            parts.append(f'<text class="lane" x="20" y="{top + 20}">↳ delegated to {escape(_clip(agent, 22))}</text>')
        parts += [_model_mark(call, top, frame, steps) for call in lane_models]
        parts += [_tool_mark(call, top, frame, steps) for call in lane_tools]
    parts.append("</g>")
    return "".join(parts), _ROW + max(len(lanes) - 1, 0) * _LANE


def _task_tip(task: StoredTask, models: list[StoredModelCall], tools: list[StoredToolCall]) -> str:
    if task.reused:
        took = "reused from the earlier run"
    elif task.started_at is None:
        took = "never started"
    else:
        took = f"{(task.finished_at or task.started_at) - task.started_at:.2f}s"
    tip = (
        f"task {task.name} · {task.status}{' (reused)' if task.reused else ''}\nagent: {task.agent or '-'}\n"
        f"{took} · {task.usage.total_tokens:,} tokens · ${task.usage.cost:.4f}"
        f"\n{len(models)} model calls, {len(tools)} tool calls"
    )
    return tip + (f"\nerror: {task.error}" if task.error else "")


def _bar(task: StoredTask, y: int, frame: _Frame, tip: str) -> str:
    """The task's bar; a task that never started gets a note where its bar would be, not a bar."""
    if task.started_at is None and not task.reused:
        return (
            f'<text class="never" x="{_LABEL + 6}" y="{y + 24}" data-tip="{escape(tip)}">{escape(task.status)}: '
            f"never started<title>{escape(tip)}</title></text>"
        )
    start = frame.t0 if task.reused or task.started_at is None else task.started_at
    end = task.finished_at if task.finished_at is not None and not task.reused else start
    x, width = frame.x(start), frame.width(end - start, 3.0)
    status = "reused" if task.reused else task.status
    bar = (
        f'<rect class="bar {status}" x="{x:.1f}" y="{y + 4}" width="{width:.1f}" height="{_ROW - 10}" '
        f'data-tip="{escape(tip)}"><title>{escape(tip)}</title></rect>'
    )
    if task.status == "failed":
        bar += (
            f'<text class="mark" x="{x + width + 4:.1f}" y="{y + 24}" data-tip="{escape(tip)}">✕ failed'
            f"<title>{escape(tip)}</title></text>"
        )
    return bar


def _lanes(
    task: StoredTask, models: list[StoredModelCall], tools: list[StoredToolCall]
) -> dict[str, tuple[list[StoredModelCall], list[StoredToolCall]]]:
    """The calls of a task by the agent that made them: the task's own agent first, then each it delegated to."""
    lanes: dict[str, tuple[list[StoredModelCall], list[StoredToolCall]]] = {task.agent or "": ([], [])}
    for call in models:
        lanes.setdefault(call.agent or task.agent or "", ([], []))[0].append(call)
    for call in tools:
        lanes.setdefault(call.agent or task.agent or "", ([], []))[1].append(call)
    return lanes


def _model_mark(call: StoredModelCall, y: int, frame: _Frame, steps: _Steps) -> str:
    label = (
        f"model {call.model} · {call.status}\n{call.latency:.2f}s · {call.usage.prompt_tokens:,} in + "
        f"{call.usage.completion_tokens:,} out tokens · ${call.usage.cost:.4f}\nfinish: {call.finish_reason or '-'}"
        f" · {call.message_count} messages ({call.message_chars:,} chars)"
    )
    if call.error:
        label += f"\nerror: {_clip(call.error, 300)}"
    steps.add("m", call, f"model {call.model} · {call.agent or '-'} · {call.status} · {call.latency:.2f}s")
    klass = "model error" if call.status == "error" else "model"
    return _mark(klass, steps.link("m", call), frame.x(call.started_at), y + 8, frame.width(call.latency, 2.0), label)


def _tool_mark(call: StoredToolCall, y: int, frame: _Frame, steps: _Steps) -> str:
    note = " (cache hit)" if call.cached else " (refused)" if call.refused else ""
    label = f"tool {call.tool}{note} · {call.status}\n{call.duration * 1000:.1f} ms"
    if call.status == "error" and call.result:
        label += f"\n{_clip(call.result, 300)}"
    steps.add("t", call, f"tool {call.tool}{note} · {call.agent or '-'} · {call.status}")
    klass = "tool error" if call.status == "error" else "tool cached" if call.cached else "tool"
    return _mark(klass, steps.link("t", call), frame.x(call.started_at), y + 22, frame.width(call.duration, 2.0), label)


def _mark(klass: str, link: str, x: float, y: int, width: float, label: str) -> str:
    """A call drawn as a link to its step: a click opens the step's prompt and reply below."""
    return (
        f'<a href="#{link}"><rect class="{klass}" x="{x:.1f}" y="{y}" width="{width:.1f}" height="10" '
        f'data-tip="{escape(label)}"><title>{escape(label)}</title></rect></a>'
    )


def _table(detail: RunDetail) -> str:
    rows = []
    for task in detail.tasks:
        took = (
            "-" if task.started_at is None or task.finished_at is None else f"{task.finished_at - task.started_at:.2f}s"
        )
        status = task.status + (" (reused)" if task.reused else "")
        text = task.error or task.raw
        rows.append(
            f"<tr><td>{escape(task.name)}</td><td>{escape(task.agent or '-')}</td>"
            f"<td class='st-{escape(task.status)}'>{escape(status)}</td><td>{took}</td>"
            f"<td>{task.usage.total_tokens:,}</td><td>${task.usage.cost:.4f}</td>"
            f"<td class='out'>{escape(_clip(text, 1200))}</td></tr>"
        )
    return (
        "<table><thead><tr><th>task</th><th>agent</th><th>status</th><th>time</th><th>tokens</th><th>cost</th>"
        f"<th>output</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _group(calls: list[Any], tasks: set[str]) -> dict[str | None, list[Any]]:
    """Calls by task; a delegated task (``task -> Coworker``) is filed under the task that delegated it."""
    out: dict[str | None, list[Any]] = {}
    for call in calls:
        name = call.task
        if name is not None and name not in tasks and " -> " in name:
            name = name.split(" -> ", 1)[0]
        out.setdefault(name, []).append(call)
    return out


def _pretty(value: Any) -> str:
    """A stored JSON text (or value) indented to read; capped text that is no longer JSON as it is."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, ensure_ascii=False, indent=2)


def _nice_step(raw: float) -> float:
    for step in (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600):
        if step >= raw:
            return float(step)
    return 1800.0


def _seconds(value: float) -> str:
    return f"{value:.3g}s"


def _script_json(value: Any) -> str:
    return json.dumps(value).replace("<", "\\u003c")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
