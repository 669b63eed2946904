"""Approvals over MCP's input-required rounds (protocol 2026-07-28 on, what a current SDK client speaks).

A current client's requests carry no back channel: a server cannot send it ``elicitation/create``
in the middle of a call (the SDK raises ``NoBackChannelError``). It asks by answering the call
with an ``InputRequiredResult`` instead: the questions (here, one elicitation form per tool call
that waits) and an opaque ``request_state``; the client answers them and sends the same call
again with its answers and that state.

A crew's run cannot stop and start again between the rounds without losing its place, so it
goes on in the server, in the background, while the client answers: its approver waits for the
answer to the question the last round asked. The first round starts the run and returns its
first question (or, when nothing needs approval, its result); each retry hands the answer to
the waiting approver and returns the next question or the result. ``request_state`` is a random
token naming the waiting run in this process. A client that never comes back leaves the call
undecided after ``ANSWER_SECONDS``: the run then pauses, as without elicitation, recorded for
``crew approve`` / ``crew resume``. A cancelled round cancels the run.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp.server.elicitation import render_elicitation_schema
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult
from pydantic import BaseModel

from crew.common.secrets import scrub
from crew.errors import CrewRunError, ServeInputError
from crew.serve.kickoffs import Kickoffs
from crew.serve.served import ServedCrew

__all__ = ["ANSWER_SECONDS", "Replies", "Waiting", "asks_by_retry", "call_with_rounds"]

ROUNDS_FROM = "2026-07-28"
"""The first protocol version that elicits through input-required rounds."""

ANSWER_SECONDS = 600.0
"""How long a question waits for the client's retry before the call is left undecided (the run pauses)."""

_KEY = "approval"


def asks_by_retry(context: Context) -> bool:
    """True when this call's client speaks the rounds and declared form elicitation."""
    version = context.protocol_version
    capabilities = context.client_capabilities
    if version is None or version < ROUNDS_FROM or capabilities is None or capabilities.elicitation is None:
        return False
    elicitation = capabilities.elicitation
    return elicitation.form is not None or elicitation.url is None


@dataclass(frozen=True)
class Replies:
    """What the MCP server answers with: ``crew.serve.mcp_server`` hands its own (no import circle)."""

    result: Callable[[ServedCrew, str, Any], CallToolResult]
    """A finished run's result (done, paused or failed)."""
    error: Callable[[str, dict[str, Any]], CallToolResult]
    question: Callable[[Any], str]
    """The elicitation's message for a call that waits."""
    form: type[BaseModel]
    """The elicitation's form."""
    progress: Callable[[Context, int], Any]
    """The progress reporter of a call (its ``send`` hears the run's events)."""


class Waiting:
    """A run going on in the background, and the question its approver waits on."""

    def __init__(self, one: ServedCrew, run_id: str) -> None:
        self.one, self.run_id = one, run_id
        self.asked: asyncio.Queue[tuple[Any, asyncio.Future[Any]]] = asyncio.Queue()
        self.answer: asyncio.Future[Any] | None = None
        self.run: asyncio.Future[Any] | None = None
        self.timer: asyncio.TimerHandle | None = None

    async def approver(self, request: Any) -> Any:
        """The run's approver: the question goes to the next round; the answer comes back with the retry."""
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        await self.asked.put((request, answer))
        return await answer


async def call_with_rounds(
    one: ServedCrew,
    kickoffs: Kickoffs,
    arguments: dict[str, Any],
    context: Context,
    waits: dict[str, Waiting],
    replies: Replies,
) -> CallToolResult | InputRequiredResult:
    """One round of a call: the first starts the run, a retry answers its question; the next question or the result."""
    state = context.request_state
    waiting = waits.pop(state, None) if state else None
    if waiting is None:
        if state:
            gone = "this call's request_state names no run waiting in this server: call the tool again"
            return replies.error(gone, {})
        try:
            inputs = one.check_inputs(arguments)
        except ServeInputError as exc:
            return replies.error(str(exc), {"status": "refused"})
        waiting = Waiting(one, uuid.uuid4().hex)
        progress = replies.progress(context, len(one.crew.tasks))
        waiting.run = asyncio.ensure_future(
            kickoffs.run(one, inputs, run_id=waiting.run_id, on_event=progress.send, approver=waiting.approver)
        )
    else:
        _answer(waiting, (context.input_responses or {}).get(_KEY))
    return await _next(waiting, waits, replies)


def _answer(waiting: Waiting, response: Any) -> None:
    from crew.tools.approval import Approval

    if waiting.timer is not None:
        waiting.timer.cancel()
    decision = None
    if isinstance(response, ElicitResult) and response.action == "decline":
        decision = Approval.deny("declined through the MCP client")
    elif isinstance(response, ElicitResult) and response.action == "accept" and response.content is not None:
        approve = response.content.get("approve") is True
        reason = str(response.content.get("reason") or "")
        decision = Approval.approve() if approve else Approval.deny(reason or "denied through the MCP client")
    if waiting.answer is not None and not waiting.answer.done():
        waiting.answer.set_result(decision)  # None (dismissed, or no answer): the call waits, the run pauses


async def _next(waiting: Waiting, waits: dict[str, Waiting], replies: Replies) -> CallToolResult | InputRequiredResult:
    assert waiting.run is not None
    asking = asyncio.ensure_future(waiting.asked.get())
    try:
        await asyncio.wait([waiting.run, asking], return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        asking.cancel()
        waiting.run.cancel()  # the round was cancelled: so is the run (recorded as interrupted)
        raise
    if asking.done():
        request, waiting.answer = asking.result()
        return _ask(waiting, request, waits, replies)
    asking.cancel()
    try:
        output = waiting.run.result()
    except CrewRunError as exc:
        return replies.error(scrub(str(exc)), {"run_id": waiting.run_id, "status": "failed"})
    return replies.result(waiting.one, waiting.run_id, output)


def _ask(waiting: Waiting, request: Any, waits: dict[str, Waiting], replies: Replies) -> InputRequiredResult:
    token = uuid.uuid4().hex
    waits[token] = waiting

    def unanswered() -> None:
        if waits.pop(token, None) is not None:
            _answer(waiting, None)

    waiting.timer = asyncio.get_running_loop().call_later(ANSWER_SECONDS, unanswered)
    schema = render_elicitation_schema(replies.form)
    ask = ElicitRequest(params=ElicitRequestFormParams(message=replies.question(request), requested_schema=schema))
    return InputRequiredResult(input_requests={_KEY: ask}, request_state=token)
