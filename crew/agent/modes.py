"""The two ways a model's reply is read: native tool calling, and the text protocol.

The loop (``crew.agent.loop``) asks the model, acts and records; a mode only offers the
tools and reads a reply into a :class:`Turn`, the one thing the loop acts on:

- :class:`Answer`: the task's final answer;
- :class:`Act`: tool calls to run, and how their results go back to the model;
- :class:`Correct`: a reply that could not be used, and the message that says so;
- :class:`Empty`: no text and no tool call (never an answer).

:class:`NativeMode` sends the tools as the provider's ``tools`` parameter; the reply's tool
calls all run together and each result answers its call id in a tool message (an unreadable
call is answered with the error). :class:`TextMode` describes the tools in the system
prompt and parses the reply (``crew.agent.text_protocol``): one action per turn, its
observation sent back as a user message, a reply it cannot read corrected once. Tool calls a
reply carries in the provider's format run whatever the mode: a model taken for a text-protocol
one (an unknown name) may well call tools natively, and ignoring its calls would make the reply
the answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from crew.agent import prompts
from crew.agent.text_protocol import Action, FinalAnswer, Unparseable, clean_tool_name, parse_reply
from crew.agent.transcript import AssistantMessage
from crew.tools.messages import ToolCall
from crew.tools.schema import sanitize_tool_name

if TYPE_CHECKING:
    from crew.models.base import ChatModel, InvalidToolCall, LLMResponse
    from crew.tools.base import BaseTool

__all__ = [
    "Act",
    "Answer",
    "Correct",
    "Empty",
    "Mode",
    "NativeMode",
    "TextMode",
    "Turn",
    "mode_for",
    "protocol_of",
    "protocols_line",
]


@dataclass(slots=True)
class Answer:
    """The final answer (``text``), and the reply to keep in the history (``said``)."""

    text: str
    said: str


@dataclass(slots=True)
class Act:
    """Tool calls to run. ``said`` goes into the history before the results; ``native``: each
    result answers its call id in a tool message (else one observation, as a user message)."""

    calls: list[ToolCall]
    said: AssistantMessage
    thought: str
    native: bool = True
    invalid: list[InvalidToolCall] = field(default_factory=list)


@dataclass(slots=True)
class Correct:
    """A reply that could not be used: ``said`` kept, ``message`` sent back; ``extractable``: a
    ``function_calling_llm`` may turn it into a tool call (it named an action we could not read)."""

    said: str
    message: str
    extractable: bool = False


@dataclass(slots=True)
class Empty:
    """Neither an answer nor a tool call (``text``: a bare ``Final Answer:``, or nothing)."""

    text: str


Turn = Answer | Act | Correct | Empty

ProtocolName = Literal["function calling", "text"]


class Mode(Protocol):
    """How one kind of model is offered tools and how its replies are read."""

    text_mode: bool
    protocol: ProtocolName
    tools: list[dict[str, Any]] | None
    """The provider's ``tools`` parameter of each turn (None: the tools are in the prompt)."""
    empty_reply_prompt: str
    force_final_prompt: str

    def read(self, response: LLMResponse, *, corrected: bool) -> Turn:
        """The turn a reply makes; ``corrected``: the previous turn was answered with a correction."""
        ...

    def answer_text(self, text: str) -> str: ...


def mode_for(supports_function_calling: bool, tools: Sequence[BaseTool]) -> Mode:
    return NativeMode(tools) if supports_function_calling else TextMode(tools)


def protocol_of(model: ChatModel) -> ProtocolName:
    """The protocol an agent speaks to ``model``, as ``crew validate`` and a kickoff show it: an
    unknown model name means the text protocol, which a user should see before wondering why."""
    return "function calling" if _calls_functions(model) else "text"


def _calls_functions(model: ChatModel) -> bool:
    """``supports_function_calling``, but for an LLM whose answer would import litellm (3-5 s:
    ``crew validate`` answers in a fraction of that) the same model table, read as data."""
    from crew.models.litellm_loading import litellm_loaded
    from crew.models.llm import LLM
    from crew.models.wrapped import innermost

    inner = innermost(model)
    if isinstance(inner, LLM) and inner.function_calling is None and not litellm_loaded():
        from crew.models.pricing import supports_function_calling

        _, _, bare = inner.model.partition("/")  # litellm looks a model up without its provider too
        return supports_function_calling(inner.model) or bool(bare and supports_function_calling(bare))
    return model.supports_function_calling


def protocols_line(agents: Iterable[Any], default: Any = None) -> str:
    """Which protocol each agent speaks (``function calling (Researcher); text (Editor)``);
    agents without a model are left out (``crew validate`` needs none)."""
    from crew.errors import ConfigError

    roles: dict[str, list[str]] = {}
    for agent in agents:
        try:
            model = agent.chat_model(default)
        except ConfigError:
            continue
        roles.setdefault(protocol_of(model), []).append(agent.role)
    return "; ".join(f"{protocol} ({', '.join(names)})" for protocol, names in roles.items())


def _native_calls(response: LLMResponse) -> Act | None:
    """The reply's tool calls in the provider's format, if it has any (valid or not)."""
    if not response.tool_calls and not response.invalid_tool_calls:
        return None
    return Act(
        list(response.tool_calls),
        AssistantMessage.of(response),
        response.content or "",
        invalid=list(response.invalid_tool_calls),
    )


class NativeMode:
    text_mode = False
    protocol: ProtocolName = "function calling"
    empty_reply_prompt = prompts.EMPTY_REPLY
    force_final_prompt = prompts.FORCE_FINAL

    def __init__(self, tools: Sequence[BaseTool]) -> None:
        self.tools = [t.to_openai_tool() for t in tools] if tools else None

    def answer_text(self, text: str) -> str:
        return text.strip()

    def read(self, response: LLMResponse, *, corrected: bool) -> Turn:
        act = _native_calls(response)
        if act is not None:
            return act
        text = response.content or ""
        return Answer(text, text) if text.strip() else Empty(text)


class TextMode:
    text_mode = True
    protocol: ProtocolName = "text"
    tools: list[dict[str, Any]] | None = None
    empty_reply_prompt = prompts.EMPTY_REPLY_TEXT
    force_final_prompt = prompts.FORCE_FINAL_TEXT

    def __init__(self, tools: Sequence[BaseTool] = ()) -> None:
        self.known = list(tools)

    def answer_text(self, text: str) -> str:
        parsed = parse_reply(text)
        return (parsed.answer if isinstance(parsed, FinalAnswer) else text).strip()

    def read(self, response: LLMResponse, *, corrected: bool) -> Turn:
        act = _native_calls(response)  # a server that calls tools natively anyway: its calls run
        if act is not None:
            return act
        text = response.content or ""
        parsed = parse_reply(text)
        answer = parsed.answer if isinstance(parsed, FinalAnswer) else text.strip()
        if not answer and not isinstance(parsed, Action):  # nothing said ("", or a bare "Final Answer:")
            return Empty(text)
        if not self.known or isinstance(parsed, FinalAnswer):  # no tools: whatever it says is the answer
            return Answer(answer, text)
        if isinstance(parsed, Action):
            args = _action_args(self.known, parsed)
            if args is not None:
                call = ToolCall(name=_canonical_name(self.known, parsed.tool), args=args)
                return Act([call], AssistantMessage(parsed.text), parsed.text, native=False)
            parsed = Unparseable(f"the Action Input of '{parsed.tool}' is not a JSON object", has_marker=True)
        if corrected and not parsed.has_marker:
            return Answer(answer, text)  # weak models answer a correction with plain text
        message = prompts.render(prompts.CORRECTION, {"reason": parsed.reason})
        return Correct(text, message, extractable=parsed.has_marker)


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
