"""``crew runs``, ``crew show``, ``crew replay`` and ``crew resume``: the run store from the command line.

They use the store of the crew folder (``PATH/.crew/runs.db``, the current folder by
default; a RUN that is a folder is taken as the crew folder, as ``crew runs PATH`` takes
it) or ``--store FILE``. Replay and resume load the crew from the folder the run was
recorded in (unless ``--path`` names another) and reuse the run's inputs, model override
and output folder unless new ones are given. Everything printed from the store passes
through :func:`crew.cli.output.plain` first: a model or a tool may have put terminal escapes in it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from crew.cli import EXIT_OK, UsageError, count, write_file
from crew.cli.inputs import input_pairs
from crew.cli.kickoff import apply_budgets, execute, load, store_path
from crew.cli.output import plain
from crew.cli.run_header import header_lines
from crew.cli.run_header import shown_cost as _cost
from crew.cli.run_header import shown_time as _when


def _store(args: argparse.Namespace, folder: str | None = None) -> Any:
    """The existing store of ``--store`` or of the crew folder: reading never creates one.

    Without a folder and with no store in the current one, the store kickoff wrote below
    it (``crew kickoff examples/trip_planner`` writes ``examples/trip_planner/.crew/runs.db``)
    is used, the newest of them when there are several, and named on stderr.
    """
    from crew.errors import StoreError
    from crew.store import RunStore

    path, own = store_path(args.store, _crew_folder(folder or "."))
    if not path.is_file() and own and folder is None:
        path = _store_below(Path.cwd()) or path
    if not path.is_file():
        where = f"the crew folder {Path(folder or '.').resolve()}" if own else "--store or $CREW_STORE"
        raise StoreError(f"no run store at {path} ({where}): `crew kickoff` records runs there")
    return RunStore(path)


_SKIP = frozenset({".git", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".mypy_cache"})


def _store_below(root: Path, depth: int = 3) -> Path | None:
    """The newest run store in the crew folders under ``root`` (``depth`` levels down), said on stderr."""
    found: list[Path] = []
    level = [root]
    for _ in range(depth):
        below: list[Path] = []
        for folder in level:
            with contextlib.suppress(OSError):
                below += [p for p in folder.iterdir() if p.is_dir() and p.name not in _SKIP and p.name != ".crew"]
        found += [p / ".crew" / "runs.db" for p in below if (p / ".crew" / "runs.db").is_file()]
        level = below
    if not found:
        return None
    newest = max(found, key=_modified)
    others = f" (the newest of {len(found)} below it)" if len(found) > 1 else ""
    print(f"store: {_shown_path(newest, root)}{others}", file=sys.stderr)
    return newest


def _modified(store: Path) -> float:
    """When a store was last written (its WAL file holds the latest writes)."""
    times = [p.stat().st_mtime for p in (store, store.with_name(store.name + "-wal")) if p.exists()]
    return max(times, default=0.0)


def _shown_path(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _where(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """``(crew folder, run)``: a RUN that names a folder is the crew folder, as ``crew runs PATH`` takes it."""
    run = getattr(args, "run", None)
    if run is not None and Path(run).is_dir():
        if args.path is not None and Path(args.path).resolve() != Path(run).resolve():
            raise UsageError(f"{run} is a folder and --path names another ({args.path}): give the crew folder once")
        return run, None
    return args.path, run


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
        print(f"no runs in {plain(str(store.path))}", file=sys.stderr)
        return EXIT_OK
    rows = [("RUN", "STATUS", "STARTED", "DURATION", "TOKENS", "COST", "CREW", "MODE")]
    for r in runs:
        mode = r.mode if r.continued_from is None else f"{r.mode} of {r.continued_from[:12]}"
        if r.parent_run is not None:  # a crew a flow's step kicked off
            mode += f" in {r.parent_run[:12]}:{r.parent_step}"
        duration = "-" if r.duration is None else f"{r.duration:.2f}s"
        tokens, cost = f"{r.usage.total_tokens:,}", _cost(r.usage.cost)
        name = plain(r.crew) + (" (flow)" if r.kind == "flow" else "")
        rows.append((r.id[:12], r.status, _when(r.started_at), duration, tokens, cost, name, mode))
    _table(rows)
    return EXIT_OK


def show(args: argparse.Namespace) -> int:
    folder, ref = _where(args)
    store = _store(args, folder)
    detail = store.detail(ref)
    if args.output:
        from crew.store.flow_timeline import render_flow_timeline
        from crew.store.timeline import render_timeline

        if Path(args.output).suffix.lower() not in (".html", ".htm"):
            raise UsageError(f"-o {args.output}: the timeline is an HTML page, give a .html file")
        draw = render_flow_timeline if detail.run.kind == "flow" else render_timeline
        write_file(args.output, draw(detail))  # its folder made; a place it cannot go is exit 2
        print(f"wrote {args.output}", file=sys.stderr)
        if not args.json:
            return EXIT_OK
    if args.json:
        _json(detail.model_dump(mode="json"))
        return EXIT_OK
    waiting = _waiting(store, detail.run)
    if detail.run.kind == "flow":
        from crew.cli.flow_runs import flow_lines

        lines = flow_lines(detail, _task_lines)
    else:
        lines = _detail_lines(detail, waiting)
    for line in lines:
        print(plain(line))
    return EXIT_OK


def _waiting(store: Any, run: Any) -> list[dict[str, Any]]:
    """The calls a paused run waits on (with any decision already made), or none."""
    if run.status != "paused":
        return []
    from crew.store.approvals import pending

    return pending(store, run.id)


def resume(args: argparse.Namespace) -> int:
    return _continue(args, "resume")


def replay(args: argparse.Namespace) -> int:
    return _continue(args, "replay")


def _continue(args: argparse.Namespace, mode: str) -> int:
    from crew.run.kickoff import kickoff
    from crew.store.continuation import plan_replay, plan_resume

    where, ref = _where(args)
    store = _store(args, where)
    stored = store.run(ref) if ref is not None else store.latest_unfinished()
    if stored.kind == "flow":
        from crew.cli.flow_runs import continue_flow

        return continue_flow(args, store, stored, mode)
    if mode == "resume":
        from crew.store.approvals import check_not_continued

        check_not_continued(store, stored.id)  # before anything loads: a second resume does nothing
    folder = where or stored.folder or "."
    if not Path(folder).exists():
        raise UsageError(f"the crew folder of run {stored.id[:12]} ({folder}) is gone: give it with --path")
    settings = stored.settings
    llm = args.llm or settings.get("llm")
    out = args.out or settings.get("out")
    given = input_pairs(args.inputs)
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
    checkpoints, approvals = ({}, {}) if mode != "resume" else _paused_state(store, stored.id, crew)
    if not args.quiet:
        reused = count(len(plan.outputs), "stored output")
        print(f"{mode} of run {stored.id[:12]}: {reused} reused, running {', '.join(plan.rerun)}", file=sys.stderr)

    def start(run_id: str) -> Any:
        return kickoff(
            crew,
            plan.inputs,
            run_id=run_id,
            continuation=plan.continuation(checkpoints, approvals),
            store=store,
            settings={"llm": llm, "out": out},
            folder=str(Path(folder).resolve()),
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


def _paused_state(store: Any, run_id: str, crew: Any) -> tuple[dict[str, Any], dict[Any, Any]]:
    """Checkpoints by task; decisions by call id, or by (task, call id) for an id tasks share."""
    from crew.store.approvals import paused_state

    return paused_state(store, run_id, crew=crew)


def approve(args: argparse.Namespace) -> int:
    """``crew approve RUN (CALL_ID | --all) [--task TASK] [--deny REASON] [--args JSON]`` (``crew.cli.approve``)."""
    from crew.cli.approve import approve_command

    return approve_command(args, _store(args, args.path))


def _detail_lines(detail: Any, waiting: list[dict[str, Any]]) -> list[str]:
    lines = _run_lines(detail.run, waiting)
    models = _by_task(detail.model_calls)
    tools = _by_task(detail.tool_calls)
    recalled = _by_task(detail.context)
    for task in detail.tasks:
        lines += ["", *_task_lines(task, models.get(task.name, []), tools.get(task.name, []))]
        lines += [line for section in recalled.get(task.name, []) for line in _context_lines(section)]
        if task.status == "paused":  # its error only says it waits: what it waits on is listed instead
            lines += [f"    waits for approval: {_pending_line(row)}" for row in waiting if row["task"] == task.name]
    return lines


def _run_lines(run: Any, waiting: list[dict[str, Any]]) -> list[str]:
    lines = header_lines(run)
    if waiting:
        lines.append(f"waiting for approval ({count(len(waiting), 'call')}; `crew approve {run.id[:12]} CALL_ID`):")
        lines += [f"  {_pending_line(row)}" for row in waiting]
    elif run.error:
        lines.append(f"error: {run.error}")
    return lines


def _pending_line(row: dict[str, Any]) -> str:
    args = json.dumps(row["args"], ensure_ascii=False)
    line = f"{row['call_id']}: {row['tool']}({args}) by '{row['agent']}' in task '{row['task']}'"
    decided = {"approve": "approved", "deny": "denied", "edit": "approved with new arguments"}.get(row["decision"])
    if decided is None:
        return line
    if row["decision"] == "deny" and row["reason"]:
        decided += f": {row['reason']}"
    if row["arguments"] is not None:
        decided += " " + json.dumps(row["arguments"], ensure_ascii=False)
    return f"{line} · {decided}"


def _task_lines(task: Any, models: list[Any], tools: list[Any]) -> list[str]:
    took = "-" if task.started_at is None or task.finished_at is None else f"{task.finished_at - task.started_at:.2f}s"
    status = task.status + (" (reused)" if task.reused else "")
    lines = [
        f"[{task.position + 1}] {task.name} · {status} · {task.agent or '-'} · {took} · "
        f"{task.usage.total_tokens:,} tokens · {_cost(task.usage.cost)}"
    ]
    lines += [_model_line(call) for call in models] + [_tool_line(call) for call in tools]
    if task.error and task.status != "paused":
        lines.append(f"    error: {task.error}")
    if task.raw:
        lines.append("    output: " + _clip(task.raw, 400).replace("\n", "\n            "))
    return lines


def _context_lines(section: Any) -> list[str]:
    """What memory or knowledge gave the task's prompt: each item's id, score and source."""
    again = " (as recorded by the run replayed)" if section.replayed else ""
    lines = [f"    {section.provider}: {count(len(section.items), 'item')} in the prompt{again}"]
    for item in section.items:
        score = "" if item.get("score") is None else f" · {float(item['score']):.4f}"
        source = f" · {item['source']}" if item.get("source") else ""
        lines.append(f"      {str(item.get('id') or '-')[:12]}{score}{source}: {_clip(str(item.get('text', '')), 100)}")
    return lines


def _model_line(call: Any) -> str:
    spent = [f"{call.usage.total_tokens:,} tokens", _cost(call.usage.cost)]
    what = call.error or ", ".join(spent + ([call.finish_reason] if call.finish_reason else []))
    return f"    model {call.model} · {call.status} · {call.latency:.2f}s · {what}"


def _tool_line(call: Any) -> str:
    note = " (cached)" if call.cached else " (refused)" if call.refused else ""
    note += " (stand-in: not run)" if call.stand_in else ""
    args = json.dumps(call.args, ensure_ascii=False) if not isinstance(call.args, str) else call.args
    return f"    tool {call.tool}{note} · {call.status} · {call.duration:.3f}s · {_clip(args, 80)}"


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


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"
