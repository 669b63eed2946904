"""The CLI's side of approvals: a prompt on the terminal, and what a paused run prints.

On a terminal ``crew kickoff`` asks about each call that needs approval: it shows the
tool, its arguments and the agent, and reads ``y`` (run it), ``n`` (deny, with an optional
reason) or ``e`` (edit: type new arguments as JSON). Prompts take turns (tasks running at
once wait for each other) and go to stderr, so stdout keeps the result. Without a terminal
nothing is asked: the run pauses, and :func:`print_paused` says how to continue it.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

__all__ = ["print_paused", "terminal_approver"]

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
    """What waits, and the commands that continue the run (on stderr)."""
    run = (output.run_id or "")[:12]
    print(f"paused: {len(output.pending_approvals)} tool call(s) wait for a person's approval", file=sys.stderr)
    for request in output.pending_approvals:
        args = json.dumps(request.args, ensure_ascii=False)
        print(
            f"  {request.call_id}: {request.tool}({args}) by '{request.agent}' in task '{request.task}'",
            file=sys.stderr,
        )
    first = output.pending_approvals[0].call_id if output.pending_approvals else "CALL_ID"
    print(f"approve with:  crew approve {run} {first}   (or --deny REASON, --args JSON)", file=sys.stderr)
    print(f"then continue: crew resume {run}", file=sys.stderr)
