"""How a tool is called: its arguments validated into a dict, the tool run, its result and errors as text.

``ToolCalling`` is the runtime's side of a tool, which ``BaseTool`` (``crew.tools.base``, the
model's manual: definition, schemas, renderings) inherits: the steps the executor assembles.

A tool's arguments are validated straight into a dict, without building the model instance.

A tool call needs the validated arguments as keyword arguments, never the argument
model itself; building that instance and copying its ``__dict__`` is more than half of
what validation costs on a small tool. pydantic-core validates a model in two layers
(``model`` around ``model-fields``); the inner layer alone yields exactly the fields
dict, the extras and the fields set. It is used only where it means the same thing as
the whole model: no custom ``__init__``, no ``model_post_init``, no model validators (they
wrap the ``model`` layer), no shared definitions, extras not forbidden. Everything else
takes the model's own validator, so behaviour never depends on the shortcut.

``known_keys`` says which keys a model's arguments may hold (the rest is dropped).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, cast

from pydantic import BaseModel, ValidationError
from pydantic_core import SchemaValidator

from crew.common.blocking import in_thread
from crew.errors import ToolArgumentsError
from crew.tools.messages import RunContext, to_text

ErrorHandler = bool | str | Callable[[Exception], str]

NEVER_AWAITABLE = frozenset({str, int, float, bool, type(None), dict, list, tuple, bytes})
"""Result types that are never awaitable: ``inspect.isawaitable`` is skipped for them (a third of a cheap call)."""


_VALIDATORS: dict[type[BaseModel], SchemaValidator | None] = {}

_KNOWN_KEYS: dict[type[BaseModel], frozenset[str] | None] = {}


def known_keys(model: type[BaseModel]) -> frozenset[str] | None:
    """Field names and aliases of ``model``; None when it keeps extras (nothing is dropped)."""
    try:
        return _KNOWN_KEYS[model]
    except KeyError:
        pass
    if model.model_config.get("extra") == "allow":
        keys = None
    else:
        keys = frozenset(model.model_fields) | frozenset(f.alias for f in model.model_fields.values() if f.alias)
    if len(_KNOWN_KEYS) > 4096:
        _KNOWN_KEYS.clear()
    _KNOWN_KEYS[model] = keys
    return keys


def validate_fields(model: type[BaseModel], args: Any) -> dict[str, Any]:
    """``model``'s validated fields (and extras, when it keeps them) as a new dict; raises ValidationError."""
    validator = fields_validator(model) if type(args) is dict else None
    if validator is None:
        validated = model.__pydantic_validator__.validate_python(args)
        extra = validated.__pydantic_extra__
        return {**validated.__dict__, **extra} if extra else dict(validated.__dict__)
    fields, extra, _ = validator.validate_python(args)  # type: ignore[union-attr]
    return {**fields, **extra} if extra else fields


def fields_validator(model: type[BaseModel]) -> SchemaValidator | None:
    """The inner validator of ``model`` (built once), or None where only the model's own one is right.

    Its ``validate_python(args)`` gives ``(fields, extras, fields_set)``: hot paths that
    hold it skip the lookups of ``validate_fields``.
    """
    validator = _VALIDATORS.get(model, _UNKNOWN)
    return _fields_validator(model) if validator is _UNKNOWN else validator


_UNKNOWN: Any = object()


def _fields_validator(model: type[BaseModel]) -> SchemaValidator | None:
    validator = _build(model)
    if len(_VALIDATORS) > 4096:  # argument models made on the fly (JSON schemas) must not pile up
        _VALIDATORS.clear()
    _VALIDATORS[model] = validator
    return validator


def _build(model: type[BaseModel]) -> SchemaValidator | None:
    try:
        schema: Any = model.__pydantic_core_schema__
        if schema.get("type") != "model" or any(schema.get(k) for k in ("custom_init", "root_model", "post_init")):
            return None
        inner: dict[str, Any] = schema.get("schema") or {}
        config = dict(schema.get("config") or {})
        if inner.get("type") != "model-fields" or config.get("extra_fields_behavior") == "forbid":
            return None
        return SchemaValidator(inner, config)  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - anything unusual keeps the model's own validator
        return None


class Runtime(Protocol):
    """What calling a tool reads of its runtime record (``crew.tools.prepared.ToolRuntime``)."""

    native_async: bool
    async_only: bool
    injected: frozenset[str]


class ToolCalling:
    """How a tool is called: ``BaseTool`` (the model's manual) inherits these from here.

    The pieces the shared ``ToolExecutor`` assembles itself (it keeps its own per-run usage
    counts, cache and statistics): ``validate_args`` / ``dropped_args`` / ``_execute`` /
    ``_execute_sync`` / ``format_result`` / ``format_error``; no usage counting, no error handling.
    """

    if TYPE_CHECKING:  # BaseTool's fields and hooks, which these read
        name: str
        args_schema: type[BaseModel]
        handle_tool_error: ErrorHandler
        handle_validation_error: ErrorHandler
        response_format: Literal["content", "content_and_artifact"]
        __pydantic_private__: ClassVar[dict[str, Any]]

        def _run(self, *args: Any, **kwargs: Any) -> Any: ...

        async def _arun(self, *args: Any, **kwargs: Any) -> Any: ...

        def args_hint(self) -> str: ...

    @property
    def injected_params(self) -> frozenset[str]:
        """Parameters the runtime fills with a ``RunContext`` (hidden from the model)."""
        rt: Runtime = self.__pydantic_private__["_rt"]
        return rt.injected

    def validate_args(self, args: Any) -> dict[str, Any]:
        """Validated, coerced arguments keyed by parameter name; unknown extras are dropped,
        even when the schema forbids them.

        Nested models stay model instances (a parameter typed ``Address`` gets an
        ``Address``). Raises ``ToolArgumentsError`` naming each bad argument.
        """
        try:
            return validate_fields(self.args_schema, args)
        except ValidationError as exc:
            given = cast("dict[str, Any]", args) if isinstance(args, dict) else None
            known = known_keys(self.args_schema) if given is not None else None
            if given is not None and known is not None and not known.issuperset(given):  # extra="forbid"
                return self.validate_args({key: value for key, value in given.items() if key in known})
            raise self._arguments_error(exc) from None

    def dropped_args(self, args: dict[str, Any]) -> list[str]:
        """The argument names ``validate_args`` ignores (invented by the model)."""
        known = known_keys(self.args_schema)
        return [] if known is None else [key for key in args if key not in known]

    def _execute_sync(self, validated: dict[str, Any], context: RunContext | None) -> Any:
        """Run in this thread. An async-only tool returns its coroutine for the caller to await."""
        rt: Runtime = self.__pydantic_private__["_rt"]
        if rt.injected:
            validated = _with_context(validated, rt.injected, context)
        if rt.async_only:
            return self._arun(**validated)
        return self._run(**validated)

    async def _execute(self, validated: dict[str, Any], context: RunContext | None) -> Any:
        """Run from async code: native ``_arun``, or ``_run`` in a worker thread; results awaited."""
        rt: Runtime = self.__pydantic_private__["_rt"]
        if rt.injected:
            validated = _with_context(validated, rt.injected, context)
        if rt.native_async:
            result = await self._arun(**validated)
        else:
            result = await in_thread(self._run, **validated)
        if inspect.isawaitable(result):
            result = await result
        return result

    def format_result(self, raw: Any) -> tuple[str, Any]:
        """``(content text, artifact)``; a ``content_and_artifact`` tool returns a 2-tuple."""
        if self.response_format == "content_and_artifact":
            pair = cast("tuple[Any, ...] | list[Any]", raw) if isinstance(raw, tuple | list) else None
            if pair is None or len(pair) != 2:
                raise ValueError(
                    f"Tool '{self.name}' has response_format='content_and_artifact' and must return "
                    f"a (content, artifact) tuple, got {type(cast(object, raw)).__name__}"
                )
            return to_text(pair[0]), pair[1]
        return to_text(raw), None

    def format_error(self, exc: Exception) -> str | None:
        """The observation for a failed run per ``handle_tool_error``; None means re-raise."""
        default = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return _handle(self.handle_tool_error, exc, default)

    def format_validation_error(self, exc: ToolArgumentsError) -> str | None:
        """The observation for invalid arguments per ``handle_validation_error``; None means re-raise."""
        return _handle(self.handle_validation_error, exc, str(exc))

    def _arguments_error(self, exc: ValidationError) -> ToolArgumentsError:
        problems: dict[str, str] = {}
        for error in exc.errors(include_url=False):
            where = ".".join(str(part) for part in error["loc"]) or "arguments"
            text = error["msg"] if error["type"] == "missing" else f"{error['msg']} (got {error['input']!r})"
            problems[where] = f"{problems[where]}; {text}" if where in problems else text
        lines = [f"Tool '{self.name}' received invalid arguments:"]
        lines += [f"  - {where}: {text}" for where, text in problems.items()]
        lines.append(f"Expected arguments: {self.args_hint()}.")
        return ToolArgumentsError("\n".join(lines), tool=self.name, problems=problems)


def _with_context(validated: dict[str, Any], injected: frozenset[str], context: RunContext | None) -> dict[str, Any]:
    ctx = context if context is not None else RunContext()
    return {**validated, **dict.fromkeys(injected, ctx)}


def _handle(handler: ErrorHandler, exc: Exception, default: str) -> str | None:
    if handler is False:
        return None
    if handler is True:
        return default
    if isinstance(handler, str):
        return handler
    return to_text(handler(exc))
