"""``crew show``'s first lines of a stored run, the same for a crew's run and a flow's."""

from __future__ import annotations

import json
import time
from typing import Any

__all__ = ["header_lines", "shown_cost", "shown_time"]


def header_lines(run: Any, *, counted: str | None = None) -> list[str]:
    """``crew show``'s first lines of a run, a crew's or a flow's: what it is and how it went, when it
    started and what it spent (``counted``: a flow's step runs), its inputs."""
    flow = run.kind == "flow"
    head = f"run {run.id} · {'flow' if flow else 'crew'} '{run.crew}' · {run.status} · {run.mode}"
    if run.continued_from:
        part = "step" if flow else "task"
        head += f" of {run.continued_from[:12]}" + (f" from {part} '{run.from_task}'" if run.from_task else "")
    spent = [f"started {shown_time(run.started_at)}", *([counted] if counted else [])]
    if run.duration is not None:
        spent.append(f"{run.duration:.2f}s")
    spent += [f"{run.usage.total_tokens:,} tokens", shown_cost(run.usage.cost)]
    lines = [head, " · ".join(spent)]
    if run.inputs:
        lines.append("inputs: " + ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in run.inputs.items()))
    return lines


def shown_time(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at))


def shown_cost(cost: float) -> str:
    return f"${cost:.4f}"
