"""One agent working on one task: the reasoning loop.

Everything a task accumulates (the transcript, the tool calls made, its usage account)
lives in an ``AgentTaskRun`` made for that call and dropped after it, never on the
``Agent``: one agent can work on several tasks at the same time.

A turn is one model call, made through the run scope (``Meter.call``: the
ledger, budgets and streaming hooks see every call). The mode (``crew.agent.modes``:
native tool calling, or the text protocol) offers the tools and reads the reply into a
``Turn`` (an answer, tool calls, a correction, or nothing); this loop does the rest, the
same for both: it asks, runs the calls through the executor, keeps the history, reports.

The loop ends on a final answer, on a ``result_as_answer`` tool (its content is the
answer and no model call follows), or after ``max_iter`` turns, when the model is asked
once, without tools, for its best answer. An empty reply (no text, no tool call: the
token limit ran out, a content filter, a provider hiccup) is never an answer: the model is
asked once to continue, and a second empty reply in a row, or an empty best answer, is an
``AgentError`` naming the reply's ``finish_reason``. A structured answer is then validated and,
when it does not fit, the model is re-asked with the problems, a bounded number of times.
"""

from __future__ import annotations

import inspect
import sys
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel

from crew.agent import prompts
from crew.agent.checkpoint import Pausing, TaskCheckpoint, replayed
from crew.agent.context import render_sections
from crew.agent.modes import Act, Answer, Correct, Turn, mode_for
from crew.agent.steps import AgentStep, StepCallback, StepKind, describe_step
from crew.agent.structured import MAX_OUTPUT_RETRIES, OutputProblem, json_schema, output_model, parse_output
from crew.agent.transcript import AssistantMessage, Message, SystemMessage, ToolMessage, Transcript, UserMessage
from crew.common.events import bus, scoped
from crew.common.usage import Usage
from crew.errors import AgentError, OutputValidationError, TaskPaused
from crew.models.info import ModelCallInfo
from crew.tasks.output import TaskOutput, ToolCallRecord
from crew.tools.messages import RunContext, ToolCall, ToolResult

if TYPE_CHECKING:
    from crew.agent.meter import Account
    from crew.agent.scope import RunScope
    from crew.models import ChatModel, LLMResponse
    from crew.tasks.task import Task
    from crew.tools.base import BaseTool

__all__ = ["AgentStep", "AgentTaskRun", "StepCallback", "StepKind", "describe_step"]


class Worker(Protocol):
    """What the loop reads of the agent it runs (an ``Agent``; the loop needs nothing else of it)."""

    role: str
    goal: str
    backstory: str
    system_template: str | None
    prompt_template: str | None
    max_iter: int
    max_tool_calls_per_reply: int
    verbose: bool


@dataclass(slots=True)
class Final:
    """The answer a turn ended the task with."""

    text: str
    direct: bool = False  # from a result_as_answer tool: no model call may follow


def direct_answer(results: Sequence[ToolResult]) -> Final | None:
    """The first ``result_as_answer`` result in the calls' order ends the task with its content."""
    for result in results:
        if result.result_as_answer:
            return Final(result.content, direct=True)
    return None


def _hints(tool: BaseTool) -> Any:
    """An MCP tool's ``annotations`` (the server's hints, a field of ``MCPTool``), if the tool has
    any: read from the instance's fields, since a pydantic model answers a missing attribute by
    raising, which cost microseconds for every tool of every task."""
    return getattr(tool, "__dict__", {}).get("annotations")


class AgentTaskRun(Pausing):
    """One agent's run of one task: its transcript, its usage account, and the loop that advances it."""

    def __init__(
        self,
        agent: Worker,
        task: Task,
        *,
        scope: RunScope,
        account: Account,
        model: ChatModel,
        tools: Sequence[BaseTool],
        context: Sequence[TaskOutput],
        feedback: str | None,
        previous_answer: str | None,
        callbacks: Sequence[StepCallback],
        extraction_model: ChatModel | None,
    ) -> None:
        self.agent = agent
        self.task = task
        self.task_name: str = task.name or task.key
        self.scope = scope
        self.account = account
        self.model = model
        self.tools = list(tools)
        self.callbacks = callbacks
        self.extraction_model = extraction_model
        self.mode = mode_for(model.supports_function_calling, self.tools)
        self.output = output_model(task)
        self.schema = json_schema(self.output[0]) if self.output else None
        self.run_context = RunContext(run_id=scope.run_id, task=self.task_name, agent=agent.role)
        self.records: list[ToolCallRecord] = []
        self.empty_turn: int | None = None  # the last turn whose reply was empty
        self.corrected = False  # the previous turn was answered with a format correction
        # approvals: where the current turn began (to checkpoint it), and a checkpoint's turn to replay
        self._turn_mark: tuple[int, int, bool] = (0, 0, False)  # (turn, messages before it, corrected before it)
        self._turn_replies: list[LLMResponse] = []
        checkpoint = scope.checkpoints.get(self.task_name)
        self.checkpoint: TaskCheckpoint | None = checkpoint if checkpoint and checkpoint.agent == agent.role else None
        self._replies: list[LLMResponse] = []
        self._known_results: dict[str, ToolResult] | None = None
        self._known_ids: list[str] = []  # the replayed turn's call ids, for calls read from text
        self._context_names = tuple([out.name for out in context if out.status == "done"])
        self._tool_names = tuple([t.tool_name for t in self.tools])
        self._tool_hints = {t.tool_name: hints for t in self.tools if (hints := _hints(t))}
        sections = render_sections(self.scope.sections.get(self.task_name, ()))
        self.transcript = Transcript(
            SystemMessage(prompts.agent_system_prompt(agent, self.tools, self.mode.text_mode)),
            UserMessage(
                prompts.agent_task_prompt(task, agent, context, feedback, previous_answer, self.schema, sections)
            ),
        )

    # -- the loop -----------------------------------------------------------------

    async def run(self) -> TaskOutput:
        token = self.scope.meter.activate(self.account)  # work started from inside (delegation) is on our account
        try:
            with scoped(agent=self.agent.role):  # a coworker's events are its own, filed under the task
                return await self._run()
        finally:
            self.scope.meter.deactivate(token)

    async def _run(self) -> TaskOutput:
        started = time.time()
        final: Final | None = None
        turn = self._restore() if self.checkpoint is not None else 0
        while final is None and turn < self.agent.max_iter:
            turn += 1
            response, read, extra = await self._read(turn)  # then acted on (one frame: awaits stay shallow)
            act = self._act(turn, response, read, extra) if isinstance(read, Act) else None
            final = await (act if act is not None else self._take(turn, response, read, extra))
        if final is None:
            turn += 1
            final = await self._best_answer(turn)
        raw, value = await self._shape(final, turn)
        field = self.output[1] if self.output else None
        return TaskOutput(
            name=self.task_name,
            description=self.task.description,
            expected_output=self.task.expected_output,
            raw=raw,
            pydantic=value if field == "output_pydantic" else None,
            json_dict=value.model_dump(mode="json") if field == "output_json" and value is not None else None,
            agent=self.agent.role,
            model=self.model.model,
            usage=self.account.usage,
            tool_calls=self.records,
            started_at=started,
            finished_at=time.time(),
        )

    async def _read(self, turn: int) -> tuple[LLMResponse, Turn, Usage | None]:
        """Ask for the turn's reply and let the mode read it (with a helper model's reading, if needed)."""
        response = await self.ask(turn, self.mode.tools, offered=True)
        read: Turn = self.mode.read(response, corrected=self.corrected)
        if isinstance(read, Correct) and read.extractable and self.extraction_model is not None:
            read, extra = await self._extract(turn, read)  # a function_calling_llm's call is this turn's usage
            return response, read, extra
        return response, read, None

    async def _take(self, turn: int, response: LLMResponse, read: Turn, extra: Usage | None) -> Final | None:
        """A reply without tool calls: the answer, a correction to send, or an empty reply."""
        if isinstance(read, Answer):
            self.transcript.append(AssistantMessage(read.said))
            await self.step(turn, "final_answer", response, text=read.text)
            return Final(read.text)
        if isinstance(read, Correct):
            self.corrected = True
            self.transcript.append(AssistantMessage(read.said))
            self.transcript.append(UserMessage(read.message))
            await self.step(turn, "correction", response, text=read.said, extra=extra)
            return None
        assert not isinstance(read, Act)
        await self.empty_reply(turn, response, read.text)
        return None

    async def _extract(self, turn: int, read: Correct) -> tuple[Turn, Usage]:
        """Ask ``function_calling_llm`` to turn a tool request we could not read into a call."""
        assert self.extraction_model is not None
        tools = [t.to_openai_tool() for t in self.tools]
        ask = prompts.render(prompts.TOOL_CALL_EXTRACTION, {"text": read.said})
        messages = [UserMessage(ask)]
        response = await self.ask(turn, tools, offered=True, model=self.extraction_model, messages=messages)
        if not response.tool_calls:
            return read, response.usage
        return Act(list(response.tool_calls), AssistantMessage(read.said), read.said, native=False), response.usage

    async def _act(self, turn: int, response: LLMResponse, act: Act, extra: Usage | None) -> Final | None:
        """Run the calls, answer them in the history (as the mode's protocol does), report the turn."""
        self.corrected = False
        self.transcript.append(act.said)
        if self._known_ids and not act.native:  # read again from the same text: the ids it had before the pause
            act.calls = [c.model_copy(update={"id": i}) for c, i in zip(act.calls, self._known_ids, strict=False)]
        self._known_ids = []
        cap = self.agent.max_tool_calls_per_reply
        results = await self.execute(act.calls[:cap]) if act.calls else []
        if len(act.calls) > cap:
            results.extend(self._refused(act.calls, cap))
        if act.native:
            for result in results:
                self.transcript.append(ToolMessage(result.tool_call_id, result.content))
            for bad in act.invalid:  # unreadable arguments: their ids must be answered too
                content = prompts.render(prompts.INVALID_TOOL_CALL, {"tool": bad.name, "error": bad.error})
                self.transcript.append(ToolMessage(bad.id, content))
                self.records.append(ToolCallRecord(name=bad.name, status="error"))
        else:
            contents = [prompts.render(prompts.OBSERVATION, {"content": result.content}) for result in results]
            self.transcript.append(UserMessage("\n".join(contents)))
        await self.step(turn, "tool_calls", response, text=act.thought, calls=act.calls, results=results, extra=extra)
        return direct_answer(results)

    def ask(
        self,
        turn: int,
        tools: list[dict[str, Any]] | None,
        *,
        offered: bool,
        model: ChatModel | None = None,
        messages: Sequence[Message] | None = None,
    ) -> Awaitable[LLMResponse]:
        """One model call through the run scope; ``offered``: the turn offers the tools (by name in ``info``).

        Not a coroutine itself: it hands back the scope's, one frame less per model call. The
        turn's replies are kept (for a checkpoint, should its tool calls wait for approval); a
        turn resumed from a checkpoint gets its saved replies instead of calling the model.
        """
        chosen = model or self.model
        info = ModelCallInfo(  # positional: this runs once per model call
            self.agent.role,
            self.task_name,
            self._context_names,
            self._tool_names if offered else (),
            turn,
            self.schema,
            self.scope.run_id,
            chosen.model,
            self._tool_hints if offered else {},
        )
        if turn != self._turn_mark[0]:
            self._turn_mark, self._turn_replies = (turn, len(self.transcript), self.corrected), []
        if self._replies:  # a resumed turn: the model already answered it before the pause
            return self._kept(replayed(self._replies.pop(0)))
        wire = self.transcript.wire() if messages is None else Transcript(*messages).wire()
        return self._kept(
            self.scope.meter.call(self.account, chosen, wire, tools, output_schema=self.schema, info=info)
        )

    async def _kept(self, reply: Awaitable[LLMResponse]) -> LLMResponse:
        response = await reply
        self._turn_replies.append(response)
        return response

    async def empty_reply(self, turn: int, response: LLMResponse, text: str) -> None:
        """A reply with neither an answer nor a tool call: ask once to go on; twice in a row is an error.

        Taking it as the answer would let the task "succeed" with nothing and its readers run on it.
        """
        if self.empty_turn == turn - 1:
            await self.step(turn, "final_answer", response, text="")  # reported even so: it was paid for
            raise self._no_answer(
                response,
                f"agent '{self.agent.role}' got an empty reply on task "
                f"'{self.task_name}' twice in a row, the second after asking the "
                "model to continue",
            )
        self.empty_turn = turn
        if text:  # a bare "Final Answer:"; an empty assistant message is refused by some providers
            self.transcript.append(AssistantMessage(text))
        self.transcript.append(UserMessage(self.mode.empty_reply_prompt))
        await self.step(turn, "correction", response, text=text)

    def _no_answer(self, response: LLMResponse, message: str) -> AgentError:
        reason = response.finish_reason
        hint = _FINISH_HINTS.get(reason or "", "")
        return AgentError(
            f"{message} (finish_reason: {reason or 'not reported'}{hint})", agent=self.agent.role, task=self.task_name
        )

    async def _best_answer(self, turn: int) -> Final:
        """Past ``max_iter``: one call without tools for the best answer the model has."""
        self.transcript.append(UserMessage(self.mode.force_final_prompt))
        response = await self.ask(turn, None, offered=False)
        text = response.content or ""
        self.transcript.append(AssistantMessage(text))
        answer = self.mode.answer_text(text)
        await self.step(turn, "final_answer", response, text=answer)  # reported even when empty: it was paid for
        if not answer:
            raise self._no_answer(
                response,
                f"agent '{self.agent.role}' gave no final answer to task "
                f"'{self.task_name}' within max_iter={self.agent.max_iter} turns, "
                "and none when asked for its best answer",
            )
        return Final(answer)

    async def _shape(self, final: Final, turn: int) -> tuple[str, BaseModel | None]:
        """The raw output and, for structured tasks, the validated value (re-asking when needed)."""
        if self.output is None:
            return final.text, None
        model, field = self.output
        text = final.text
        for retry in range(MAX_OUTPUT_RETRIES + 1):
            try:
                value = parse_output(text, model)
                return value.model_dump_json(), value
            except OutputProblem as problem:
                if final.direct or retry == MAX_OUTPUT_RETRIES:
                    why = "the result_as_answer tool's output" if final.direct else "the final answer"
                    raise OutputValidationError(
                        f"agent '{self.agent.role}': {why} for task '{self.task_name}' does not match "
                        f"{field}={model.__name__} (after {retry} re-ask(s)):\n{problem}",
                        agent=self.agent.role,
                        task=self.task_name,
                    ) from None
                self.transcript.append(UserMessage(prompts.render(prompts.STRUCTURED_RETRY, {"errors": str(problem)})))
                response = await self.ask(turn, None, offered=False)
                reply = response.content or ""
                self.transcript.append(AssistantMessage(reply))
                text = self.mode.answer_text(reply)
                await self.step(turn, "output_retry", response, text=text)
        raise AssertionError("unreachable")  # pragma: no cover

    # -- tools ----------------------------------------------------------------------

    async def execute(self, calls: Sequence[ToolCall]) -> list[ToolResult]:
        """Run a turn's calls through the run's executor and keep a record of each."""
        if bus.enabled("tool.start"):  # a stream shows a call the moment it starts (the executor reports its end)
            for call in calls:
                bus.emit(
                    "tool.start",
                    run_id=self.scope.run_id,
                    task=self.task_name,
                    agent=self.agent.role,
                    tool=call.name,
                    args=call.args,
                    call_id=call.id,
                )
        known, self._known_results = self._known_results or {}, None
        fresh = [call for call in calls if call.id not in known]
        ran = iter(await self.scope.executor.aexecute_many(fresh, tools=self.tools, context=self.run_context))
        results = [known[call.id] if call.id in known else next(ran) for call in calls]
        if any(result.pending for result in results):
            raise TaskPaused(self._checkpoint(calls, results))
        for call, result in zip(calls, results, strict=True):
            self.records.append(
                ToolCallRecord.model_construct(  # the executor's figures, already validated: no second pass
                    name=result.name,
                    args=call.args,
                    status=result.status,
                    cached=result.cached,
                    refused=result.refused,
                    duration=result.duration,
                )
            )
        return results

    def _refused(self, calls: Sequence[ToolCall], cap: int) -> list[ToolResult]:
        """The calls of a reply past ``cap``: not run, each answered with the error naming the cap."""
        content = prompts.render(prompts.TOO_MANY_CALLS, {"cap": str(cap), "count": str(len(calls))})
        refused = [ToolResult(content, call.id, call.name, status="error", refused=True) for call in calls[cap:]]
        self.records.extend(ToolCallRecord(name=c.name, args=c.args, status="error", refused=True) for c in calls[cap:])
        return refused

    # -- reporting ------------------------------------------------------------------

    async def step(
        self,
        turn: int,
        kind: StepKind,
        response: LLMResponse,
        *,
        text: str = "",
        calls: Sequence[ToolCall] = (),
        results: Sequence[ToolResult] = (),
        extra: Usage | None = None,
    ) -> None:
        """Report a turn; its usage is the turn's model calls (``extra``: a helper model's), never
        the work its tools had done, so the steps of a task add up to what its own models spent."""
        if bus.enabled("agent.turn"):
            bus.emit(
                "agent.turn",
                run_id=self.scope.run_id,
                agent=self.agent.role,
                task=self.task_name,
                turn=turn,
                kind=kind,
                protocol=self.mode.protocol,
                tool_calls=[c.name for c in calls],
                prompt_tokens=response.usage.prompt_tokens,
                completion_tokens=response.usage.completion_tokens,
                latency=response.latency,
            )
        if not self.callbacks and not self.agent.verbose:
            return
        step = AgentStep(
            agent=self.agent.role,
            task=self.task_name,
            turn=turn,
            kind=kind,
            text=text,
            tool_calls=list(calls),
            results=list(results),
            usage=response.usage if extra is None else response.usage + extra,
        )
        if self.agent.verbose:
            print(describe_step(step), file=sys.stderr, flush=True)
        for callback in self.callbacks:
            outcome = callback(step)
            if inspect.isawaitable(outcome):
                await outcome


_FINISH_HINTS = {
    "length": ": the reply ran into the token limit, raise max_tokens",
    "content_filter": ": the provider's content filter withheld the reply",
}
"""What the usual reasons for an empty reply mean for the user."""
