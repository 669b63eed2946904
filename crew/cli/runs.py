"""``crew runs``, ``crew show``, ``crew replay`` and ``crew resume``: the run store from the command line.

They use the store of the crew folder (``PATH/.crew/runs.db``, the current folder by
default) or ``--store FILE``. Replay and resume load the crew from the folder the run
was recorded in (unless ``--path`` names another) and reuse the run's inputs, model
override and output folder unless new ones are given.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from crew.cli import EXIT_OK, UsageError, count, write_file
from crew.cli.kickoff import _pairs, apply_budgets, execute, load, store_path


def _store(args: argparse.Namespace, folder: str | None = None) -> Any:
    """The existing store of ``--store`` or of the crew folder: reading never creates one."""
    from crew.errors import StoreError
    from crew.store import RunStore

    path, own = store_path(args.store, _crew_folder(folder or "."))
    if not path.is_file():
        where = f"the crew folder {Path(folder or '.').resolve()}" if own else "--store or $CREW_STORE"
        raise StoreError(f"no run store at {path} ({where}): `crew kickoff` records runs there")
    return RunStore(path)


def _crew_folder(path: str) -> str:
    """Where kickoff keeps the crew's runs: its folder as loading finds it (``src/<project>`` in a
    CrewAI project), or ``path`` itself when no crew is there (a store named by ``--store``)."""
    from crew.config.project import crew_folder
    from crew.errors import ConfigError

    try:
        return str(crew_folder(path))
    except ConfigError:
        return path


def list_runs(args: argparse.Namespace) -> int:
    store = _store(args, args.path)
    runs = store.runs(limit=args.limit)
    if args.json:
        _json([_run_summary(r) for r in runs])
        return EXIT_OK
    if not runs:
        print(f"no runs in {store.path}", file=sys.stderr)
        return EXIT_OK
    rows = [("RUN", "STATUS", "STARTED", "DURATION", "TOKENS", "COST", "CREW", "MODE")]
    for r in runs:
        mode = r.mode if r.continued_from is None else f"{r.mode} of {r.continued_from[:12]}"
        duration = "-" if r.duration is None else f"{r.duration:.2f}s"
        tokens, cost = f"{r.usage.total_tokens:,}", _cost(r.usage.cost)
        rows.append((r.id[:12], r.status, _when(r.started_at), duration, tokens, cost, r.crew, mode))
    _table(rows)
    return EXIT_OK


def show(args: argparse.Namespace) -> int:
    store = _store(args, args.path)
    detail = store.detail(args.run)
    if args.output:
        from crew.store.timeline import render_timeline

        if Path(args.output).suffix.lower() not in (".html", ".htm"):
            raise UsageError(f"-o {args.output}: the timeline is an HTML page, give a .html file")
        write_file(args.output, render_timeline(detail))  # its folder made; a place it cannot go is exit 2
        print(f"wrote {args.output}", file=sys.stderr)
        if not args.json:
            return EXIT_OK
    if args.json:
        _json(detail.model_dump(mode="json"))
        return EXIT_OK
    _print_detail(detail)
    return EXIT_OK


def resume(args: argparse.Namespace) -> int:
    return _continue(args, "resume")


def replay(args: argparse.Namespace) -> int:
    return _continue(args, "replay")


def _continue(args: argparse.Namespace, mode: str) -> int:
    from crew.store.continuation import plan_replay, plan_resume
    from crew.store.recording import recorded_kickoff

    store = _store(args, args.path)
    stored = store.run(args.run) if args.run is not None else store.latest_unfinished()
    folder = args.path or stored.folder or "."
    if not Path(folder).exists():
        raise UsageError(f"the crew folder of run {stored.id[:12]} ({folder}) is gone: give it with --path")
    settings = stored.settings
    llm = args.llm or settings.get("llm")
    out = args.out or settings.get("out")
    given = _pairs(args.inputs)
    live_tools = bool(settings.get("live_tools"))  # the test model's tools run as they did in the run
    project, inputs = load(folder, {**stored.inputs, **given}, llm=llm, out=out, live_tools=live_tools)
    crew = project.crew
    for name in ("max_tokens", "max_cost"):  # the run's budgets hold unless new ones are given
        if getattr(args, name) is None and settings.get(name) is not None:
            setattr(crew, name, settings[name])
    apply_budgets(crew, args)
    if mode == "resume":
        plan = plan_resume(crew, store, stored.id, inputs)
    else:
        _known_task(crew, args.from_task)
        plan = plan_replay(crew, store, stored.id, args.from_task, inputs)
    if not args.quiet:
        reused = count(len(plan.outputs), "stored output")
        print(f"{mode} of run {stored.id[:12]}: {reused} reused, running {', '.join(plan.rerun)}", file=sys.stderr)

    checkpoints, approvals = ({}, {}) if mode != "resume" else _paused_state(store, stored.id)

    def start(run_id: str) -> Any:
        return recorded_kickoff(
            crew,
            store,
            plan.inputs,
            run_id=run_id,
            precomputed=plan.outputs,
            mode=mode,
            continued_from=stored.id,
            from_task=getattr(args, "from_task", None),
            settings={"llm": llm, "out": out},
            folder=str(Path(folder).resolve()),
            spent_before=plan.spent_before,
            checkpoints=checkpoints,
            approvals=approvals,
        )

    return execute(args, crew, plan.inputs, start, names=set(plan.rerun))


def _known_task(crew: Any, name: str) -> None:
    """``--from TASK`` names a task of the crew; a typo gets the closest name (``sight``: ``sights``)."""
    from crew.common.keywords import did_you_mean
    from crew.errors import StoreError
    from crew.tasks.graph import task_names

    names = task_names(crew.tasks)
    if name not in names:
        hint = did_you_mean(name, names)
        raise StoreError(f"--from {name}: no task '{name}' in crew '{crew.name}'{hint}; its tasks: {', '.join(names)}")


def _paused_state(store: Any, run_id: str) -> tuple[dict[str, Any], dict[Any, Any]]:
    """Checkpoints by task; decisions by call id, or by (task, call id) for an id tasks share."""
    from crew.store.approvals import paused_state

    return paused_state(store, run_id)


def approve(args: argparse.Namespace) -> int:
    """``crew approve RUN CALL_ID [--task TASK] [--deny REASON] [--args JSON]`` (``crew.cli.approve``)."""
    from crew.cli.approve import approve_command

    return approve_command(args, _store(args, args.path))


# -- text output -------------------------------------------------------------------------------


def _print_detail(detail: Any) -> None:
    run = detail.run
    duration = "" if run.duration is None else f" · {run.duration:.2f}s"
    head = f"run {run.id} · crew '{run.crew}' · {run.status} · {run.mode}"
    if run.continued_from:
        head += f" of {run.continued_from[:12]}" + (f" from task '{run.from_task}'" if run.from_task else "")
    print(head)
    print(f"started {_when(run.started_at)}{duration} · {run.usage.total_tokens:,} tokens · {_cost(run.usage.cost)}")
    if run.inputs:
        print("inputs: " + ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in run.inputs.items()))
    if run.error:
        print(f"error: {run.error}")
    models = _by_task(detail.model_calls)
    tools = _by_task(detail.tool_calls)
    for task in detail.tasks:
        took = (
            "" if task.started_at is None or task.finished_at is None else f"{task.finished_at - task.started_at:.2f}s"
        )
        status = task.status + (" (reused)" if task.reused else "")
        print()
        print(f"[{task.position + 1}] {task.name} · {status} · {task.agent or '-'} · {took or '-'}", end="")
        print(f" · {task.usage.total_tokens:,} tokens · {_cost(task.usage.cost)}")
        for call in models.get(task.name, []):
            spent = [f"{call.usage.total_tokens:,} tokens", _cost(call.usage.cost)]
            what = call.error or ", ".join(spent + ([call.finish_reason] if call.finish_reason else []))
            print(f"    model {call.model} · {call.status} · {call.latency:.2f}s · {what}")
        for call in tools.get(task.name, []):
            note = " (cached)" if call.cached else " (refused)" if call.refused else ""
            note += " (stand-in: not run)" if call.stand_in else ""
            args = json.dumps(call.args, ensure_ascii=False) if not isinstance(call.args, str) else call.args
            print(f"    tool {call.tool}{note} · {call.status} · {call.duration:.3f}s · {_clip(args, 80)}")
        if task.error:
            print(f"    error: {task.error}")
        if task.raw:
            text = _clip(task.raw, 400)
            print("    output: " + text.replace("\n", "\n            "))


def _by_task(calls: list[Any]) -> dict[str | None, list[Any]]:
    out: dict[str | None, list[Any]] = {}
    for call in calls:
        out.setdefault(call.task, []).append(call)
    return out


def _run_summary(run: Any) -> dict[str, Any]:
    data = run.model_dump(mode="json")
    data["duration"] = run.duration
    return data


def _json(value: Any) -> None:
    json.dump(value, sys.stdout, ensure_ascii=False, indent=2, default=str)
    sys.stdout.write("\n")


def _table(rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at))


def _cost(cost: float) -> str:
    return f"${cost:.4f}"


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"
