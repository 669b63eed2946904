"""What flows between an agent and any model: the ChatModel contract and its replies.

The contract is async-first and small: ``model``, ``supports_function_calling`` and
``acomplete(messages, tools, *, output_schema)`` are required; ``astream`` (same
arguments, yielding :class:`ModelDelta` pieces of text as they arrive and then the whole
:class:`LLMResponse`, last and exactly once) is optional, and
:func:`crew.models.calling.stream_reply` falls back to ``acomplete`` for a model without
it. Sync callers use :func:`crew.models.calling.complete_sync`; no model writes a sync twin.

Nothing here knows a provider: the litellm model, the doubles in :mod:`crew.testing`
and any other transport implement the same contract, and a tool call's arguments are
parsed by the same rules whatever model produced them.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol, cast, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from crew.common.events import bus
from crew.common.usage import Usage
from crew.models.retry import MalformedResponse
from crew.tools.messages import ToolCall, new_call_id


class InvalidToolCall(BaseModel):
    """A tool call whose arguments were not a JSON object (LangChain's ``invalid_tool_calls``).

    It is kept apart from ``tool_calls`` so nothing runs a tool with guessed
    arguments; it stays in ``raw_message``, so the agent must answer its ``id``
    with an error tool message (``error`` says what was wrong) and the model can retry.
    """

    model_config = ConfigDict(defer_build=True)  # built on the first reply: loading a crew needs none

    id: str
    name: str
    arguments: str
    error: str


class ModelDelta(BaseModel):
    """A piece of a reply's text as the provider streams it.

    ``ChatModel.astream`` yields these as text arrives, then the whole ``LLMResponse``
    as its last item, exactly once, so a consumer never reassembles a reply itself.
    """

    model_config = ConfigDict(defer_build=True)

    text: str


class LLMResponse(BaseModel):
    """One assistant turn: text and/or tool calls, with usage and timing.

    ``raw_message`` is the assistant message in OpenAI format, ready to append to
    the history; it is derived from the other fields when not given, so it always
    carries the ids the tool messages must answer.
    """

    model_config = ConfigDict(defer_build=True)

    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list[ToolCall])
    invalid_tool_calls: list[InvalidToolCall] = Field(default_factory=list[InvalidToolCall])
    usage: Usage = Field(default_factory=Usage)
    model: str = ""
    latency: float = 0.0
    finish_reason: str | None = None
    raw_message: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def counted(
        cls,
        content: str | None,
        tool_calls: list[ToolCall],
        invalid_tool_calls: list[InvalidToolCall],
        tokens: tuple[int, int, int],
        cost: float,
        *,
        model: str,
        latency: float,
        finish_reason: str | None,
    ) -> LLMResponse:
        """A provider's reply of one request, its usage from the token counts it reported
        (``tokens``: prompt, completion, total): what every door makes of a reply, built one way."""
        prompt, completion, total = tokens
        usage = Usage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=total, requests=1, cost=cost)
        return cls(
            content=content,
            tool_calls=tool_calls,
            invalid_tool_calls=invalid_tool_calls,
            usage=usage,
            model=model,
            latency=latency,
            finish_reason=finish_reason,
        )

    @model_validator(mode="after")
    def _fill_raw_message(self) -> LLMResponse:
        if not self.raw_message:
            self.raw_message = assistant_message(self.content, self.tool_calls, self.invalid_tool_calls)
        return self


def assistant_message(
    content: str | None, tool_calls: Sequence[ToolCall] = (), invalid_tool_calls: Sequence[InvalidToolCall] = ()
) -> dict[str, Any]:
    """The OpenAI-format assistant message for a turn (tool calls in the order given)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    wire = [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.args, default=str)}}
        for c in tool_calls
    ]
    wire += [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
        for c in invalid_tool_calls
    ]
    if wire:
        message["tool_calls"] = wire
    return message


def parse_arguments(text: str | dict[str, Any] | None) -> dict[str, Any]:
    """A tool call's arguments as a dict; raises ValueError unless they are a JSON object.

    Empty arguments mean "no arguments"; a JSON string holding JSON (double encoding,
    which some models produce) is decoded once more.
    """
    if isinstance(text, dict):
        return text
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
        if isinstance(value, str):
            value = json.loads(value)
    except ValueError as exc:
        raise ValueError(f"arguments are not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise ValueError(f"arguments must be a JSON object, got {type(value).__name__}")
    return cast("dict[str, Any]", value)


def with_tools(request: dict[str, Any], tools: Sequence[dict[str, Any]] | None) -> None:
    """Put ``tools`` in a request, or take out the tool options a user set (``tool_choice``,
    ``parallel_tool_calls``): servers answer 400 to tool options without tools."""
    if tools:
        request["tools"] = tools
    else:
        request.pop("tool_choice", None)
        request.pop("parallel_tool_calls", None)


def split_tool_calls(raw_calls: object) -> tuple[list[ToolCall], list[InvalidToolCall]]:
    """Provider tool calls (objects or dicts) -> valid ToolCalls and invalid ones, ids filled.

    ``tool_calls`` that are not a list, or a call or its ``function`` that is not an object,
    break the protocol: a :class:`MalformedResponse`, retried like a 5xx.
    """
    if not isinstance(raw_calls, (list, tuple)):
        raise MalformedResponse("the model's reply holds tool_calls that are not a list")
    valid: list[ToolCall] = []
    invalid: list[InvalidToolCall] = []
    for raw in cast("Sequence[object]", raw_calls):
        call, function = _call_parts(raw)
        call_id = str(call.get("id") or new_call_id())
        name = function.get("name") or ""
        arguments = function.get("arguments")
        try:
            valid.append(ToolCall(name=name, args=parse_arguments(arguments), id=call_id))
        except ValueError as exc:
            invalid.append(InvalidToolCall(id=call_id, name=str(name), arguments=str(arguments), error=str(exc)))
    return valid, invalid


def _call_parts(raw: object) -> tuple[dict[str, Any], dict[str, Any]]:
    """A tool call and its ``function`` as dicts (a provider SDK's objects dumped first)."""
    if not isinstance(raw, dict):
        dump = getattr(raw, "model_dump", None)
        raw = dump() if callable(dump) else None
    function: object = cast("dict[str, Any]", raw).get("function") or {} if isinstance(raw, dict) else None
    if not isinstance(function, dict):
        raise MalformedResponse("the model's reply holds a tool call that is not an object with a function")
    return cast("dict[str, Any]", raw), cast("dict[str, Any]", function)


def emit_call(
    response: LLMResponse,
    *,
    attempts: int = 1,
    stream: bool = False,
    transport: str = "local",
    messages: Sequence[dict[str, Any]] | None = None,
) -> None:
    """Announce a finished model call (every ChatModel reports through here).

    ``transport`` names the door the call took: ``native`` (OpenAI protocol over httpx),
    ``litellm``, or ``local`` for models that answer in-process (the doubles). ``messages``
    (what was sent) and ``reply`` go along for subscribers that keep transcripts (the run
    store); when nobody listens nothing is built, so no call pays for an event (or for
    scrubbing a transcript) nobody reads.
    """
    listened = bus.enabled("llm.call")
    if not listened:  # nobody subscribed and the log would drop it: nothing to build
        return
    bus.emit(
        "llm.call",
        model=response.model,
        transport=transport,
        prompt_tokens=response.usage.prompt_tokens,
        completion_tokens=response.usage.completion_tokens,
        total_tokens=response.usage.total_tokens,
        cost=response.usage.cost,
        latency=round(response.latency, 6),
        attempts=attempts,
        stream=stream,
        tool_calls=len(response.tool_calls) + len(response.invalid_tool_calls),
        finish_reason=response.finish_reason,
        messages=list(messages) if messages is not None else None,
        reply=response.raw_message if response.tool_calls or response.invalid_tool_calls else response.content,
    )


class _StaticProtocolMeta(type(Protocol)):  # type: ignore[misc]
    """``isinstance`` that looks the members up without running them, as Python 3.12 does.

    Python 3.11's protocol check calls ``hasattr``, which runs properties: asking whether
    an ``LLM`` is a ChatModel evaluated ``supports_function_calling``, which imports litellm
    (seconds) right where an ``Agent`` is built, before the crew could prewarm it.
    """

    def __instancecheck__(cls, instance: object) -> bool:
        if cls is not ChatModel:  # a concrete class deriving from the protocol
            return super().__instancecheck__(instance)
        kind = type(instance)
        unresolved = _ON_INSTANCE.get(kind)
        if unresolved is None:  # what the class itself lacks, looked up once per class
            unresolved = _ON_INSTANCE[kind] = tuple(n for n in _CHAT_MODEL_MEMBERS if not _has_member(kind, n))
        if not unresolved:
            return True
        attributes = getattr(instance, "__dict__", None)
        if attributes is not None and all(name in attributes for name in unresolved):
            return True
        return all(_has_member(instance, name) for name in unresolved)


_ON_INSTANCE: dict[type, tuple[str, ...]] = {}
"""Per class, the members its instances must carry themselves (``self.model = ...``): the rest
the class has, so a check costs a dictionary lookup (it runs whenever an agent resolves its model)."""


def _has_member(instance: Any, name: str) -> bool:
    try:
        inspect.getattr_static(instance, name)
    except AttributeError:
        return False
    return True


@runtime_checkable
class ChatModel(Protocol, metaclass=_StaticProtocolMeta):
    """What an agent needs from a model. ``LLM``, ``TestModel`` and ``FunctionModel`` implement it.

    Messages and tools are OpenAI-format dicts (the lingua franca every transport
    translates from). A model may also define ``astream`` (see the module docstring).
    """

    @property
    def model(self) -> str: ...

    @property
    def supports_function_calling(self) -> bool: ...

    async def acomplete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        output_schema: dict[str, Any] | None = None,
    ) -> LLMResponse: ...


class StreamingChatModel(ChatModel, Protocol):
    """A ChatModel that also streams: ``astream`` yields ModelDelta pieces, then the LLMResponse, once."""

    def astream(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        output_schema: dict[str, Any] | None = None,
    ) -> AsyncIterator[ModelDelta | LLMResponse]: ...


_CHAT_MODEL_MEMBERS = ("model", "supports_function_calling", "acomplete")
