"""One agent working on one task: the reasoning loop.

Everything a task accumulates (the messages, usage, the tool calls made) lives in a
``TaskRun`` made for that call and dropped after it, never on the ``Agent``: one agent
can work on several tasks at the same time.

A turn is one model call. In native mode its tool calls run together through the
shared executor and every result goes back as a tool message answering its call id;
in text mode the reply is parsed (``crew.text_protocol``) and one action runs per turn.
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from crew import prompts
from crew.errors import AgentError, OutputValidationError
from crew.events import bus, scoped
from crew.structured import MAX_OUTPUT_RETRIES, OutputProblem, json_schema, output_model, parse_output
from crew.tasks.output import TaskOutput, ToolCallRecord
from crew.text_protocol import Action, FinalAnswer, Unparseable, clean_tool_name, parse_reply
from crew.tools.calls import RunContext, ToolCall, ToolResult
from crew.tools.schema import sanitize_tool_name
from crew.usage import Usage

if TYPE_CHECKING:
    from crew.agent import Agent
    from crew.models import ChatModel, LLMResponse
    from crew.tasks.task import Task
    from crew.tools.base import BaseTool
    from crew.tools.executor import ToolExecutor

StepKind = Literal["tool_calls", "final_answer", "correction", "output_retry"]


class AgentStep(BaseModel):
    """What ``step_callback`` receives after every model turn."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    agent: str
    task: str
    turn: int
    kind: StepKind
    text: str = ""  # the model's text: its thought, answer or unparseable reply
    tool_calls: list[ToolCall] = Field(default_factory=list)
    results: list[ToolResult] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)  # of this turn's model calls (its own, any function_calling_llm)


StepCallback = Callable[[AgentStep], Any]


@dataclass(slots=True)
class _Final:
    text: str
    direct: bool = False  # from a result_as_answer tool: no model call may follow


class TaskRun:
    """The state of one agent on one task, and the loop that advances it."""

    def __init__(
        self,
        agent: Agent,
        task: Task,
        *,
        model: ChatModel,
        tools: Sequence[BaseTool],
        executor: ToolExecutor,
        context: Sequence[TaskOutput],
        run_id: str | None,
        feedback: str | None,
        previous_answer: str | None,
        callbacks: Sequence[StepCallback],
        extraction_model: ChatModel | None,
    ) -> None:
        self.agent = agent
        self.task = task
        self.task_name: str = task.name or task.key
        self.model = model
        self.tools = list(tools)
        self.executor = executor
        self.run_id = run_id
        self.callbacks = callbacks
        self.extraction_model = extraction_model
        self.text_mode = not model.supports_function_calling
        self.output = output_model(task)
        self.schema = json_schema(self.output[0]) if self.output else None
        self.openai_tools = [t.to_openai_tool() for t in self.tools] if self.tools and not self.text_mode else None
        self.run_context = RunContext(run_id=run_id, task=self.task_name, agent=agent.role)
        self.usage = Usage()
        self.records: list[ToolCallRecord] = []
        self.corrected = False  # the previous turn was answered with a format correction
        self.empty_turn: int | None = None  # the last turn whose reply was empty
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": self._system_prompt()},
            {"role": "user", "content": self._task_prompt(context, feedback, previous_answer)},
        ]

    # -- prompts ------------------------------------------------------------------

    def _system_prompt(self) -> str:
        agent = self.agent
        return prompts.system_prompt(
            role=agent.role,
            goal=agent.goal,
            backstory=agent.backstory,
            tool_descriptions=[t.describe() for t in self.tools] if self.text_mode else [],
            tool_names=[t.tool_name for t in self.tools],
            text_mode=self.text_mode,
            template=agent.system_template,
            tool_results=[] if self.text_mode else [(t.tool_name, r) for t in self.tools if (r := t.describe_result())],
        )

    def _task_prompt(self, context: Sequence[TaskOutput], feedback: str | None, previous_answer: str | None) -> str:
        return prompts.task_prompt(
            description=self.task.description,
            expected_output=self.task.expected_output,
            context=((out.name, out.raw) for out in context if out.status == "done"),
            feedback=feedback,
            previous_answer=previous_answer,
            schema=self.schema,
            template=self.agent.prompt_template,
        )

    # -- the loop -----------------------------------------------------------------

    async def run(self) -> TaskOutput:
        with scoped(agent=self.agent.role):  # a coworker's model calls are its own, filed under the task
            return await self._run()

    async def _run(self) -> TaskOutput:
        started = time.time()
        final: _Final | None = None
        turn = 0
        while final is None and turn < self.agent.max_iter:
            turn += 1
            final = await (self._text_turn(turn) if self.text_mode else self._native_turn(turn))
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
            model=getattr(self.model, "model", None),
            usage=self.usage,
            tool_calls=self.records,
            started_at=started,
            finished_at=time.time(),
        )

    async def _ask(self, tools: list[dict[str, Any]] | None) -> LLMResponse:
        response = await self.model.acomplete(list(self.messages), tools, output_schema=self.schema)
        self.usage = self.usage + response.usage
        return response

    async def _native_turn(self, turn: int) -> _Final | None:
        response = await self._ask(self.openai_tools)
        invalid = getattr(response, "invalid_tool_calls", None) or []
        if not response.tool_calls and not invalid:
            text = response.content or ""
            if not text.strip():
                return await self._empty_reply(turn, response, text)
            self.messages.append({"role": "assistant", "content": text})
            await self._step(turn, "final_answer", response, text=text)
            return _Final(text)
        self.messages.append(response.raw_message)
        results = await self._execute(response.tool_calls) if response.tool_calls else []
        for result in results:
            self.messages.append({"role": "tool", "tool_call_id": result.tool_call_id, "content": result.content})
        for bad in invalid:  # unreadable arguments: their ids must be answered too
            content = prompts.render(prompts.INVALID_TOOL_CALL, {"tool": bad.name, "error": bad.error})
            self.messages.append({"role": "tool", "tool_call_id": bad.id, "content": content})
            self.records.append(ToolCallRecord(name=bad.name, status="error"))
        await self._step(
            turn, "tool_calls", response, text=response.content or "", calls=response.tool_calls, results=results
        )
        return _direct(results)

    async def _text_turn(self, turn: int) -> _Final | None:
        response = await self._ask(None)
        text = response.content or ""
        parsed = parse_reply(text)
        answer = parsed.answer if isinstance(parsed, FinalAnswer) else text.strip()
        if not answer and not isinstance(parsed, Action):  # nothing said ("", or a bare "Final Answer:")
            return await self._empty_reply(turn, response, text)
        if not self.tools:  # nothing to call: whatever it says is the answer
            return await self._text_final(turn, response, text, answer)
        if isinstance(parsed, FinalAnswer):
            return await self._text_final(turn, response, text, parsed.answer)
        calls: list[ToolCall] = []
        said = text
        extracted: Usage | None = None  # a function_calling_llm's call belongs to this turn's usage
        if isinstance(parsed, Action):
            args = self._action_args(parsed)
            if args is not None:
                calls, said = [ToolCall(name=self._tool_name(parsed.tool), args=args)], parsed.text
            else:
                parsed = Unparseable(f"the Action Input of '{parsed.tool}' is not a JSON object", has_marker=True)
        if isinstance(parsed, Unparseable) and parsed.has_marker and self.extraction_model is not None:
            calls, extracted = await self._extract_calls(text)
        if not calls:
            assert isinstance(parsed, Unparseable)
            if self.corrected and not parsed.has_marker:
                return await self._text_final(turn, response, text, answer)  # weak models do this
            self.corrected = True
            self.messages.append({"role": "assistant", "content": text})
            self.messages.append(
                {"role": "user", "content": prompts.render(prompts.CORRECTION, {"reason": parsed.reason})}
            )
            await self._step(turn, "correction", response, text=text, extra=extracted)
            return None
        self.corrected = False
        results = await self._execute(calls)
        observation = "\n".join(prompts.render(prompts.OBSERVATION, {"content": result.content}) for result in results)
        self.messages.append({"role": "assistant", "content": said})
        self.messages.append({"role": "user", "content": observation})
        await self._step(turn, "tool_calls", response, text=said, calls=calls, results=results, extra=extracted)
        return _direct(results)

    async def _text_final(self, turn: int, response: LLMResponse, text: str, answer: str) -> _Final:
        self.messages.append({"role": "assistant", "content": text})
        await self._step(turn, "final_answer", response, text=answer)
        return _Final(answer)

    async def _empty_reply(self, turn: int, response: LLMResponse, text: str) -> None:
        """A reply with neither an answer nor a tool call: ask once to go on; twice in a row is an error.

        Taking it as the answer would let the task "succeed" with nothing and its readers run on it.
        """
        if self.empty_turn == turn - 1:
            await self._step(turn, "final_answer", response, text="")  # reported even so: it was paid for
            raise self._no_answer(
                response,
                f"agent '{self.agent.role}' got an empty reply on task "
                f"'{self.task_name}' twice in a row, the second after asking the "
                "model to continue",
            )
        self.empty_turn = turn
        if text:  # a bare "Final Answer:"; an empty assistant message is refused by some providers
            self.messages.append({"role": "assistant", "content": text})
        ask = prompts.EMPTY_REPLY_TEXT if self.text_mode else prompts.EMPTY_REPLY
        self.messages.append({"role": "user", "content": ask})
        await self._step(turn, "correction", response, text=text)

    def _no_answer(self, response: LLMResponse, message: str) -> AgentError:
        reason = response.finish_reason
        hint = _FINISH_HINTS.get(reason or "", "")
        return AgentError(
            f"{message} (finish_reason: {reason or 'not reported'}{hint})", agent=self.agent.role, task=self.task_name
        )

    async def _best_answer(self, turn: int) -> _Final:
        """Past ``max_iter``: one call without tools for the best answer the model has."""
        ask = prompts.FORCE_FINAL_TEXT if self.text_mode else prompts.FORCE_FINAL
        self.messages.append({"role": "user", "content": ask})
        response = await self._ask(None)
        text = response.content or ""
        self.messages.append({"role": "assistant", "content": text})
        answer = self._answer_text(text)
        await self._step(turn, "final_answer", response, text=answer)  # reported even when empty: it was paid for
        if not answer:
            raise self._no_answer(
                response,
                f"agent '{self.agent.role}' gave no final answer to task "
                f"'{self.task_name}' within max_iter={self.agent.max_iter} turns, "
                "and none when asked for its best answer",
            )
        return _Final(answer)

    async def _shape(self, final: _Final, turn: int) -> tuple[str, BaseModel | None]:
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
                self.messages.append(
                    {"role": "user", "content": prompts.render(prompts.STRUCTURED_RETRY, {"errors": str(problem)})}
                )
                response = await self._ask(None)
                reply = response.content or ""
                self.messages.append({"role": "assistant", "content": reply})
                text = self._answer_text(reply)
                await self._step(turn, "output_retry", response, text=text)
        raise AssertionError("unreachable")  # pragma: no cover

    def _answer_text(self, text: str) -> str:
        parsed = parse_reply(text) if self.text_mode else None
        return (parsed.answer if isinstance(parsed, FinalAnswer) else text).strip()

    # -- tools ----------------------------------------------------------------------

    async def _execute(self, calls: Sequence[ToolCall]) -> list[ToolResult]:
        results = await self.executor.aexecute_many(calls, tools=self.tools, context=self.run_context)
        for call, result in zip(calls, results, strict=True):
            self.records.append(
                ToolCallRecord(
                    name=result.name,
                    args=call.args,
                    status=result.status,
                    cached=result.cached,
                    refused=result.refused,
                    duration=result.duration,
                )
            )
            # work a tool had models do for us (a delegated task) counts toward this task, done
            # (the artifact) or failed (the tool's exception, kept in ``raw``, carries it as ``output``)
            work = result.artifact if result.status == "success" else getattr(result.raw, "output", None)
            if isinstance(work, TaskOutput) and not result.cached:
                self.usage = self.usage + work.usage
        return results

    def _find_tool(self, name: str) -> BaseTool | None:
        wanted = {name.lower(), sanitize_tool_name(name).lower(), sanitize_tool_name(clean_tool_name(name)).lower()}
        for tool in self.tools:
            if tool.tool_name.lower() in wanted or tool.name.lower() in wanted:
                return tool
        return None

    def _tool_name(self, name: str) -> str:
        """The tool's canonical name for a spelling the model used (unknown names pass through)."""
        tool = self._find_tool(name)
        return tool.tool_name if tool is not None else name

    def _action_args(self, action: Action) -> dict[str, Any] | None:
        """The action's arguments; a bare value is accepted for a tool with a single argument."""
        if action.args is not None:
            return action.args
        tool = self._find_tool(action.tool)
        if tool is None:
            return None
        params = [name for name in tool.args if name not in tool.injected_params]
        if len(params) != 1:
            return None
        return {params[0]: action.raw_input.strip().strip("'\"")}

    async def _extract_calls(self, text: str) -> tuple[list[ToolCall], Usage]:
        """Ask ``function_calling_llm`` to turn a tool request we could not read into a call."""
        assert self.extraction_model is not None
        messages = [{"role": "user", "content": prompts.render(prompts.TOOL_CALL_EXTRACTION, {"text": text})}]
        tools = [t.to_openai_tool() for t in self.tools]
        response = await self.extraction_model.acomplete(messages, tools)
        self.usage = self.usage + response.usage
        return list(response.tool_calls), response.usage

    # -- reporting ------------------------------------------------------------------

    async def _step(
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
                run_id=self.run_id,
                agent=self.agent.role,
                task=self.task_name,
                turn=turn,
                kind=kind,
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


def _direct(results: Sequence[ToolResult]) -> _Final | None:
    """The first ``result_as_answer`` result in the calls' order ends the task with its content."""
    for result in results:
        if result.result_as_answer:
            return _Final(result.content, direct=True)
    return None


def describe_step(step: AgentStep, width: int = 160) -> str:
    """One line per step for ``verbose=True``."""
    head = f"[{step.agent}] {step.task} #{step.turn} {step.kind}"
    if step.results:
        body = "; ".join(f"{r.name} -> {r.status}{' (cached)' if r.cached else ''}: {r.content}" for r in step.results)
    else:
        body = step.text
    line = f"{head}: {' '.join(body.split())}"
    return line if len(line) <= width else line[: width - 1] + "…"
