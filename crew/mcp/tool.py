"""One tool of an MCP server as a crew tool.

The server's ``inputSchema`` is what the model sees, unchanged: re-deriving it through a
pydantic model would rename, reorder or drop what the server declared, and would add
``null`` defaults for optional fields that real servers reject. Arguments are validated
against that same schema (``crew.mcp.validate``: jsonschema's verdict, fast) before
the server is called, and the ones the model left out stay out of the call.

Results are mapped for the model: text as it is, images and binary resources as a short
placeholder (the data goes to the result's artifact), structured content as JSON when
there is no text. ``isError`` results and a server gone mid-run become error
observations that name the server.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from crew.errors import ToolArgumentsError, ToolException
from crew.mcp.validate import ArgumentChecker
from crew.tools.base import BaseTool
from crew.tools.messages import RunContext
from crew.tools.schema import hint_for

__all__ = ["MAX_RESULT_CHARS", "MCPTool", "map_result"]

MAX_RESULT_CHARS = 1_000_000
"""The most characters of an MCP result's text that go to the model; the rest is cut, with a
note saying so (a server's 100 MB answer must not become the conversation)."""


_CHECKER_LOCK = threading.Lock()  # building a tool's checker is a one-off: one lock for all (copies stay copyable)


class _AnyArguments(BaseModel):
    """The args_schema slot of an MCP tool: its real schema is a JSON-schema dict (``input_schema``)."""

    model_config = ConfigDict(extra="allow")


def capped(text: str) -> str:
    """``text`` cut to ``MAX_RESULT_CHARS``, with a note that says how much was left out."""
    if len(text) <= MAX_RESULT_CHARS:
        return text
    cut = len(text) - MAX_RESULT_CHARS
    return f"{text[:MAX_RESULT_CHARS]}\n[result cut: {cut} more characters left out, past the {MAX_RESULT_CHARS} limit]"


class MCPTool(BaseTool):
    """A tool listed by an ``MCPServer``; calls go to the server that listed it.

    ``annotations`` keeps the server's hints (``readOnlyHint``, ``idempotentHint``,
    ``destructiveHint``, ``openWorldHint``, ``title``) for a ``cache_function`` or a
    reviewer to read; ``remote_name`` is the server's own name (``name`` may carry a prefix).
    """

    server: Any = Field(exclude=True, repr=False)
    remote_name: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] = Field(default_factory=dict)
    args_schema: type[BaseModel] = _AnyArguments

    _validator: Any = PrivateAttr(default=None)

    @classmethod
    def _normalize_implementation(cls, data: dict[str, Any]) -> dict[str, Any]:
        return data

    @classmethod
    def _signature_source(cls, data: dict[str, Any]) -> Any:
        return None

    def _has_native_async(self) -> bool:
        return True

    def _is_async_only(self) -> bool:
        return False

    # -- the schema, as the server declared it ------------------------------------------

    def parameters(self) -> dict[str, Any]:
        return self.input_schema

    def args_hint(self) -> str:
        return hint_for(self.input_schema)

    def validate_args(self, args: Any) -> dict[str, Any]:
        """The arguments as sent (nothing added), once they satisfy the server's schema.

        Keys the schema does not know are dropped when it forbids extras (as for every
        tool: models invent arguments); everything else is the server's to judge.
        """
        if not isinstance(args, dict):
            raise self._invalid({"arguments": f"expected an object of arguments, got {type(args).__name__}"})
        dropped = self.dropped_args(args)
        if dropped:
            args = {key: value for key, value in args.items() if key not in dropped}
        problems = self._checker().problems(args)
        if problems:
            raise self._invalid(problems)
        return dict(args)

    def dropped_args(self, args: dict[str, Any]) -> list[str]:
        if self.input_schema.get("additionalProperties", True) is not False:
            return []
        known = self.input_schema.get("properties", {})
        return [key for key in args if key not in known]

    def _checker(self) -> ArgumentChecker:
        private: dict[str, Any] = self.__pydantic_private__  # type: ignore[assignment]  # direct: pydantic's private-attribute lookup costs ~2 µs
        checker = private["_validator"]
        if checker is None:
            with _CHECKER_LOCK:
                if private["_validator"] is None:
                    private["_validator"] = ArgumentChecker(self.input_schema)
                checker = private["_validator"]
        return checker

    def _invalid(self, problems: dict[str, str]) -> ToolArgumentsError:
        lines = [f"Tool '{self.name}' received invalid arguments:"]
        lines += [f"  - {where}: {text}" for where, text in problems.items()]
        lines.append(f"Expected arguments: {self.args_hint()}.")
        return ToolArgumentsError("\n".join(lines), tool=self.name, problems=problems)

    # -- calling --------------------------------------------------------------------------

    async def _execute(self, validated: dict[str, Any], context: RunContext | None) -> Any:
        return map_result(self.server.label, await self.server.acall(self.remote_name, validated))

    def _execute_sync(self, validated: dict[str, Any], context: RunContext | None) -> Any:
        return map_result(self.server.label, self.server.call(self.remote_name, validated))

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        return self._execute_sync(kwargs, None)

    async def _arun(self, *args: Any, **kwargs: Any) -> Any:
        return await self._execute(kwargs, None)


def map_result(server: str, result: Any) -> tuple[str, Any]:
    """``(text for the model, artifact)`` of a ``CallToolResult``; ``isError`` raises ``ToolException``.

    The artifact is None when there is nothing beside the text, else a dict with
    ``images`` / ``resources`` (the data) and ``structured`` (the structured content).
    """
    texts: list[str] = []
    images: list[dict[str, Any]] = []
    resources: list[dict[str, Any]] = []
    for block in getattr(result, "content", None) or []:
        texts.append(_block_text(block, images, resources))
    structured = getattr(result, "structured_content", None)
    if not texts and structured is not None:
        texts.append(json.dumps(structured, ensure_ascii=False))
    text = capped("\n".join(texts))
    if getattr(result, "is_error", False):
        raise ToolException(f"MCP server '{server}' reported an error: {text or '(no message)'}")
    artifact: dict[str, Any] = {}
    if images:
        artifact["images"] = images
    if resources:
        artifact["resources"] = resources
    if structured is not None:
        artifact["structured"] = structured
    return text, artifact or None


def _block_text(block: Any, images: list[dict[str, Any]], resources: list[dict[str, Any]]) -> str:
    """What the model reads for one content block; images and binary resources go to the lists."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return block.text
    if kind in ("image", "audio"):
        size = len(block.data) * 3 // 4
        images.append({"type": kind, "mime_type": block.mime_type, "data": block.data})
        return f"[{kind} {len(images)}: {block.mime_type}, {size} bytes, kept as an artifact]"
    if kind == "resource":
        return _resource_text(block.resource, resources)
    if kind == "resource_link":
        return f"[resource link: {block.uri}{f' ({block.name})' if getattr(block, 'name', None) else ''}]"
    return json.dumps(block.model_dump(mode="json", exclude_none=True), ensure_ascii=False)


def _resource_text(resource: Any, resources: list[dict[str, Any]]) -> str:
    text = getattr(resource, "text", None)
    if isinstance(text, str):
        return text
    resources.append({"uri": str(resource.uri), "mime_type": resource.mime_type, "blob": resource.blob})
    return f"[resource {resource.uri}: {getattr(resource, 'mime_type', None)}, kept as an artifact]"
