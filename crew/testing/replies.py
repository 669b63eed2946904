"""What the local OpenAI server answers: scripted replies, recorded requests, the wire format.

A :class:`Reply` describes one answer the way a test thinks of it (a text, some
tool calls, a fault); the functions at the bottom turn it into exactly the JSON
or server-sent events an OpenAI endpoint sends, so litellm parses it as it would
a provider's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from crew.tools.messages import ToolCall, new_call_id


class Reply(BaseModel):
    """One scripted answer of the server: a message, tool calls, or a fault.

    ``status`` other than 200 turns the reply into an OpenAI-style error body;
    ``body`` (raw text) replaces the whole response, which is how malformed
    JSON is served; ``delay`` seconds pass before anything is sent (``chunk_delay`` between
    the chunks of a stream); ``cut_after`` chunks into a stream, the connection drops.
    Build them with the class methods, which read like the test they serve.
    """

    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    status: int = 200
    headers: dict[str, str] = Field(default_factory=dict)
    body: str | None = None
    delay: float = 0.0
    chunk_delay: float = 0.0
    """Seconds between the chunks of a streamed reply (a provider that types slowly)."""
    finish_reason: str | None = None
    cut_after: int | None = None
    """Streamed replies only: send this many chunks, then drop the connection (a stream broken mid-way)."""

    @classmethod
    def text(cls, content: str, **kw: Any) -> Reply:
        return cls(content=content, **kw)

    @classmethod
    def tools(cls, *calls: dict[str, Any] | ToolCall, content: str | None = None, **kw: Any) -> Reply:
        """Tool calls as ``{"name": ..., "args": {...}}`` (an ``id`` is made when missing)."""
        parsed = [c if isinstance(c, ToolCall) else ToolCall(**c) for c in calls]
        return cls(content=content, tool_calls=parsed, **kw)

    @classmethod
    def error(
        cls, status: int = 500, message: str = "internal error", *, retry_after: float | None = None, **kw: Any
    ) -> Reply:
        headers = dict(kw.pop("headers", {}))
        if retry_after is not None:
            headers["Retry-After"] = f"{retry_after:g}"
        return cls(status=status, content=message, headers=headers, **kw)

    @classmethod
    def raw(cls, body: str | dict[str, Any], **kw: Any) -> Reply:
        """Send ``body`` exactly (a dict is JSON-encoded): for replies the helpers cannot express."""
        return cls(body=body if isinstance(body, str) else json.dumps(body), **kw)

    @classmethod
    def malformed(cls, body: str = '{"id": "chatcmpl-broken", "choices": [', **kw: Any) -> Reply:
        """A 200 whose body is not JSON (a truncated response)."""
        return cls.raw(body, **kw)


ReplyLike = Reply | str | list[dict[str, Any]]
"""What scripts and handlers may give: a Reply, reply text, or a list of tool-call dicts."""

Handler = Callable[["ChatRequest"], ReplyLike]


class ChatRequest(BaseModel):
    """A request the server received, kept for assertions.

    The ``Authorization`` header is recorded as ``"***"``: even a test server
    stores no credential.
    """

    model_config = ConfigDict(frozen=True)

    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    received_at: float

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", [])

    @property
    def tools(self) -> list[dict[str, Any]]:
        return self.body.get("tools") or []

    @property
    def model(self) -> str | None:
        return self.body.get("model")

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))


def as_reply(value: ReplyLike) -> Reply:
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply.text(value)
    if isinstance(value, list):
        return Reply.tools(*value)
    raise TypeError(f"a scripted reply must be a Reply, a str or a list of tool calls, not {type(value).__name__}")


# -- OpenAI wire format ---------------------------------------------------------


def error_body(status: int, message: str) -> dict[str, Any]:
    kinds = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error", 429: "rate_limit_error"}
    return {
        "error": {"message": message, "type": kinds.get(status, "server_error"), "param": None, "code": str(status)}
    }


def _usage(request: ChatRequest, reply: Reply) -> dict[str, int]:
    """Reply's figures when scripted, else about four characters a token."""
    prompt = reply.prompt_tokens
    if prompt is None:
        prompt = max(1, len(json.dumps(request.messages)) // 4)
    completion = reply.completion_tokens
    if completion is None:
        text = (reply.content or "") + "".join(c.name + json.dumps(c.args) for c in reply.tool_calls)
        completion = max(1, len(text) // 4)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _finish_reason(reply: Reply) -> str:
    return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")


def _wire_tool_calls(reply: Reply) -> list[dict[str, Any]]:
    return [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.args)}}
        for c in reply.tool_calls
    ]


def completion_body(request: ChatRequest, reply: Reply, model: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = _wire_tool_calls(reply)
    return {
        "id": "chatcmpl-" + new_call_id()[5:],
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model or request.model or "test",
        "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(reply), "logprobs": None}],
        "usage": _usage(request, reply),
    }


def stream_chunks(request: ChatRequest, reply: Reply, model: str | None = None) -> list[dict[str, Any]]:
    """The SSE chunks of a streamed reply: content in pieces, tool-call arguments in pieces."""
    cid = "chatcmpl-" + new_call_id()[5:]
    base = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model or request.model or "test",
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    text = reply.content or ""
    for i in range(0, len(text), 8):
        chunks.append(chunk({"content": text[i : i + 8]}))
    for index, call in enumerate(_wire_tool_calls(reply)):
        args = call["function"]["arguments"]
        chunks.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": call["function"]["name"], "arguments": ""},
                        }
                    ]
                }
            )
        )
        for i in range(0, len(args), 6):
            chunks.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": args[i : i + 6]}}]}))
    chunks.append(chunk({}, _finish_reason(reply)))
    if (request.body.get("stream_options") or {}).get("include_usage"):
        chunks.append({**base, "choices": [], "usage": _usage(request, reply)})
    return chunks
