"""A person's say over a tool call: which calls need it, and what the answer can be.

A tool opts in with ``requires_approval`` (True, or a function of the call deciding per
call). The executor asks before the call claims a usage slot or reaches the cache's
single flight: an approved call then runs once like any other; a denied one becomes an
error observation ("denied by a person: ...") and a call still waiting comes back
``pending`` (neither consumes a slot, neither is ever cached). Who answers is the run's
business (an ``approver`` callable, a terminal prompt, or nobody: the run pauses).

The executor's approval step is ``approval``: from the call's name, arguments and context it
works out a ``Verdict`` (go on, a result, or edited arguments) that the executor applies. A
decision made beforehand (a resumed run's ``approvals=``) is taken first, then the approver is
asked; without either the call comes back ``pending`` and its run pauses. The step is a
generator that yields the request when the approver must be asked, so the executor's sync and
async drivers each ask in their own way (a sync approver runs in a worker thread from async code).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from crew.common.events import bus
from crew.errors import AmbiguousCall, ToolArgumentsError
from crew.tools.messages import RunContext, ToolCall, ToolResult

if TYPE_CHECKING:
    from crew.tools.base import BaseTool

__all__ = [
    "Approval",
    "ApprovalRequest",
    "Approver",
    "DecisionKey",
    "Verdict",
    "announce_decision",
    "approval",
    "ask_approver",
    "check_decision_keys",
    "check_edited_arguments",
    "needs_approval",
    "request_for",
    "take_decision",
    "waiting_result",
]


class ApprovalRequest(BaseModel):
    """A tool call waiting for a decision: what an approver receives and a paused run lists."""

    model_config = ConfigDict(frozen=True)

    call_id: str
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    agent: str | None = None
    task: str | None = None
    run_id: str | None = None


class Approval(BaseModel):
    """A decision about one call: ``Approval.approve()``, ``Approval.deny(reason)``, ``Approval.edit(arguments)``."""

    model_config = ConfigDict(frozen=True)

    decision: Literal["approve", "deny", "edit"]
    reason: str = ""
    arguments: dict[str, Any] | None = None

    @classmethod
    def approve(cls) -> Approval:
        return cls(decision="approve")

    @classmethod
    def deny(cls, reason: str = "") -> Approval:
        return cls(decision="deny", reason=reason)

    @classmethod
    def edit(cls, arguments: dict[str, Any]) -> Approval:
        """Run the call, with ``arguments`` instead of the model's (validated like any call's)."""
        if not isinstance(arguments, dict):  # pyright: ignore[reportUnnecessaryIsInstance] - callers outside typed code pass anything
            raise TypeError(f"Approval.edit takes the new arguments as a dict, got {type(arguments).__name__}")
        return cls(decision="edit", arguments=arguments)

    @classmethod
    def of(cls, value: Any) -> Approval | None:
        """An approver's answer as a decision: True, False, an Approval, or None (no decision: wait)."""
        if value is None or isinstance(value, Approval):
            return value
        if isinstance(value, bool):
            return cls.approve() if value else cls.deny()
        raise TypeError(f"an approver returns True, False, an Approval or None, got {type(value).__name__}")


DecisionKey = str | tuple[str, str]
"""What a decision made beforehand is filed under: the call's id, or ``(task, call id)``.

Call ids are only unique within a conversation: a model (or a test's script) may number
its calls ``call_0``, ``call_1`` in every conversation, so two tasks of one run can wait
on calls with the same id. The task then tells them apart."""


Approver = Callable[[ApprovalRequest], Any]
"""``approver(request)`` returns True, False, an Approval or None (wait), or an awaitable of one;
a sync approver runs in a worker thread (it may prompt)."""


def needs_approval(rule: Any, call: ToolCall) -> bool:
    """Whether ``call`` needs a person: the tool's ``requires_approval`` (a bool, or a function of the call)."""
    if rule is None or rule is False:
        return False
    if rule is True:
        return True
    decided = rule(call)
    if inspect.isawaitable(decided):
        raise TypeError("requires_approval must be a plain function of the call (not async): it decides at once")
    return bool(decided)


def request_for(
    rule: Any, name: str, args: dict[str, Any], call_id: str, context: RunContext | None, run_id: str | None
) -> ApprovalRequest | None:
    """The request for a person when this call needs one (``rule``: its tool's ``requires_approval``)."""
    if not needs_approval(rule, ToolCall(name=name, args=args, id=call_id)):
        return None
    return ApprovalRequest(
        call_id=call_id,
        tool=name,
        args=args,
        agent=context.agent if context is not None else None,
        task=context.task if context is not None else None,
        run_id=run_id,
    )


def check_decision_keys(approvals: Mapping[DecisionKey, Any], waiting: Iterable[ApprovalRequest]) -> None:
    """Refuse a decision filed under a bare call id that calls of several ``waiting`` tasks share.

    ``waiting``: the calls the decisions are for (a paused run's ``pending_approvals``).
    """
    tasks: dict[str, dict[str, None]] = {}  # call id -> its tasks, in order, each once
    for request in waiting:
        tasks.setdefault(request.call_id, {})[str(request.task)] = None
    for key in approvals:
        if not isinstance(key, str):
            continue  # (task, call id): names its call
        shared = list(tasks.get(key, {}))
        if len(shared) > 1:
            raise AmbiguousCall(
                f"approvals: calls of {len(shared)} tasks share the id {key!r} "
                f"({', '.join(map(repr, shared))}): key each decision by (task, call id), "
                f"e.g. approvals={{({shared[0]!r}, {key!r}): ...}}",
                call_id=key,
                tasks=shared,
            )


def take_decision(decisions: dict[Any, Any], request: ApprovalRequest) -> Any:
    """The decision made beforehand for ``request``'s call, removed (each is used once), or None.

    The one filed under ``(task, call id)`` first, then the one under the call id alone:
    when calls of two tasks share an id, each task takes its own decision, never the other's.
    """
    if request.task is not None:
        scoped = decisions.pop((request.task, request.call_id), None)
        if scoped is not None:
            return scoped
    return decisions.pop(request.call_id, None)


def check_edited_arguments(tool: BaseTool, arguments: dict[str, Any]) -> dict[str, Any]:
    """A person's edited arguments checked against ``tool``'s schema, before the run goes on.

    Checked when the decision is made (``crew approve --args``), not when the paused run
    resumes: a typo found then would only reach the model, as an error about a call the
    person meant to fix. Stricter than a model's call: an argument the tool does not take
    is an error (a misspelt ``pth`` would otherwise be dropped, leaving ``path`` missing).
    Returns the validated arguments; raises ``ToolArgumentsError`` naming each problem.
    """
    from crew.common.keywords import did_you_mean

    unknown = tool.dropped_args(arguments)
    known = [name for name in _argument_names(tool) if name not in arguments]
    problems = {name: f"not an argument of the tool{did_you_mean(name, known)}" for name in unknown}
    try:
        validated = tool.validate_args({k: v for k, v in arguments.items() if k not in unknown})
    except ToolArgumentsError as exc:
        problems.update(exc.problems)
        validated = {}
    if not problems:
        return validated
    lines = [f"Tool '{tool.name}' cannot run with these arguments:"]
    lines += [f"  - {where}: {text}" for where, text in problems.items()]
    lines.append(f"Expected arguments: {tool.args_hint()}.")
    raise ToolArgumentsError("\n".join(lines), tool=tool.name, problems=problems)


def _argument_names(tool: BaseTool) -> list[str]:
    """The names a model may give ``tool`` (its RunContext parameters are not among them)."""
    fields = tool.args_schema.model_fields
    return [name for name in fields if name not in tool.injected_params]


async def ask_approver(approver: Approver, request: ApprovalRequest) -> Any:
    """The approver's answer from async code: a sync approver runs in a worker thread (it may prompt)."""
    if inspect.iscoroutinefunction(approver):
        return await approver(request)
    from crew.common.blocking import in_thread

    answer = await in_thread(approver, request)
    return await answer if inspect.isawaitable(answer) else answer


def waiting_result(request: ApprovalRequest) -> ToolResult:
    """A call nobody decided yet: announced, and handed back ``pending`` (it never ran)."""
    if bus.enabled("approval.requested"):
        bus.emit("approval.requested", **request.model_dump())
    return ToolResult(
        content=f"the call of '{request.tool}' waits for a person's approval",
        tool_call_id=request.call_id,
        name=request.tool,
        status="error",
        pending=True,
    )


def announce_decision(request: ApprovalRequest, decision: Approval) -> None:
    if bus.enabled("approval.decided"):
        bus.emit(
            "approval.decided",
            run_id=request.run_id,
            call_id=request.call_id,
            tool=request.tool,
            decision=decision.decision,
            reason=decision.reason,
            task=request.task,
            agent=request.agent,
        )


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the approval step decided for one call; the executor applies it.

    Nothing set: the call goes on as the model asked. ``arguments``: it runs with these
    instead (a person's edit, still to be validated). ``denied``: it ends as an error with
    this text. ``waiting``: nobody decided yet; this ``pending`` result goes back as it is.
    """

    arguments: dict[str, Any] | None = None
    denied: str | None = None
    waiting: ToolResult | None = None


GO = Verdict()


def approval(
    rule: Any,
    name: str,
    args: dict[str, Any],
    call_id: str,
    context: RunContext | None,
    run_id: str | None,
    decided: Callable[[ApprovalRequest], Any],
    asks: bool,
) -> Generator[ApprovalRequest, Any, Verdict]:
    """The verdict on one call whose tool has ``requires_approval`` (``rule``).

    ``decided(request)`` takes a decision made beforehand (None: there is none); ``asks``: an
    approver is there to ask, by yielding the request (the driver sends its answer back).
    """
    request = request_for(rule, name, args, call_id, context, run_id)
    if request is None:
        return GO
    answer = decided(request)
    if answer is None and asks:
        answer = yield request
    return verdict_of(request, answer)


def verdict_of(request: ApprovalRequest, answer: Any) -> Verdict:
    """An answer (True, False, an ``Approval``, None) as the verdict on ``request``'s call, announced."""
    decision = Approval.of(answer)
    if decision is None:
        return Verdict(waiting=waiting_result(request))
    announce_decision(request, decision)
    if decision.decision == "deny":
        return Verdict(denied=f"denied by a person: {decision.reason or 'no reason given'}")
    if decision.decision == "edit":
        return Verdict(arguments=decision.arguments or {})
    return GO
