"""The CLI's side of approvals: a prompt on the terminal, what a paused run prints, ``crew approve``.

On a terminal ``crew kickoff`` asks about each call that needs approval: it shows the
tool, its arguments and the agent, and reads ``y`` (run it), ``n`` (deny, with an optional
reason) or ``e`` (edit: type new arguments as JSON). Prompts take turns (tasks running at
once wait for each other) and go to stderr, so stdout keeps the result. Without a terminal
nothing is asked: the run pauses, and :func:`print_paused` says how to continue it.

``crew approve`` (:func:`approve_command`) writes a decision into the store (``--all``: the same
one for every call still undecided). A call is
named by its id, and by its task too when calls of several tasks share the id (models
number their calls per conversation): a guess could approve a call nobody looked at.
Edited arguments are checked against the tool's schema then and there, not at resume.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

__all__ = ["approve_command", "print_paused", "terminal_approver"]

_turns = threading.Lock()


def terminal_approver(progress: Any) -> Any:
    """An approver that asks on the terminal (called in a worker thread by the executor)."""
    from crew.tools.approval import Approval, ApprovalRequest

    def ask(request: ApprovalRequest) -> Approval:
        with _turns, progress.paused():
            err = sys.__stderr__ if sys.__stderr__ is not None else sys.stderr
            args = json.dumps(request.args, ensure_ascii=False)
            err.write(
                f"\n--- approval: agent '{request.agent}' (task '{request.task}') wants to call "
                f"{request.tool}({args})\n"
            )
            while True:
                answer = _read(err, "run it? [y]es / [n]o / [e]dit arguments: ").lower()
                if answer in ("y", "yes"):
                    return Approval.approve()
                if answer in ("n", "no", ""):
                    reason = _read(err, "reason (told to the agent): ")
                    return Approval.deny(reason or "no reason given")
                if answer in ("e", "edit"):
                    text = _read(err, "new arguments as JSON: ")
                    try:
                        arguments = json.loads(text)
                    except ValueError as exc:
                        err.write(f"not JSON ({exc}); try again\n")
                        continue
                    if isinstance(arguments, dict):
                        return Approval.edit(arguments)
                    err.write("the arguments must be a JSON object; try again\n")

    return ask


def _read(err: Any, prompt: str) -> str:
    err.write(prompt)
    err.flush()
    line = sys.stdin.readline()
    return line.strip()


def print_paused(output: Any) -> None:
    """What waits, and the commands that continue the run (on stderr).

    An id that calls of several tasks share is flagged, and the command shown for it names
    the task, since ``crew approve`` refuses such an id alone.
    """
    run = (output.run_id or "")[:12]
    requests = output.pending_approvals
    shared = {call_id for call_id, n in Counter(r.call_id for r in requests).items() if n > 1}
    print(f"paused: {len(requests)} tool call(s) wait for a person's approval", file=sys.stderr)
    for request in requests:
        args = json.dumps(request.args, ensure_ascii=False)
        note = "   (id shared with another task: add --task)" if request.call_id in shared else ""
        print(
            f"  {request.call_id}: {request.tool}({args}) by '{request.agent}' in task '{request.task}'{note}",
            file=sys.stderr,
        )
    first = requests[0] if requests else None
    line = f"{run} CALL_ID" if first is None else _approve_line(run, first.call_id, first.task, first.call_id in shared)
    print(f"approve with:  crew approve {line}   (or --deny REASON, --args JSON)", file=sys.stderr)
    print(f"then continue: crew resume {run}", file=sys.stderr)


def _approve_line(run: str, call_id: str, task: str | None, with_task: bool) -> str:
    """``RUN CALL_ID`` (and ``--task TASK`` when the id alone names no single call), shell-quoted."""
    words = [run, call_id, *(["--task", task or ""] if with_task else [])]
    return " ".join(shlex.quote(word) for word in words)


def approve_command(args: argparse.Namespace, store: Any) -> int:
    """``crew approve RUN (CALL_ID | --all) [--task TASK] [--deny REASON | --args JSON]``: decide waiting calls.

    Everything is checked before the store is written: the call exists and is one call
    (an id several tasks share needs ``--task``, exit 2), and edited arguments fit the
    tool's schema when the crew's folder still defines the tool (exit 2 naming each
    problem); a tool that cannot be found leaves them to be checked at resume, as before.
    ``--all`` decides every call still undecided the same way (approve, or deny). A
    decision that replaces an earlier one says so: the person may not know one was made.
    """
    from crew.store.approvals import decide, pending

    stored = store.run(args.run)
    _refuse_continued(store, stored)
    decision = _decision_of(args)
    rows = pending(store, stored.id)
    chosen = _all_undecided(args, rows, stored) if getattr(args, "all", False) else [_chosen_call(args, rows, stored)]
    if decision.decision == "edit" and stored.kind == "flow":
        _check_answer(decision)
    elif decision.decision == "edit":
        _check_arguments(args, stored, chosen[0], decision)
    run = stored.id[:12]
    for row in chosen:
        decide(store, stored.id, row["call_id"], decision, task=row["task"])
        _say_decided(row, run, decision, named=getattr(args, "task", None) is not None or len(chosen) > 1)
    _say_next(pending(store, stored.id), rows, run)
    return 0


def _refuse_continued(store: Any, stored: Any) -> None:
    """A run continued already: its calls were taken up there, a decision here would reach nothing."""
    from crew.cli import UsageError
    from crew.store.approvals import continued_by

    later = continued_by(store, stored.id)
    if later is None:
        return
    run, newest = stored.id[:12], later.id[:12]
    raise UsageError(
        f"run {run} was continued already (by run {newest}, {later.status}): nothing of it waits any more"
        + (f"; decide there: crew approve {newest} CALL_ID" if later.status == "paused" else "")
    )


def _chosen_call(args: argparse.Namespace, rows: list[dict[str, Any]], stored: Any) -> dict[str, Any]:
    """The one waiting call ``CALL_ID`` (and ``--task``) name; an id tasks share lists a command per task."""
    from crew.cli import UsageError
    from crew.errors import AmbiguousCall
    from crew.store.approvals import find_call

    if args.call_id is None:
        raise UsageError("give the CALL_ID of the call to decide (the paused kickoff printed it), or --all")
    run = stored.id[:12]
    try:
        return find_call(rows, stored.id, args.call_id, getattr(args, "task", None))
    except AmbiguousCall as exc:
        lines = [
            f"calls of {len(exc.tasks)} tasks of run {run} share the id {args.call_id} "
            "(models number their calls per conversation); say which one with --task:"
        ]
        for r in (r for r in rows if r["call_id"] == args.call_id):
            what = f"{r['tool']}({json.dumps(r['args'], ensure_ascii=False)}) by '{r['agent']}'"
            lines.append(f"  crew approve {_approve_line(run, args.call_id, r['task'], True)}   # {what}")
        raise UsageError("\n".join(lines)) from None


def _all_undecided(args: argparse.Namespace, rows: list[dict[str, Any]], stored: Any) -> list[dict[str, Any]]:
    """``--all``: every call of the run not decided yet (edited arguments fit one tool, not all)."""
    from crew.cli import UsageError

    if args.call_id is not None or getattr(args, "task", None) is not None:
        raise UsageError("--all decides every waiting call: give it without CALL_ID and --task")
    if args.args is not None:
        raise UsageError("--all cannot take --args (new arguments fit one call): decide that call by its id")
    undecided = [row for row in rows if not row["decision"]]
    if not undecided:
        raise UsageError(f"run {stored.id[:12]} has no undecided call waiting for approval")
    return undecided


def _check_answer(decision: Any) -> None:
    """A flow's question is answered with ``--args '{"answer": "..."}'``."""
    from crew.cli import UsageError

    if not isinstance(decision.arguments, dict) or "answer" not in decision.arguments:
        raise UsageError('--args: a flow\'s question takes {"answer": "..."}; nothing was decided')


def _check_arguments(args: argparse.Namespace, stored: Any, row: dict[str, Any], decision: Any) -> None:
    """Edited arguments checked against the tool's schema now (exit 2), or a note that they could not be."""
    from crew.cli import UsageError
    from crew.errors import ToolArgumentsError
    from crew.tools.approval import check_edited_arguments

    tool, why = _tool_of(args, stored, row)
    if tool is None:
        print(f"note: the new arguments were not checked against '{row['tool']}': {why}", file=sys.stderr)
        return
    try:
        check_edited_arguments(tool, decision.arguments or {})
    except ToolArgumentsError as exc:
        raise UsageError(f"--args: {exc}\nnothing was decided; run the command again with fixed --args") from None


_WORDS = {"approve": "approved", "deny": "denied", "edit": "approved with new arguments"}


def _say_decided(row: dict[str, Any], run: str, decision: Any, *, named: bool) -> None:
    in_task = f" in task '{row['task']}'" if named else ""
    print(f"call {row['call_id']}{in_task} of run {run} {_WORDS[decision.decision]}", file=sys.stderr)
    if row["decision"]:
        earlier = _WORDS.get(row["decision"], row["decision"])
        print(f"note: this replaces the earlier decision on call {row['call_id']} ({earlier})", file=sys.stderr)


def _say_next(now: list[dict[str, Any]], rows: list[dict[str, Any]], run: str) -> None:
    waiting = [r for r in now if not r["decision"]]
    if not waiting:
        print(f"continue it with: crew resume {run}", file=sys.stderr)
        return
    shared = {call_id for call_id, n in Counter(r["call_id"] for r in rows).items() if n > 1}
    named = [f"{r['call_id']} (task '{r['task']}')" if r["call_id"] in shared else r["call_id"] for r in waiting]
    print(f"still waiting: {', '.join(named)}", file=sys.stderr)


def _decision_of(args: argparse.Namespace) -> Any:
    """The decision ``--deny`` / ``--args`` (or neither: approve) ask for."""
    from crew.cli import UsageError
    from crew.tools.approval import Approval

    if args.deny is not None and args.args is not None:
        raise UsageError("give --deny or --args, not both")
    if args.deny is not None:
        return Approval.deny(args.deny)
    if args.args is None:
        return Approval.approve()
    try:
        arguments = json.loads(args.args)
    except ValueError as exc:
        raise UsageError(f"--args is not JSON: {exc}") from None
    if not isinstance(arguments, dict):
        raise UsageError('--args takes a JSON object of the tool\'s arguments, e.g. \'{"path": "a.txt"}\'')
    return Approval.edit(arguments)


def _tool_of(args: argparse.Namespace, stored: Any, row: dict[str, Any]) -> tuple[Any, str]:
    """The tool the waiting call asked for, as the run's crew folder defines it now, or why not.

    Looked up in the call's task (its own tools, else its agent's), then among every agent
    of the crew. Loading the folder runs its code (``tools.py``), as ``crew resume`` will.
    A folder that is gone or does not load, or a tool only an MCP server provides, gives
    ``(None, reason)``: the arguments are then checked when the run resumes.
    """
    from crew.cli import load_project
    from crew.errors import CrewError
    from crew.tools.execution.registry import as_tools

    folder = args.path or stored.folder
    if not folder or not Path(folder).exists():
        return None, f"the crew folder of the run ({folder or 'unknown'}) is gone (give it with --path)"
    try:
        project = load_project(folder, llm=stored.settings.get("llm"))
    except (CrewError, ImportError, OSError, ValueError) as exc:
        return None, f"the crew folder {folder} does not load ({str(exc).splitlines()[0]})"
    for tools in _tool_groups(project.crew, row):
        for tool in as_tools(tools or []):
            if row["tool"] in (tool.tool_name, tool.name):
                return tool, ""
    return None, f"no tool '{row['tool']}' in the crew's YAML or Python (an MCP server's tools are not started here)"


def _tool_groups(crew: Any, row: dict[str, Any]) -> list[Any]:
    """Where the call's tool may be, nearest first: its task's tools, its agent's, every agent's."""
    from crew.tasks.graph import task_names

    groups: list[Any] = []
    for name, task in zip(task_names(crew.tasks), crew.tasks, strict=True):
        if name == row["task"]:
            groups.append(task.tools if task.tools is not None else getattr(task.agent, "tools", None) or [])
    agents = crew.all_agents()
    return groups + [a.tools for a in agents if a.role == row["agent"]] + [a.tools for a in agents]
