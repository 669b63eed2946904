"""A flow run drawn as a page: each step run a bar on the time axis, its crews' tasks under it.

The same page as a crew's timeline (``crew.store.timeline``: inline CSS, SVG that shows with
scripts off, every mark a link to its model or tool call below), with rows for steps: a step
run's bar, then for each crew it kicked off (a child run: ``parent_step``) that crew's tasks
with their calls, indented under it. A step a resume handed on is drawn as reused.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from crew.store.records import RunDetail, StoredStep
from crew.store.timeline import (
    _CSS,  # pyright: ignore[reportPrivateUsage] - one page style for crews and flows, not a copy
    _JS,  # pyright: ignore[reportPrivateUsage]
    _LABEL,  # pyright: ignore[reportPrivateUsage]
    _ROW,  # pyright: ignore[reportPrivateUsage]
    _TOP,  # pyright: ignore[reportPrivateUsage]
    _WIDTH,  # pyright: ignore[reportPrivateUsage]
    _axis,  # pyright: ignore[reportPrivateUsage]
    _clip,  # pyright: ignore[reportPrivateUsage]
    _Frame,  # pyright: ignore[reportPrivateUsage]
    _script_json,  # pyright: ignore[reportPrivateUsage]
    _Steps,  # pyright: ignore[reportPrivateUsage]
    _task_row,  # pyright: ignore[reportPrivateUsage]
)

__all__ = ["render_flow_timeline"]


def render_flow_timeline(detail: RunDetail) -> str:
    run = detail.run
    t0, t1 = _span(detail)
    frame = _Frame(t0, _WIDTH / max(t1 - t0, 1e-6))
    calls = [_Steps(child) for child in detail.children]
    rows, y = [], _TOP
    for step in detail.steps:
        rows.append(_step_row(step, y, frame))
        y += _ROW
        for child, steps in zip(detail.children, calls, strict=True):
            if _ran_in(child, step):
                rows.append(f'<text class="lane" x="20" y="{y + 14}">↳ crew {escape(_clip(child.run.crew, 24))}</text>')
                y += 20
                for task in child.tasks:
                    drawn, height = _task_row(task, y, frame, steps)
                    rows.append(drawn)
                    y += height
    height = y + 10
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_LABEL + _WIDTH + 20}" height="{height}" '
        f'role="img" aria-label="timeline of flow run {escape(run.id)}">'
        f"{_axis(t1 - t0, frame.scale, height)}{''.join(rows)}</svg>"
    )
    error = f'<p class="st-failed">error: {escape(run.error)}</p>' if run.error else ""
    duration = "running" if run.duration is None else f"{run.duration:.2f}s"
    meta = (
        f"flow run {escape(run.id)} · {escape(run.status)} · {escape(run.mode)} · {duration} · "
        f"{len(detail.steps)} step runs · {len(detail.children)} crews · {run.usage.total_tokens:,} tokens"
    )
    if run.continued_from:
        meta += f" · continues {escape(run.continued_from[:12])}"
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>crew flow run {escape(run.id[:12])} · {escape(run.crew)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{escape(run.crew)}</h1><div class='meta'>{meta}</div>{error}<p id='summary'></p>{svg}"
        f"{_table(detail.steps)}{''.join(steps.html() for steps in calls)}<div id='tip'></div>"
        f"<script type='application/json' id='run-data'>{_script_json(_summary(detail))}</script>"
        f"<script>{_JS}</script></body></html>\n"
    )


def _summary(detail: RunDetail) -> dict[str, Any]:
    kids = detail.children
    return {
        "run": detail.run.id,
        "tasks": sum(len(c.tasks) for c in kids),
        "model_calls": sum(len(c.model_calls) for c in kids),
        "tool_calls": sum(len(c.tool_calls) for c in kids),
        "failed": sum(1 for s in detail.steps if s.status == "failed"),
        "steps": len(detail.steps),
    }


def _span(detail: RunDetail) -> tuple[float, float]:
    run = detail.run
    times = [run.started_at, run.finished_at or run.started_at]
    for step in detail.steps:
        times += [t for t in (step.started_at, step.finished_at) if t is not None]
    for child in detail.children:
        times += [child.run.started_at, child.run.finished_at or child.run.started_at]
    start = min(times)
    return start, max(times) if max(times) > start else start + 1.0


def _ran_in(child: RunDetail, step: StoredStep) -> bool:
    """Whether ``child`` is a crew this run of ``step`` kicked off (a step in a loop runs several times)."""
    if child.run.parent_step != step.step or step.started_at is None:
        return False
    end = step.finished_at if step.finished_at is not None else float("inf")
    return step.started_at <= child.run.started_at <= end


def _step_row(step: StoredStep, y: int, frame: _Frame) -> str:
    took = "-" if step.duration is None else f"{step.duration:.3f}s"
    status = "reused" if step.reused else step.status
    tip = f"step {step.step} #{step.number} · {step.status}{' (reused)' if step.reused else ''} · {took}"
    if step.error:
        tip += f"\nerror: {_clip(step.error, 300)}"
    start = step.started_at if step.started_at is not None else frame.t0
    end = step.finished_at if step.finished_at is not None else start
    x, width = frame.x(start), frame.width(end - start, 3.0)
    bar = (
        f'<rect class="bar {escape(status)}" x="{x:.1f}" y="{y + 4}" width="{width:.1f}" height="{_ROW - 10}" '
        f'data-tip="{escape(tip)}"><title>{escape(tip)}</title></rect>'
    )
    if step.status == "failed":
        bar += f'<text class="mark" x="{x + width + 4:.1f}" y="{y + 24}">✕ failed<title>{escape(tip)}</title></text>'
    return (
        f'<g class="step" data-step="{escape(step.step)}" data-status="{escape(step.status)}">'
        f'<text class="label" x="8" y="{y + 17}">{escape(_clip(step.step, 24))}</text>'
        f'<text class="sub" x="8" y="{y + 32}">run #{step.number} · {took}</text>{bar}</g>'
    )


def _table(steps: list[StoredStep]) -> str:
    rows = []
    for step in steps:
        took = "-" if step.duration is None else f"{step.duration:.3f}s"
        status = step.status + (" (reused)" if step.reused else "")
        shown = step.error or (step.output if isinstance(step.output, str) else json.dumps(step.output, default=str))
        rows.append(
            f"<tr><td>{escape(step.step)}</td><td>{step.number}</td>"
            f"<td class='st-{escape(step.status)}'>{escape(status)}</td><td>{took}</td>"
            f"<td class='out'>{escape(_clip(shown or '', 1200))}</td></tr>"
        )
    return (
        "<table><thead><tr><th>step</th><th>run</th><th>status</th><th>time</th><th>output</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
