"""Served crews as the tools of an MCP server (the official SDK's high-level ``MCPServer``).

One tool per crew: its name, description and input schema are the ``ServedCrew``'s, and an
output schema when the crew's last task has a structured output. A call checks the inputs
(``ServedCrew.check_inputs``: a clear error result, never a traceback), runs a kickoff
through :class:`~crew.serve.kickoffs.Kickoffs`, sends the stream's task events as progress
notifications (when the client asked for progress), and returns the final output (its
structured content too when structured) with the run id and status in the result's
``_meta``. A run that failed or paused is an error result that says why: a paused one lists
the calls that wait and the ``crew approve`` / ``crew resume`` commands that continue it.

A tool call that needs approval asks the MCP client through elicitation when it declared the
capability (a yes/no form with a reason): mid-call on a legacy connection, through the
input-required rounds of protocol 2026-07-28 on a current one (``crew.serve.mcp_rounds``). A
client without the capability, or a question nobody answers, leaves the call waiting and the
run pauses. Cancelling the MCP request
cancels the handler, which cancels the run (recorded as interrupted).

The SDK derives a tool's schema from a Python signature; a crew's inputs are known only when
its folder is read, so each tool is the SDK's ``Tool`` record built from the schema itself,
with an argument model that keeps every argument as given: the checking is ours, with
messages that name the input.
"""

from __future__ import annotations

import json
import shlex
import uuid
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.shared.exceptions import NoBackChannelError
from mcp_types import CallToolResult, InputRequiredResult, TextContent
from pydantic import BaseModel, ConfigDict, Field

from crew.common.secrets import scrub, scrub_data
from crew.errors import CrewRunError, ServeInputError
from crew.serve.kickoffs import Kickoffs
from crew.serve.mcp_rounds import Replies, Waiting, asks_by_retry, call_with_rounds
from crew.serve.served import ServedCrew
from crew.stream.events import ApprovalRequested, StreamEvent, TaskFailed, TaskFinished, TaskSkipped, TaskStarted

__all__ = ["build_mcp_server", "paused_text"]

_CONTEXT = "_crew_request_context"
"""The keyword the SDK hands the request's ``Context`` under (no crew input can be named so)."""


class _AsGiven(ArgModelBase):
    """Every argument as the client sent it; ``ServedCrew.check_inputs`` checks them."""

    model_config = ConfigDict(extra="allow")

    def model_dump_one_level(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class _Decision(BaseModel):
    """The elicitation form for one tool call that waits for approval."""

    approve: bool = Field(description="run the tool call as the agent asked")
    reason: str = Field(default="", description="when not approved: why (the agent reads it)")


def build_mcp_server(served: list[ServedCrew], kickoffs: Kickoffs, *, name: str = "crew") -> MCPServer:
    """The MCP server whose tools are the ``served`` crews."""
    from crew import __version__

    waits: dict[str, Waiting] = {}
    tools = [_tool(one, kickoffs, waits) for one in served]
    listed = ", ".join(one.name for one in served)
    return MCPServer(
        name,
        version=__version__,
        instructions=f"Each tool runs a crew of LLM agents ({listed}) and returns its final output.",
        tools=tools,
        log_level="WARNING",
    )


def _tool(one: ServedCrew, kickoffs: Kickoffs, waits: dict[str, Waiting]) -> Tool:
    async def call(**arguments: Any) -> CallToolResult | InputRequiredResult:
        context: Context = arguments.pop(_CONTEXT)
        if asks_by_retry(context):
            return await call_with_rounds(one, kickoffs, arguments, context, waits, _replies())
        return await _call(one, kickoffs, arguments, context)

    return Tool(
        fn=call,
        name=one.name,
        title=None,
        description=one.description,
        parameters=one.input_schema,
        fn_metadata=FuncMetadata(arg_model=_AsGiven, output_schema=one.output_schema),
        is_async=True,
        context_kwarg=_CONTEXT,
        annotations=None,
    )


async def _call(one: ServedCrew, kickoffs: Kickoffs, arguments: dict[str, Any], context: Context) -> CallToolResult:
    try:
        inputs = one.check_inputs(arguments)
    except ServeInputError as exc:
        return _error(str(exc), {"status": "refused"})
    run_id = uuid.uuid4().hex
    progress = _Progress(context, total=len(one.crew.tasks))
    try:
        output = await kickoffs.run(
            one, inputs, run_id=run_id, on_event=progress.send, approver=_eliciting_approver(context)
        )
    except CrewRunError as exc:
        return _error(scrub(str(exc)), {"run_id": run_id, "status": "failed"})
    return _result(one, run_id, output)


def _result(one: ServedCrew, run_id: str, output: Any) -> CallToolResult:
    """The tool's result for a run that ended (done, paused or failed)."""
    if output.status == "paused":
        return _error(paused_text(one, output), {"run_id": run_id, "status": "paused"})
    failed = [t for t in output.tasks_output if t.status == "failed"]
    if failed:
        why = "; ".join(f"task '{t.name}' failed: {t.error}" for t in failed)
        return _error(scrub(why), {"run_id": run_id, "status": "failed"})
    structured = one.final_output(output)
    if one.output_schema is not None and structured is None:  # the schema promises it: no result without it
        return _error("the crew's last task gave no structured output", {"run_id": run_id, "status": "failed"})
    return CallToolResult(
        content=[TextContent(type="text", text=scrub(output.raw))],
        structured_content=scrub_data(structured) if structured is not None else None,
        _meta={"run_id": run_id, "status": "done"},
    )


def _error(text: str, meta: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True, _meta=meta)


def paused_text(one: ServedCrew, output: Any) -> str:
    """What a paused run waits on, and the commands that approve and continue it."""
    run = (output.run_id or "")[:12]
    where = f" --path {shlex.quote(str(one.folder))}" if one.store is not None and one.folder is not None else ""
    lines = [f"The run {run} of crew '{one.name}' is paused: tool calls wait for a person's approval."]
    for request in output.pending_approvals:
        args = json.dumps(scrub_data(request.args), ensure_ascii=False)
        lines.append(f"- call {request.call_id}: {request.tool}({args}) by '{request.agent}' in task '{request.task}'")
    first = output.pending_approvals[0].call_id if output.pending_approvals else "CALL_ID"
    lines.append(f"Approve with: crew approve {run} {shlex.quote(first)}{where} (or --deny REASON)")
    lines.append(f"then continue: crew resume {run}{where}")
    return scrub("\n".join(lines))


class _Progress:
    """The run's task events as MCP progress notifications: progress = tasks ended of ``total``.

    The SDK sends nothing to a client that gave no progress token with its call."""

    def __init__(self, context: Context, *, total: int) -> None:
        self.context, self.total, self.ended = context, total, 0

    async def send(self, event: StreamEvent) -> None:
        message = _describe(event)
        if message is None:
            return
        if isinstance(event, TaskFinished | TaskFailed | TaskSkipped):
            self.ended += 1
        try:
            await self.context.report_progress(self.ended, self.total, scrub(message))
        except Exception:  # noqa: BLE001 - a notification that cannot be sent must not stop the run
            return


def _describe(event: StreamEvent) -> str | None:
    """One line per task event (and per approval asked for); None for the others (model text, tools)."""
    if isinstance(event, TaskStarted):
        return f"task.started {event.task}" + (f" ({event.agent})" if event.agent else "")
    if isinstance(event, TaskFinished):
        return f"task.finished {event.task}"
    if isinstance(event, TaskFailed):
        return f"task.failed {event.task}: {event.error}"
    if isinstance(event, TaskSkipped):
        return f"task.skipped {event.task}"
    if isinstance(event, ApprovalRequested):
        return f"approval.requested {event.tool} in task {event.task}"
    return None


def _eliciting_approver(context: Context) -> Any:
    """An approver that asks the MCP client (elicitation), or None when the client cannot be asked."""
    capabilities = context.client_capabilities
    if capabilities is None or capabilities.elicitation is None:
        return None
    from crew.tools.approval import Approval, ApprovalRequest

    async def ask(request: ApprovalRequest) -> Approval | None:
        try:
            answer = await context.elicit(_question(request), _Decision)
        except NoBackChannelError:
            return None  # the connection cannot ask the client: the run pauses
        if answer.action == "decline":
            return Approval.deny("declined through the MCP client")
        if answer.action != "accept":
            return None  # the form was dismissed: nobody decided, the call waits and the run pauses
        decision = answer.data
        if decision.approve:
            return Approval.approve()
        return Approval.deny(decision.reason or "denied through the MCP client")

    return ask


def _question(request: Any) -> str:
    """The elicitation's message for one tool call that waits for approval."""
    args = json.dumps(scrub_data(request.args), ensure_ascii=False)
    return scrub(f"Agent '{request.agent}' (task '{request.task}') wants to call {request.tool}({args}). Approve it?")


def _replies() -> Replies:
    return Replies(
        result=_result,
        error=_error,
        question=_question,
        form=_Decision,
        progress=lambda context, total: _Progress(context, total=total),
    )
