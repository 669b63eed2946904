"""OpenAI's chat-completions wire format: the request body, a reply, and a stream of chunks joined.

Pure data in and out (no I/O), so the native door only moves bytes: what goes on the wire
for a call, and how what comes back becomes an :class:`~crew.models.base.LLMResponse`.
A reply whose shape is not the protocol's is a :class:`MalformedResponse` (retried like a 5xx).
"""

from __future__ import annotations

import json
from typing import Any, cast

from crew.models.base import LLMResponse, emit_call, split_tool_calls, with_tools
from crew.models.failures import shorten
from crew.models.openai_errors import InternalServerError, server_message
from crew.models.pricing import cost
from crew.models.retry import MalformedResponse
from crew.models.settings import CallSettings, Messages

__all__ = ["TRANSPORT", "ChunkStream", "json_reply", "request_body", "request_headers", "response"]

TRANSPORT = "native"

_LITELLM_ONLY = frozenset(
    {"drop_params", "num_retries", "max_retries", "custom_llm_provider", "api_version", "litellm_params", "metadata"}
)
"""Keyword arguments litellm understands and an OpenAI server would reject."""

_NOT_BODY = frozenset({"extra_headers", "extra_body"}) | _LITELLM_ONLY


def request_headers(settings: CallSettings, api_key: str | None, *, stream: bool) -> dict[str, str]:
    """The call's headers: the user's ``extra_headers`` over the defaults, and the key."""
    headers = {"Content-Type": "application/json", "Accept": "text/event-stream" if stream else "application/json"}
    headers.update(settings.extra.get("extra_headers") or {})
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


def request_body(
    settings: CallSettings, wire_model: str, messages: Messages, tools: Messages | None, *, stream: bool
) -> bytes:
    """The JSON body: model and messages, the user's provider arguments, tools, and ``extra_body`` last."""
    body: dict[str, Any] = {"model": wire_model, "messages": messages}
    body.update((k, v) for k, v in settings.extra.items() if k not in _NOT_BODY)
    with_tools(body, tools)
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.max_tokens is not None:
        body["max_tokens"] = settings.max_tokens
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    body.update(settings.extra.get("extra_body") or {})
    return json.dumps(body, default=str).encode()


def response(
    model: str, reply: dict[str, Any], latency: float, attempts: int, stream: bool, messages: Any = None
) -> LLMResponse:
    """A reply (a JSON object, or a stream joined into one) as an LLMResponse, announced as ``llm.call``."""
    choices: object = reply.get("choices")
    first: object = cast("list[object]", choices)[0] if isinstance(choices, list) and choices else None
    if not isinstance(first, dict):
        raise MalformedResponse("the model's reply holds no choices")
    choice = cast("dict[str, Any]", first)
    found: object = choice.get("message")
    if not isinstance(found, dict):
        raise MalformedResponse("the model's reply holds a choice without a message")
    message = cast("dict[str, Any]", found)
    tool_calls, invalid = split_tool_calls(message.get("tool_calls") or [])
    prompt, completion, total, cached = _counts(reply.get("usage") or {})
    price = cost(model, prompt, completion, cached)
    result = LLMResponse.counted(
        message.get("content"),
        tool_calls,
        invalid,
        (prompt, completion, total),
        price,
        model=model,
        latency=latency,
        finish_reason=choice.get("finish_reason"),
    )
    emit_call(result, attempts=attempts, stream=stream, transport=TRANSPORT, messages=messages)
    return result


def _counts(usage: object) -> tuple[int, int, int, int]:
    """Prompt, completion, total and cached tokens of a ``usage`` object; another shape is malformed."""
    if not isinstance(usage, dict):
        raise MalformedResponse("the model's reply holds usage that is not an object")
    fields = cast("dict[str, Any]", usage)
    details = _object(fields.get("prompt_tokens_details"), "the reply's prompt token details")
    try:
        prompt = int(fields.get("prompt_tokens") or 0)
        completion = int(fields.get("completion_tokens") or 0)
        total = int(fields.get("total_tokens") or prompt + completion)
        cached = int(details.get("cached_tokens") or 0)
    except (TypeError, ValueError):
        raise MalformedResponse("the model's reply holds token counts that are not numbers") from None
    return prompt, completion, total, cached


def json_reply(body: bytes) -> dict[str, Any]:
    try:
        reply: object = json.loads(body)
    except ValueError:
        raise MalformedResponse(f"the reply is not JSON: {shorten(body.decode('utf-8', 'replace'), 120)}") from None
    if not isinstance(reply, dict):
        raise MalformedResponse("the reply is not a JSON object")
    return cast("dict[str, Any]", reply)


class ChunkStream:
    """Server-sent chat-completion chunks joined into one reply (content, tool calls by index, usage)."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.carried = False
        self.done = False

    def feed(self, line: str) -> str | None:
        """One line of the body (``Reading`` held it to the size limit); returns the text it adds, if any."""
        chunk = self._chunk(line)
        if chunk is None:
            return None
        if chunk.get("usage"):
            self.usage, self.carried = chunk["usage"], True
        choices = _objects(chunk.get("choices"), "a stream chunk's choices")
        added = [text for choice in choices if (text := self._choice(choice))]
        if not added:
            return None
        joined = "".join(added)
        self.text.append(joined)
        return joined

    def _chunk(self, line: str) -> dict[str, Any] | None:
        """The JSON object a ``data:`` line carries; None for separators, comments, ``event:`` and ``[DONE]``."""
        if not line.startswith("data:"):
            return None
        data = line[5:].strip()
        if data == "[DONE]":
            self.done = True
            return None
        if not data:
            return None
        try:
            chunk = json.loads(data)
        except ValueError:
            raise MalformedResponse(f"a stream chunk is not JSON: {shorten(data, 120)}") from None
        if not isinstance(chunk, dict):
            return None
        if "error" in chunk:
            raise InternalServerError(server_message(data.encode()), 500)
        return chunk  # pyright: ignore[reportUnknownVariableType]

    def _choice(self, choice: dict[str, Any]) -> str | None:
        """One choice's delta taken in: its finish reason and tool-call pieces kept, its text returned."""
        delta = _object(choice.get("delta"), "a stream chunk's delta")
        if choice.get("finish_reason"):
            self.finish_reason = choice["finish_reason"]
        for part in _objects(delta.get("tool_calls"), "a stream chunk's tool calls"):
            self._tool_call(part)
        text = delta.get("content")
        if text is not None:
            self.carried = True
        if text is not None and not isinstance(text, str):
            raise MalformedResponse("a stream chunk holds content that is not text")
        return text or None

    def _tool_call(self, part: dict[str, Any]) -> None:
        self.carried = True
        call = self.calls.setdefault(int(part.get("index", len(self.calls))), {"arguments": []})
        if part.get("id"):
            call["id"] = part["id"]
        function = _object(part.get("function"), "a stream chunk's tool call function")
        if function.get("name"):
            call["name"] = function["name"]
        if function.get("arguments"):
            call["arguments"].append(function["arguments"])

    def reply(self) -> dict[str, Any]:
        """The joined reply, shaped like a whole one; a stream that carried nothing, or broke off, is malformed."""
        if not self.carried:
            raise MalformedResponse("the model's stream ended without a message (no content, tool call or usage)")
        if not (self.done or self.finish_reason):  # a close-delimited body cut mid-way looks like an end
            raise MalformedResponse("the model's stream broke off before the reply was complete")
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.text) if self.text else None}
        if self.calls:
            message["tool_calls"] = [
                {
                    "id": call.get("id"),
                    "type": "function",
                    "function": {"name": call.get("name", ""), "arguments": "".join(call["arguments"])},
                }
                for _, call in sorted(self.calls.items())
            ]
        elif message["content"] is None:
            message["content"] = ""  # an empty answer is still an answer
        return {"choices": [{"message": message, "finish_reason": self.finish_reason}], "usage": self.usage or {}}


def _object(value: object, what: str) -> dict[str, Any]:
    """``value`` as a JSON object (absent: an empty one); any other shape breaks the protocol."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise MalformedResponse(f"{what} is not an object")
    return cast("dict[str, Any]", value)


def _objects(value: object, what: str) -> list[dict[str, Any]]:
    """``value`` as a list of JSON objects (absent: none); any other shape breaks the protocol."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise MalformedResponse(f"{what} are not a list")
    return [_object(item, what) for item in cast("list[object]", value)]
