"""A run drawn as a self-contained HTML page: tasks as bars on a time axis, their calls inside.

Everything is inline (CSS, a few lines of script, the SVG itself), so the page opens
from a file or an attachment with no network. The drawing is made here, in SVG,
so it shows even with scripts off; the script only adds a tooltip that follows the
pointer (every mark also has an SVG ``<title>``, the browser's own tooltip) and a
summary line. Texts come from the store, where secrets were already scrubbed.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from crew.store.records import RunDetail, StoredModelCall, StoredTask, StoredToolCall

_WIDTH = 960  # the drawing area, after the label column
_LABEL = 200
_ROW = 44
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
.sub{font-size:11px;fill:#6b7486}
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
  document.body.setAttribute('data-rendered','yes');
})();
"""


def render_timeline(detail: RunDetail) -> str:
    run = detail.run
    t0, t1 = _span(detail)
    scale = _WIDTH / max(t1 - t0, 1e-6)
    models = _group(detail.model_calls)
    tools = _group(detail.tool_calls)
    rows: list[str] = []
    for i, task in enumerate(detail.tasks):
        rows.append(_task_row(task, i, t0, scale, models.get(task.name, []), tools.get(task.name, [])))
    height = _TOP + _ROW * max(len(detail.tasks), 1) + 10
    axis = _axis(t1 - t0, scale, height)
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_LABEL + _WIDTH + 20}" height="{height}" '
        f'role="img" aria-label="timeline of run {escape(run.id)}">{axis}{"".join(rows)}</svg>'
    )
    failed = sum(1 for t in detail.tasks if t.status == "failed")
    data = {
        "run": run.id,
        "tasks": len(detail.tasks),
        "model_calls": len(detail.model_calls),
        "tool_calls": len(detail.tool_calls),
        "failed": failed,
    }
    duration = "running" if run.duration is None else f"{run.duration:.2f}s"
    meta = (
        f"run {escape(run.id)} · {escape(run.status)} · {escape(run.mode)} · {duration} · "
        f"{run.usage.total_tokens:,} tokens · ${run.usage.cost:.4f}"
    )
    if run.continued_from:
        meta += f" · continues {escape(run.continued_from[:12])}"
    legend = "".join(
        f'<span><i class="sw" style="background:{color}"></i>{label}</span>'
        for label, color in (
            ("task done", "#cfe9d6"),
            ("task failed", "#f6d0d0"),
            ("reused output", "#e4e9f5"),
            ("model call", "#4a7bd0"),
            ("tool call", "#8b5cc7"),
            ("error", "#c62828"),
        )
    )
    error = f'<p class="st-failed">error: {escape(run.error)}</p>' if run.error else ""
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>crew run {escape(run.id[:12])} · {escape(run.crew)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{escape(run.crew)}</h1><div class='meta'>{meta}</div>{error}"
        f"<div class='legend'>{legend}</div><p id='summary'></p>{svg}{_table(detail)}"
        "<div id='tip'></div>"
        f"<script type='application/json' id='run-data'>{_script_json(data)}</script>"
        f"<script>{_JS}</script></body></html>\n"
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


def _task_row(
    task: StoredTask,
    index: int,
    t0: float,
    scale: float,
    models: list[StoredModelCall],
    tools: list[StoredToolCall],
) -> str:
    y = _TOP + index * _ROW
    status = "reused" if task.reused else task.status
    start = task.started_at if task.started_at is not None and not task.reused else t0
    end = task.finished_at if task.finished_at is not None and not task.reused else start
    x = _LABEL + (start - t0) * scale
    width = max((end - start) * scale, 3.0)
    duration = f"{end - start:.2f}s" if not task.reused else "reused from the earlier run"
    tip = (
        f"task {task.name} · {task.status}{' (reused)' if task.reused else ''}\nagent: {task.agent or '-'}\n"
        f"{duration} · {task.usage.total_tokens:,} tokens · ${task.usage.cost:.4f}"
        f"\n{len(models)} model calls, {len(tools)} tool calls"
    )
    if task.error:
        tip += f"\nerror: {task.error}"
    parts = [
        f'<g class="task" data-task="{escape(task.name)}" data-status="{escape(task.status)}">',
        f'<text class="label" x="8" y="{y + 17}">{escape(_clip(task.name, 24))}</text>',
        f'<text class="sub" x="8" y="{y + 32}">{escape(_clip(task.agent or "", 28))}</text>',
        f'<rect class="bar {status}" x="{x:.1f}" y="{y + 4}" width="{width:.1f}" height="{_ROW - 10}" '
        f'data-tip="{escape(tip)}"><title>{escape(tip)}</title></rect>',
    ]
    for call in models:
        cx = _LABEL + (call.started_at - t0) * scale
        cw = max(call.latency * scale, 2.0)
        label = (
            f"model {call.model} · {call.status}\n{call.latency:.2f}s · {call.usage.prompt_tokens:,} in + "
            f"{call.usage.completion_tokens:,} out tokens · ${call.usage.cost:.4f}\nfinish: {call.finish_reason or '-'}"
            f" · {call.message_count} messages ({call.message_chars:,} chars)"
        )
        if call.error:
            label += f"\nerror: {_clip(call.error, 300)}"
        klass = "model error" if call.status == "error" else "model"
        parts.append(
            f'<rect class="{klass}" x="{cx:.1f}" y="{y + 8}" width="{cw:.1f}" height="10" data-tip="{escape(label)}">'
            f"<title>{escape(label)}</title></rect>"
        )
    for call in tools:
        cx = _LABEL + (call.started_at - t0) * scale
        cw = max(call.duration * scale, 2.0)
        note = " (cache hit)" if call.cached else " (refused)" if call.refused else ""
        label = f"tool {call.tool}{note} · {call.status}\n{call.duration * 1000:.1f} ms"
        if call.status == "error" and call.result:
            label += f"\n{_clip(call.result, 300)}"
        klass = "tool error" if call.status == "error" else "tool cached" if call.cached else "tool"
        parts.append(
            f'<rect class="{klass}" x="{cx:.1f}" y="{y + 22}" width="{cw:.1f}" height="10" data-tip="{escape(label)}">'
            f"<title>{escape(label)}</title></rect>"
        )
    if task.status == "failed":
        parts.append(
            f'<text class="mark" x="{x + width + 4:.1f}" y="{y + 24}" data-tip="{escape(tip)}">✕ failed'
            f"<title>{escape(tip)}</title></text>"
        )
    parts.append("</g>")
    return "".join(parts)


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


def _group(calls: list[Any]) -> dict[str | None, list[Any]]:
    out: dict[str | None, list[Any]] = {}
    for call in calls:
        out.setdefault(call.task, []).append(call)
    return out


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
