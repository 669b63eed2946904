"""Offline model doubles: ChatModels that need no network, no key and no litellm.

``TestModel`` exercises a crew's wiring without anyone writing replies: it calls
every tool once with schema-valid arguments, then answers in the task's format.
``FunctionModel`` lets a test decide each turn itself, told which agent, task and turn
it answers. Both stream (``astream``) as well as answer, count usage (about four
characters a token) and report calls on the event bus like a real LLM.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import random
import re
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from pydantic import BaseModel

from crew.common.usage import Usage
from crew.models.base import LLMResponse, ModelDelta, emit_call, parse_arguments
from crew.models.calling import final_response
from crew.models.info import ModelCallInfo, current_call
from crew.testing.values import example_value
from crew.tools.messages import ToolCall

Messages = list[dict[str, Any]]
Tools = list[dict[str, Any]]


def approximate_usage(messages: Messages, tools: Tools | None, response: LLMResponse) -> Usage:
    """Token figures the way a tokenizer would roughly count them: four characters a token."""
    prompt_chars = len(json.dumps(messages, default=str)) + (len(json.dumps(tools)) if tools else 0)
    completion_chars = len(response.content or "") + sum(
        len(c.name) + len(json.dumps(c.args, default=str)) for c in response.tool_calls
    )
    prompt, completion = prompt_chars // 4, completion_chars // 4
    return Usage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion, requests=1)


def _first_user_text(messages: Messages) -> str:
    for message in messages:
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):  # content parts
                content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
            return " ".join(str(content or "").split())
    return ""


def _conversation_key(messages: Messages) -> str:
    """What tells one conversation from another, the same every time it is held again.

    Its opening messages (the system prompt and the task, before any reply) and, inside an
    agent's run, the task and agent the call serves: two tasks with the same prompt still
    differ by name. Nothing random and no run id, so a test sees the same ids on every run.
    """
    head: list[Any] = []
    for message in messages:
        if message.get("role") not in ("system", "user"):
            break
        head.append([message.get("role"), message.get("content")])
    info = current_call()
    who = [info.task, info.agent] if info is not None else [None, None]
    return hashlib.sha256(json.dumps([who, head], default=str).encode()).hexdigest()


class _Shippable:
    """Pickling without the call-count lock: a copy sent to another process (a Ray worker)
    counts its own calls behind a lock of its own."""

    _lock: threading.Lock

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()


class TestModel(_Shippable):
    """Calls each tool it is given once, then answers in the requested format.

    Turn one (no tool results in the history yet): one call per tool, arguments
    generated from the tool's JSON schema (valid, deterministic for ``seed``), each call's
    id unique to its conversation (its opening messages, its task and agent) yet the same
    every time that conversation is held again. What a schema offers is used first (a
    const, ``examples``, a default, an enum, an example in the description), and
    ``inputs`` (a crew's kickoff inputs) fill the arguments of their name, so real tools
    get values they accept.
    Afterwards: ``final_answer`` if given, else JSON valid for ``output_schema``
    when the task wants structured output, else a short text naming the task and
    the tool results it saw. ``call_tools=False`` skips straight to the answer.

    A tool its MCP server marks destructive (``destructiveHint``) or open-world
    (``openWorldHint``) is never called unless ``risky_tools=True``: a test double pointed
    at a real filesystem, memory or fetch server must not write, forget or reach out.
    """

    __test__ = False  # not a pytest test class, despite the name

    def __init__(
        self,
        seed: int = 0,
        final_answer: str | dict[str, Any] | BaseModel | None = None,
        call_tools: bool = True,
        *,
        model: str = "test",
        inputs: Mapping[str, Any] | None = None,
        risky_tools: bool = False,
    ) -> None:
        self.seed = seed
        self.final_answer = final_answer
        self.call_tools = call_tools
        self.model = model
        self.inputs = dict(inputs or {})
        self.risky_tools = risky_tools
        self.calls = 0
        self._lock = threading.Lock()

    @property
    def supports_function_calling(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"TestModel(seed={self.seed})"

    async def acomplete(
        self, messages: Messages, tools: Tools | None = None, *, output_schema: dict[str, Any] | None = None
    ) -> LLMResponse:
        with self._lock:
            self.calls += 1
        callable_tools = self._callable(tools) if self.call_tools else []
        if callable_tools and not any(m.get("role") == "tool" for m in messages):
            conversation = _conversation_key(messages)
            response = LLMResponse(
                tool_calls=[self._call(tool, i, len(messages), conversation) for i, tool in enumerate(callable_tools)]
            )
        else:
            response = LLMResponse(content=self._answer(messages, output_schema))
        response.model = self.model
        response.usage = approximate_usage(messages, tools, response)
        emit_call(response, messages=messages)
        return response

    async def astream(
        self, messages: Messages, tools: Tools | None = None, *, output_schema: dict[str, Any] | None = None
    ) -> AsyncIterator[ModelDelta | LLMResponse]:
        """The same reply as :meth:`acomplete`, its text streamed in a few pieces first."""
        response = await self.acomplete(messages, tools, output_schema=output_schema)
        for piece in pieces(response.content or ""):
            yield ModelDelta(text=piece)
        yield response

    def _callable(self, tools: Tools | None) -> Tools:
        """The tools this model may call: all of them, less those marked risky unless ``risky_tools``."""
        if not tools or self.risky_tools:
            return list(tools or ())
        info = current_call()
        hints = info.tool_hints if info is not None else {}
        return [tool for tool in tools if not _risky(hints.get(tool.get("function", tool).get("name", "")))]

    def _rng(self, *parts: object) -> random.Random:
        return random.Random("|".join(map(str, (self.seed, *parts))))

    def _call(self, tool: dict[str, Any], index: int, turn: int, conversation: str) -> ToolCall:
        """The call of ``tool``: arguments from the seed alone, an id that is also the conversation's.

        Two agents given the same tool in tasks running at once get the same arguments, but
        never the same call id: ids name calls across a run (a person approves ``call_...``).
        """
        function = tool.get("function", tool)
        name = function["name"]
        schema = function.get("parameters") or {"type": "object", "properties": {}}
        args = example_value(schema, self._rng(name, turn), inputs=self.inputs)
        digest = hashlib.sha256(f"{self.seed}|{conversation}|{turn}|{index}|{name}".encode()).hexdigest()[:24]
        return ToolCall(name=name, args=args, id=f"call_{digest}")

    def _answer(self, messages: Messages, output_schema: dict[str, Any] | None) -> str:
        if self.final_answer is not None:
            return _as_text(self.final_answer)
        if output_schema:
            return json.dumps(example_value(output_schema, self._rng("answer"), inputs=self.inputs))
        task = _first_user_text(messages)
        task = task if len(task) <= 160 else task[:159] + "…"
        results = _tool_results(messages)
        answer = f"Test answer for: {task}" if task else "Test answer."
        return answer + (f" (tool results: {'; '.join(results)})" if results else "")


def _risky(hints: Mapping[str, Any] | None) -> bool:
    """Marked by its server as changing or deleting things, or as reaching beyond a closed world."""
    return bool(hints) and (hints.get("destructiveHint") is True or hints.get("openWorldHint") is True)


def _as_text(answer: str | dict[str, Any] | BaseModel) -> str:
    if isinstance(answer, BaseModel):
        return answer.model_dump_json()
    if isinstance(answer, dict):
        return json.dumps(answer)
    return str(answer)


def _tool_results(messages: Messages) -> list[str]:
    """``name: text`` of each tool result in the history, its text on one line and cut at 80 characters."""
    names = {
        call.get("id"): (call.get("function") or {}).get("name")  # tool messages carry only the id
        for m in messages
        if m.get("role") == "assistant"
        for call in m.get("tool_calls") or []
    }
    return [
        f"{m.get('name') or names.get(m.get('tool_call_id')) or 'tool'}: "
        f"{' '.join(str(m.get('content', '')).split())[:80]}"
        for m in messages
        if m.get("role") == "tool"
    ]


FunctionReply = str | list[dict[str, Any] | ToolCall] | LLMResponse
ModelFunction = Callable[..., Any]
"""``fn(messages)``, ``fn(messages, tools)`` or ``fn(messages, tools, info)``, sync or async, returning a
:data:`FunctionReply`; or a (sync or async) generator function of the same arguments yielding text pieces."""


class FunctionModel(_Shippable):
    """A model whose every turn is ``fn(messages, tools, info)``, sync or async.

    ``fn`` returns the reply text, a list of tool calls (``{"name": ..., "args": {...}}``
    dicts or ToolCalls; missing ids are filled in, a new random one each, so no two calls
    share one), or a full LLMResponse. ``info`` is the call's
    :class:`~crew.models.info.ModelCallInfo` (agent role, task name, context task
    names, tool names, turn, output schema), so a test can script by task; ``fn`` may take
    just ``(messages, tools)`` or ``(messages)``. A generator ``fn`` yields the reply's text
    in pieces, which ``astream`` hands on as they come; any other reply is streamed in a
    few pieces. ``latency`` seconds are awaited before each reply without blocking other
    tasks. ``function_calling=False`` makes agents use the text protocol, whose replies
    ``fn`` then writes as text.
    """

    def __init__(
        self, fn: ModelFunction, latency: float = 0.0, *, model: str = "function", function_calling: bool = True
    ) -> None:
        if not callable(fn):
            raise TypeError(f"FunctionModel needs a callable fn(messages, tools, info), got {type(fn).__name__}")
        self.fn = fn
        self.latency = latency
        self.model = model
        self.function_calling = function_calling
        self.calls = 0
        self._arity = _positional_arity(fn)
        self._streams = inspect.isasyncgenfunction(fn) or inspect.isgeneratorfunction(fn)
        self._lock = threading.Lock()

    @property
    def supports_function_calling(self) -> bool:
        return self.function_calling

    def __repr__(self) -> str:
        return f"FunctionModel({getattr(self.fn, '__name__', self.fn)!r})"

    async def acomplete(
        self, messages: Messages, tools: Tools | None = None, *, output_schema: dict[str, Any] | None = None
    ) -> LLMResponse:
        if self._streams:
            return await final_response(self.astream(messages, tools, output_schema=output_schema))
        if self.latency > 0:
            await asyncio.sleep(self.latency)
        reply = self._call_fn(messages, tools, output_schema)
        if inspect.isawaitable(reply):
            reply = await reply
        return self._response(messages, tools, reply)

    async def astream(
        self, messages: Messages, tools: Tools | None = None, *, output_schema: dict[str, Any] | None = None
    ) -> AsyncIterator[ModelDelta | LLMResponse]:
        """A generator ``fn``'s pieces as they come, else the reply's text in a few pieces; then the reply."""
        if not self._streams:
            response = await self.acomplete(messages, tools, output_schema=output_schema)
            for piece in pieces(response.content or ""):
                yield ModelDelta(text=piece)
            yield response
            return
        if self.latency > 0:
            await asyncio.sleep(self.latency)
        produced = self._call_fn(messages, tools, output_schema)
        said: list[str] = []
        if inspect.isasyncgen(produced):
            async for piece in produced:
                said.append(_piece(piece))
                yield ModelDelta(text=said[-1])
        else:
            for piece in produced:
                said.append(_piece(piece))
                yield ModelDelta(text=said[-1])
        yield self._response(messages, tools, "".join(said))

    def _call_fn(self, messages: Messages, tools: Tools | None, output_schema: dict[str, Any] | None) -> Any:
        if self._arity == 1:
            return self.fn(messages)
        if self._arity == 2:
            return self.fn(messages, tools or [])
        info = current_call() or ModelCallInfo(
            tools=tuple((t.get("function") or t).get("name", "") for t in tools or ()), output_schema=output_schema
        )
        return self.fn(messages, tools or [], info)

    def _response(self, messages: Messages, tools: Tools | None, reply: Any) -> LLMResponse:
        with self._lock:
            self.calls += 1
        if isinstance(reply, LLMResponse):
            response = reply
        elif isinstance(reply, str):
            response = LLMResponse(content=reply)
        elif isinstance(reply, list):
            response = LLMResponse(tool_calls=[_tool_call(item, i) for i, item in enumerate(reply)])
        else:
            raise TypeError(
                f"FunctionModel fn must return a str, a list of tool calls or an LLMResponse, "
                f"not {type(reply).__name__}"
            )
        response.model = response.model or self.model
        if response.usage.requests == 0:
            response.usage = approximate_usage(messages, tools, response)
        emit_call(response, messages=messages)
        return response


def pieces(text: str, count: int = 3) -> list[str]:
    """``text`` cut at word boundaries into at most ``count`` pieces that join back into it exactly."""
    words = re.findall(r"\S+\s*|\s+", text)
    if not words:
        return []
    size = -(-len(words) // min(count, len(words)))
    return ["".join(words[i : i + size]) for i in range(0, len(words), size)]


def _piece(piece: Any) -> str:
    if not isinstance(piece, str):
        raise TypeError(f"a streaming FunctionModel fn must yield text pieces (str), not {type(piece).__name__}")
    return piece


def _positional_arity(fn: Callable[..., Any]) -> int:
    """How many of (messages, tools, info) ``fn`` takes: 3 when it can take them all (or can't be read)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 3
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return max(2, len(positional))  # ``*args``: what it took before info existed, or more
    return max(1, min(3, len(positional)))


def _tool_call(item: dict[str, Any] | ToolCall, index: int) -> ToolCall:
    if isinstance(item, ToolCall):
        return item
    if not isinstance(item, dict) or "name" not in item:
        raise TypeError(
            f"tool call #{index} from FunctionModel fn must be a dict with 'name' and 'args' "
            f"(or a ToolCall), got {item!r}"
        )
    args = item.get("args", item.get("arguments", {}))
    try:
        args = parse_arguments(args if isinstance(args, (str, dict)) or args is None else json.dumps(args))
    except ValueError as exc:
        raise TypeError(
            f"tool call #{index} ({item['name']!r}) from FunctionModel fn: 'args' must be a dict "
            f"or a JSON object string; {exc}"
        ) from None
    fields = {"name": item["name"], "args": args}
    if item.get("id"):
        fields["id"] = item["id"]
    return ToolCall(**fields)
