"""``crew resume``, ``crew replay`` and ``crew show`` on a flow's run (``crew.cli.runs`` hands them here).

A flow run is resumed by loading its class again (``crew.flow.locate``) and continuing it on
the same store: the steps that finished are handed on, the first one that did not runs.
The exit codes are those of a crew's run: 0 done, 1 a step failed, 2 nothing to do or a
mistake, 3 paused for a person (``crew approve``, then ``crew resume`` again).
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from typing import Any

from crew.cli import EXIT_OK, EXIT_PAUSED, count, interrupt_code
from crew.cli.output import plain

__all__ = ["continue_flow", "flow_lines"]


def continue_flow(args: argparse.Namespace, store: Any, stored: Any, mode: str) -> int:
    """Resume or replay the flow run ``stored``; prints its output (stdout) and what it did (stderr)."""
    from crew.flow.locate import flow_class
    from crew.store.flow_runs import plan_flow_resume

    if getattr(args, "inputs", None):
        from crew.cli import UsageError

        raise UsageError(f"-i: flow run {stored.id[:12]} goes on with its stored state; inputs do not apply to it")
    if mode == "resume":
        plan_flow_resume(store, stored)  # refused before anything loads: finished, or finished by a later resume
    from crew.cli.flow_kickoff import resumed_flow

    # a flow folder crew kickoff ran (a CrewAI project's crewai served, its crews on the run's model) ...
    with resumed_flow(args, stored, _prepare(args, stored)) as (own, settings):
        # ... or any flow class the run recorded
        cls: Any = own or flow_class(stored.settings.get("flow"), args.path or stored.folder)
        return _continue(args, store, stored, mode, cls, settings)


def _prepare(args: argparse.Namespace, stored: Any) -> Any:
    """What kickoff did to each crew of the flow (its transport, dry tools on the test model), again."""
    from crew.cli.kickoff import _offline, apply_transport

    live_tools = bool((stored.settings.get("cli") or {}).get("live_tools"))

    def prepare(crew: Any, inputs: dict[str, Any]) -> None:
        apply_transport(crew, getattr(args, "transport", None))
        _offline(crew, inputs, live_tools=live_tools)

    return prepare


def _continue(args: argparse.Namespace, store: Any, stored: Any, mode: str, cls: Any, settings: Any) -> int:
    from crew.cli.budgets import apply_budgets
    from crew.cli.flow_kickoff import run_command, say_interrupted
    from crew.cli.flow_progress import FlowProgress
    from crew.errors import FlowError, FlowPaused

    flow = _made(cls, store, stored.settings.get("max_steps"))
    apply_budgets(flow, args)  # new budgets; without them the run's own hold (Flow.resume_async)
    flow.run_settings = settings  # the model and folder this run used, for the next resume
    resumed = mode == "resume"
    new_run = uuid.uuid4().hex
    if resumed:
        work = flow.resume_async(stored.id, new_run_id=new_run)
    else:
        work = flow.replay_async(stored.id, from_step=args.from_task, new_run_id=new_run)
    if not args.quiet:
        print(f"{mode} of flow run {stored.id[:12]} ({plain(stored.crew)})", file=sys.stderr)
    from crew.cli.output import tool_output_to_stderr

    progress = FlowProgress(None)
    try:
        with progress, tool_output_to_stderr():  # the steps' prints (an input() prompt): stdout carries the result only
            output = run_command(work)
    except KeyboardInterrupt:
        say_interrupted(new_run, progress.summary(), True)
        return interrupt_code()
    except FlowPaused as paused:
        _say_paused(paused)
        return EXIT_PAUSED
    except FlowError:
        raise  # one line on stderr, exit 1 (crew.cli._report)
    if args.json:
        json.dump({"status": "done", "output": output}, sys.stdout, ensure_ascii=False, indent=2, default=str)
        sys.stdout.write("\n")
    elif output is not None:  # a last step that returns nothing prints nothing, as on kickoff
        sys.stdout.write(plain(str(output)).rstrip("\n") + "\n")
    return EXIT_OK


def _made(cls: Any, store: Any, max_steps: Any) -> Any:
    """The flow, on ``store``, with the run's ``max_steps``; a flow whose own ``__init__`` takes no
    such keywords is made with none, then given them."""
    try:
        return cls(store=store, max_steps=max_steps)
    except TypeError:
        flow = cls()
        flow.store = store
        if isinstance(max_steps, int):
            flow.max_steps = max_steps
        return flow


def _say_paused(paused: Any) -> None:
    run = (paused.run_id or "")[:12]
    print(f"paused: step '{paused.step}' asks: {plain(paused.question)}", file=sys.stderr)
    print(f'  answer with: crew approve {run} {paused.call_id} --args \'{{"answer": "..."}}\'', file=sys.stderr)
    print(f"  then: crew resume {run}", file=sys.stderr)


def flow_lines(detail: Any, task_lines: Any) -> list[str]:
    """``crew show`` of a flow run: the run, each step run in order, and the crews each step ran."""
    from crew.cli.run_header import header_lines

    run = detail.run
    lines = header_lines(run, counted=count(len(detail.steps), "step run"))
    if run.error:
        lines.append(f"error: {run.error}")
    crews: dict[str, list[Any]] = {}
    for child in detail.children:
        crews.setdefault(child.run.parent_step or "", []).append(child)
    for step in detail.steps:
        lines += ["", *_step_lines(step)]
        if step.number == _last_number(detail.steps, step.step):  # a step's crews, under its last run
            for child in crews.get(step.step, []):
                lines += _crew_lines(child, task_lines)
    return lines


def _step_lines(step: Any) -> list[str]:
    took = "-" if step.duration is None else f"{step.duration:.3f}s"
    status = step.status + (" (reused)" if step.reused else "")
    lines = [f"[{step.seq}] {step.step} #{step.number} · {status} · {took}"]
    if step.error:
        lines.append(f"    error: {step.error}")
    if step.output is not None:
        shown = step.output if isinstance(step.output, str) else json.dumps(step.output, ensure_ascii=False)
        lines.append("    output: " + _clip(shown, 300).replace("\n", "\n            "))
    return lines


def _crew_lines(child: Any, task_lines: Any) -> list[str]:
    run = child.run
    took = "-" if run.duration is None else f"{run.duration:.2f}s"
    lines = [f"    crew '{run.crew}' · run {run.id[:12]} · {run.status} · {took} · {run.usage.total_tokens:,} tokens"]
    for task in child.tasks:
        models = [c for c in child.model_calls if c.task == task.name]
        tools = [c for c in child.tool_calls if c.task == task.name]
        lines += ["      " + line for line in task_lines(task, models, tools)]
    return lines


def _last_number(steps: list[Any], name: str) -> int:
    return max(s.number for s in steps if s.step == name)


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"
