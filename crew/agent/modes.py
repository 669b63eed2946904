"""The two ways an agent's turn can go: native tool calling, and the text protocol.

The loop (``crew.agent.loop``) is the same for both: ask the model, act on the reply,
report the turn, stop on an answer. What differs is how tools are offered and how a
reply is read, and that is all a mode decides:

- :class:`NativeMode` sends the tools as the provider's ``tools`` parameter; the reply's
  tool calls all run together through the executor, and each result goes back as a tool
  message answering its call id (an unreadable call is answered with the error).
- :class:`TextMode` describes the tools in the system prompt; the reply is parsed
  (``crew.agent.text_protocol``), one action runs per turn and its observation goes back as a
  user message. A reply it cannot read gets one format correction; with a
  ``function_calling_llm`` that model is asked to turn it into a proper call first.

A mode sees the run through :class:`LoopRun`, the few things it needs from it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from crew.agent import prompts
from crew.agent.text_protocol import Action, FinalAnswer, Unparseable, clean_tool_name, parse_reply
from crew.agent.transcript import AssistantMessage, Message, ToolMessage, Transcript, UserMessage
from crew.common.usage import Usage
from crew.tasks.output import ToolCallRecord
from crew.tools.messages import ToolCall, ToolResult
from crew.tools.schema import sanitize_tool_name

if TYPE_CHECKING:
    from crew.agent.loop import StepKind
    from crew.models.base import ChatModel, LLMResponse
    from crew.tools.base import BaseTool

__all__ = ["Final", "LoopRun", "Mode", "NativeMode", "TextMode", "mode_for"]


@dataclass(slots=True)
class Final:
    """The answer a turn ended the task with."""

    text: str
    direct: bool = False  # from a result_as_answer tool: no model call may follow


class LoopRun(Protocol):
    """What a mode needs from the agent run it serves."""

    tools: list[BaseTool]
    transcript: Transcript
    records: list[ToolCallRecord]
    extraction_model: ChatModel | None

    def ask(
        self,
        turn: int,
        tools: list[dict[str, Any]] | None,
        *,
        offered: bool,
        model: ChatModel | None = None,
        messages: Sequence[Message] | None = None,
    ) -> Awaitable[LLMResponse]: ...
    async def execute(self, calls: Sequence[ToolCall]) -> list[ToolResult]: ...
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
    ) -> None: ...
    async def empty_reply(self, turn: int, response: LLMResponse, text: str) -> None: ...


class Mode(Protocol):
    """How one kind of model takes its turns."""

    text_mode: bool
    empty_reply_prompt: str
    force_final_prompt: str

    async def turn(self, run: LoopRun, turn: int) -> Final | None: ...
    def answer_text(self, text: str) -> str: ...


def mode_for(supports_function_calling: bool, tools: Sequence[BaseTool]) -> Mode:
    return NativeMode(tools) if supports_function_calling else TextMode()


def direct_answer(results: Sequence[ToolResult]) -> Final | None:
    """The first ``result_as_answer`` result in the calls' order ends the task with its content."""
    for result in results:
        if result.result_as_answer:
            return Final(result.content, direct=True)
    return None


class NativeMode:
    text_mode = False
    empty_reply_prompt = prompts.EMPTY_REPLY
    force_final_prompt = prompts.FORCE_FINAL

    def __init__(self, tools: Sequence[BaseTool]) -> None:
        self.openai_tools = [t.to_openai_tool() for t in tools] if tools else None

    def answer_text(self, text: str) -> str:
        return text.strip()

    async def turn(self, run: LoopRun, turn: int) -> Final | None:
        response = await run.ask(turn, self.openai_tools, offered=True)
        invalid = response.invalid_tool_calls
        if not response.tool_calls and not invalid:
            text = response.content or ""
            if not text.strip():
                await run.empty_reply(turn, response, text)
                return None
            run.transcript.append(AssistantMessage(text))
            await run.step(turn, "final_answer", response, text=text)
            return Final(text)
        run.transcript.append(AssistantMessage.of(response))
        results = await run.execute(response.tool_calls) if response.tool_calls else []
        for result in results:
            run.transcript.append(ToolMessage(result.tool_call_id, result.content))
        for bad in invalid:  # unreadable arguments: their ids must be answered too
            content = prompts.render(prompts.INVALID_TOOL_CALL, {"tool": bad.name, "error": bad.error})
            run.transcript.append(ToolMessage(bad.id, content))
            run.records.append(ToolCallRecord(name=bad.name, status="error"))
        await run.step(
            turn, "tool_calls", response, text=response.content or "", calls=response.tool_calls, results=results
        )
        return direct_answer(results)


class TextMode:
    text_mode = True
    empty_reply_prompt = prompts.EMPTY_REPLY_TEXT
    force_final_prompt = prompts.FORCE_FINAL_TEXT

    def __init__(self) -> None:
        self.corrected = False  # the previous turn was answered with a format correction

    def answer_text(self, text: str) -> str:
        parsed = parse_reply(text)
        return (parsed.answer if isinstance(parsed, FinalAnswer) else text).strip()

    async def turn(self, run: LoopRun, turn: int) -> Final | None:
        response = await run.ask(turn, None, offered=True)
        text = response.content or ""
        parsed = parse_reply(text)
        answer = parsed.answer if isinstance(parsed, FinalAnswer) else text.strip()
        if not answer and not isinstance(parsed, Action):  # nothing said ("", or a bare "Final Answer:")
            await run.empty_reply(turn, response, text)
            return None
        if not run.tools:  # nothing to call: whatever it says is the answer
            return await self._final(run, turn, response, text, answer)
        if isinstance(parsed, FinalAnswer):
            return await self._final(run, turn, response, text, parsed.answer)
        calls: list[ToolCall] = []
        said = text
        extracted: Usage | None = None  # a function_calling_llm's call belongs to this turn's usage
        if isinstance(parsed, Action):
            args = _action_args(run.tools, parsed)
            if args is not None:
                calls, said = [ToolCall(name=_canonical_name(run.tools, parsed.tool), args=args)], parsed.text
            else:
                parsed = Unparseable(f"the Action Input of '{parsed.tool}' is not a JSON object", has_marker=True)
        if isinstance(parsed, Unparseable) and parsed.has_marker and run.extraction_model is not None:
            calls, extracted = await self._extract_calls(run, turn, text)
        if not calls:
            assert isinstance(parsed, Unparseable)
            if self.corrected and not parsed.has_marker:
                return await self._final(run, turn, response, text, answer)  # weak models do this
            self.corrected = True
            run.transcript.append(AssistantMessage(text))
            run.transcript.append(UserMessage(prompts.render(prompts.CORRECTION, {"reason": parsed.reason})))
            await run.step(turn, "correction", response, text=text, extra=extracted)
            return None
        self.corrected = False
        results = await run.execute(calls)
        observation = "\n".join(prompts.render(prompts.OBSERVATION, {"content": result.content}) for result in results)
        run.transcript.append(AssistantMessage(said))
        run.transcript.append(UserMessage(observation))
        await run.step(turn, "tool_calls", response, text=said, calls=calls, results=results, extra=extracted)
        return direct_answer(results)

    async def _final(self, run: LoopRun, turn: int, response: LLMResponse, text: str, answer: str) -> Final:
        run.transcript.append(AssistantMessage(text))
        await run.step(turn, "final_answer", response, text=answer)
        return Final(answer)

    async def _extract_calls(self, run: LoopRun, turn: int, text: str) -> tuple[list[ToolCall], Usage]:
        """Ask ``function_calling_llm`` to turn a tool request we could not read into a call."""
        assert run.extraction_model is not None
        tools = [t.to_openai_tool() for t in run.tools]
        ask = prompts.render(prompts.TOOL_CALL_EXTRACTION, {"text": text})
        response = await run.ask(turn, tools, offered=True, model=run.extraction_model, messages=[UserMessage(ask)])
        return list(response.tool_calls), response.usage


def _find_tool(tools: Sequence[BaseTool], name: str) -> BaseTool | None:
    wanted = {name.lower(), sanitize_tool_name(name).lower(), sanitize_tool_name(clean_tool_name(name)).lower()}
    for tool in tools:
        if tool.tool_name.lower() in wanted or tool.name.lower() in wanted:
            return tool
    return None


def _canonical_name(tools: Sequence[BaseTool], name: str) -> str:
    """The tool's canonical name for a spelling the model used (unknown names pass through)."""
    tool = _find_tool(tools, name)
    return tool.tool_name if tool is not None else name


def _action_args(tools: Sequence[BaseTool], action: Action) -> dict[str, Any] | None:
    """The action's arguments; a bare value is accepted for a tool with a single argument."""
    if action.args is not None:
        return action.args
    tool = _find_tool(tools, action.tool)
    if tool is None:
        return None
    params = [name for name in tool.args if name not in tool.injected_params]
    if len(params) != 1:
        return None
    return {params[0]: action.raw_input.strip().strip("'\"")}
