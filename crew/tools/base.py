"""BaseTool and Tool: one object that is both the model's manual and the runtime's callable.

Every expensive step (reading signatures and docstrings, building the argument
model, rendering JSON schema) happens when the tool is built or once per argument
model, so a call is a pydantic validation, a lock and the function itself.

Two families of entry points:

- ``run`` / ``arun`` and ``invoke`` / ``ainvoke`` (assembled in ``crew.tools.direct``)
  are for people calling a tool directly: they validate, claim a usage slot on the tool and run it.
- ``validate_args`` / ``dropped_args`` / ``_execute`` / ``_execute_sync`` /
  ``format_result`` / ``format_error`` are the pieces the shared ``ToolExecutor``
  assembles itself (it keeps its own per-run usage counts, cache and statistics): the
  runtime's side of a tool, inherited from ``crew.tools.calling``. This module is the
  model's manual: the definition, its checks, and what a model is shown.
"""

from __future__ import annotations

import inspect
import json
from abc import ABC
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from crew.common.blocking import in_thread, run_blocking
from crew.errors import ToolDefinitionError
from crew.tools import direct as invocation
from crew.tools.calling import NEVER_AWAITABLE, ErrorHandler, ToolCalling
from crew.tools.json_schema import model_from_json_schema
from crew.tools.messages import RunContext, ToolCall
from crew.tools.options import (
    EnvVar,
    always_cache,
    declared_default,
    definition_error,
    pick_description,
)
from crew.tools.portable_schema import ShippedSchema, generated, recipe_of
from crew.tools.prepared import ToolRuntime
from crew.tools.schema import (
    args_hint,
    build_args_model,
    model_name_for,
    parameters_schema,
    sanitize_tool_name,
    signature_params,
    strict_schema,
)


def signature_model(source: Callable[..., Any] | None, name: str) -> type[BaseModel]:
    """The argument model of a tool whose schema comes from ``source``'s signature (none: no arguments)."""
    params = signature_params(source, name)[0] if source is not None else []
    return build_args_model(model_name_for(name), params, tool_name=name)


class BaseTool(BaseModel, ToolCalling, ABC):
    """Subclass and implement ``_run`` and/or ``_arun``; the argument schema comes from their signature.

    ``name`` keeps what you wrote; ``tool_name`` is the provider-safe spelling that
    models see and call. A parameter annotated ``RunContext`` is filled by the runtime
    with the current run id, task and agent, and never shown to the model.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid", protected_namespaces=())

    name: str
    description: str
    args_schema: type[BaseModel] = None  # type: ignore[assignment]  # inferred when not given
    result_schema: type[BaseModel] | None = None
    env_vars: list[EnvVar] = Field(default_factory=list[EnvVar])
    cache_function: Callable[[dict[str, Any], Any], bool] = always_cache
    result_as_answer: bool = False
    max_usage_count: int | None = None
    requires_approval: bool | Callable[[Any], bool] = False
    """True, or ``fn(call) -> bool`` deciding per call: a person approves the call before it runs."""
    current_usage_count: int = 0
    handle_tool_error: ErrorHandler = True
    handle_validation_error: ErrorHandler = True
    response_format: Literal["content", "content_and_artifact"] = "content"
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    extras: dict[str, Any] = Field(default_factory=dict)

    # Read as self.__pydantic_private__["_rt"]: pydantic's private-attribute lookup costs ~2 µs
    # (it goes through a failed normal lookup first), more than the whole call budget allows.
    _rt: ToolRuntime = PrivateAttr()
    if TYPE_CHECKING:  # set for every instance (model_post_init), never None as pydantic's annotation allows
        __pydantic_private__: ClassVar[dict[str, Any]]  # pyright: ignore[reportIncompatibleVariableOverride]

    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise definition_error(type(self), data, exc) from None

    # -- building ------------------------------------------------------------------

    @model_validator(mode="before")
    @classmethod
    def _complete_definition(cls, data: Any) -> Any:
        """Fill in what was not given: result_as_answer from return_direct, schema, description."""
        if not isinstance(data, dict):
            return data
        data = cls._normalize_implementation(dict(cast("dict[str, Any]", data)))
        if "return_direct" in data:
            direct = data.pop("return_direct")
            given = data.get("result_as_answer")
            if given is not None and bool(given) != bool(direct):
                raise ToolDefinitionError("result_as_answer and its alias return_direct disagree")
            data["result_as_answer"] = bool(direct)
        name = data.get("name", declared_default(cls, "name"))
        if not isinstance(name, str) or not name.strip():
            raise ToolDefinitionError(f"{cls.__name__} needs a non-empty name")
        source = cls._signature_source(data)
        schema = data.get("args_schema", declared_default(cls, "args_schema"))
        inferred = schema is None
        if inferred:
            schema = generated(signature_model, source, name)
        elif isinstance(schema, dict):
            schema = generated(model_from_json_schema, schema, model_name_for(name), tool_name=name)
        elif not (isinstance(schema, type) and issubclass(schema, BaseModel)):
            raise ToolDefinitionError(
                f"Tool '{name}': args_schema must be a pydantic model class or a JSON-schema dict, got {schema!r}"
            )
        data["args_schema"] = schema
        description = data.get("description", declared_default(cls, "description"))
        if not description:
            description = pick_description(None, cls._docstring(data), schema)
            if description is None:
                raise ToolDefinitionError(
                    f"Tool '{name}' has no description: give it a docstring or pass description=... "
                    "(the model reads it to decide when to call the tool)"
                )
            data["description"] = description
        if inferred:  # LangChain's args_schema.model_json_schema() carries the tool's description
            schema.__doc__ = description
        return data

    @classmethod
    def _normalize_implementation(cls, data: dict[str, Any]) -> dict[str, Any]:
        if cls._run is BaseTool._run and cls._arun is BaseTool._arun:
            raise ToolDefinitionError(
                f"{cls.__name__} must implement _run and/or _arun (or use Tool / @tool for a function)"
            )
        return data

    @classmethod
    def _signature_source(cls, data: dict[str, Any]) -> Callable[..., Any] | None:
        """The callable whose signature defines the arguments: ``_run``, or ``_arun`` when ``_run`` takes none."""
        run = cls._run if cls._run is not BaseTool._run else None
        arun = cls._arun if cls._arun is not BaseTool._arun else None
        if run is not None and (arun is None or signature_params(run, cls.__name__)[0]):
            return run
        return arun

    @classmethod
    def _docstring(cls, data: dict[str, Any]) -> str | None:
        return cls.__dict__.get("__doc__")

    @field_validator("max_usage_count")
    @classmethod
    def _positive_limit(cls, value: int | None, info: ValidationInfo) -> int | None:
        if value is not None and value <= 0:
            raise ToolDefinitionError(
                f"Tool '{info.data.get('name', '?')}': max_usage_count must be a positive integer or None, got {value}"
            )
        return value

    @field_validator("env_vars", mode="before")
    @classmethod
    def _env_var_names(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [EnvVar(name=item) if isinstance(item, str) else item for item in cast("list[Any]", value)]
        return value

    # -- pickling (a tool sent to a Ray worker) -------------------------------------

    def __getstate__(self) -> dict[Any, Any]:
        """A generated argument model travels as its recipe (see ``crew.tools.portable_schema``)."""
        state = super().__getstate__()
        recipe = recipe_of(self.args_schema)
        if recipe is not None:
            shipped = ShippedSchema(recipe, self.args_schema.__doc__)
            state = {**state, "__dict__": {**state["__dict__"], "args_schema": shipped}}
        return state

    def __setstate__(self, state: dict[Any, Any]) -> None:
        shipped = state["__dict__"].get("args_schema")
        if isinstance(shipped, ShippedSchema):
            state = {**state, "__dict__": {**state["__dict__"], "args_schema": shipped.build()}}
        super().__setstate__(state)

    def model_post_init(self, context: Any, /) -> None:
        source = type(self)._signature_source(vars(self))
        injected = signature_params(source, self.name)[1] if source is not None else frozenset[str]()
        self._rt = ToolRuntime(self._has_native_async(), self._is_async_only(), injected)

    def _has_native_async(self) -> bool:
        return type(self)._arun is not BaseTool._arun

    def _is_async_only(self) -> bool:
        return type(self)._run is BaseTool._run

    # -- implementation hooks ---------------------------------------------------------

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        """The synchronous work. Default: run ``_arun`` to completion."""
        return run_blocking(self._arun(*args, **kwargs))

    async def _arun(self, *args: Any, **kwargs: Any) -> Any:
        """The asynchronous work. Default: ``_run`` in a worker thread, never blocking the loop."""
        return await in_thread(self._run, *args, **kwargs)

    # -- facts ----------------------------------------------------------------------

    @property
    def tool_name(self) -> str:
        """The provider-safe name models see and call (``sanitize_tool_name(self.name)``)."""
        return sanitize_tool_name(self.name)

    @property
    def is_async(self) -> bool:
        """True when the tool only has an async implementation."""
        rt: ToolRuntime = self.__pydantic_private__["_rt"]
        return rt.async_only

    @property
    def return_direct(self) -> bool:
        """LangChain's name for ``result_as_answer``."""
        return self.result_as_answer

    @property
    def args(self) -> dict[str, Any]:
        """The JSON-schema properties of the arguments (LangChain's ``tool.args``)."""
        return self.parameters().get("properties", {})

    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments the model sees: rendered from ``args_schema``.

        A tool whose schema comes from elsewhere (an MCP server's ``inputSchema``) returns
        that one, so the model sees exactly what the other side declared.
        """
        return parameters_schema(self.args_schema)

    @property
    def usage_limit_message(self) -> str:
        return (
            f"Tool '{self.name}' has reached its usage limit of {self.max_usage_count} times "
            "and cannot be used anymore."
        )

    def args_hint(self) -> str:
        """``a (integer, required), b (string, default "x")``: what the tool expects."""
        return args_hint(self.args_schema)

    # -- direct use ---------------------------------------------------------------------

    def run(self, *args: Any, **kwargs: Any) -> Any:
        """Validate, claim a usage slot, run, and return the raw result (a coroutine is awaited).

        Invalid arguments raise ``ToolArgumentsError`` (a ``ValueError``); past the
        usage limit the limit message is returned and the tool does not run; errors
        raised by the tool propagate.
        """
        rt: ToolRuntime = self.__pydantic_private__["_rt"]
        if args or rt.injected:
            validated, context = self._bind(args, kwargs)
        else:  # keyword arguments only: the common case, one validation and nothing else
            validated, context = self.validate_args(kwargs), None
        refusal = self._claim_usage()
        if refusal is not None:
            return refusal
        result = self._execute_sync(validated, context)
        if type(result) not in NEVER_AWAITABLE and inspect.isawaitable(result):
            result = run_blocking(result)
        return result

    async def arun(self, *args: Any, **kwargs: Any) -> Any:
        """The async twin of ``run``; sync work runs in a worker thread."""
        validated, context = self._bind(args, kwargs)
        refusal = self._claim_usage()
        if refusal is not None:
            return refusal
        return await self._execute(validated, context)

    def invoke(self, input: ToolCall | dict[str, Any] | str, *, context: RunContext | None = None) -> Any:
        """Arguments dict -> the result; tool call ``{"name","args","id","type":"tool_call"}`` -> ToolResult.

        Errors become observations per ``handle_validation_error`` / ``handle_tool_error``.
        """
        return invocation.invoke(self, input, context)

    async def ainvoke(self, input: ToolCall | dict[str, Any] | str, *, context: RunContext | None = None) -> Any:
        """The async twin of ``invoke``."""
        return await invocation.ainvoke(self, input, context)

    def batch(self, inputs: list[Any], *, max_concurrency: int | None = None) -> list[Any]:
        """``invoke`` each input concurrently in threads; results in the inputs' order."""
        return invocation.batch(self, inputs, max_concurrency)

    async def abatch(self, inputs: list[Any], *, max_concurrency: int | None = None) -> list[Any]:
        """``ainvoke`` each input concurrently; results in the inputs' order."""
        return await invocation.abatch(self, inputs, max_concurrency)

    def reset_usage_count(self) -> None:
        rt: ToolRuntime = self.__pydantic_private__["_rt"]
        with rt.usage.lock:
            self.__dict__["current_usage_count"] = 0  # pyright: ignore[reportIndexIssue] - the instance dict, past pydantic's slow __setattr__

    # -- model-facing renderings --------------------------------------------------------

    def describe(self) -> str:
        """The text block injected into prompts: name, arguments' JSON schema, description.

        Every agent run puts it in its system prompt, so it is rendered once and kept until
        the name, description or a schema changes (rendering the schemas costs ~5 us a tool).
        A tool whose ``parameters()`` come from elsewhere (an MCP server's) is rendered anew.
        """
        if type(self).parameters is not BaseTool.parameters:
            return self._render_description()
        rt: ToolRuntime = self.__pydantic_private__["_rt"]
        key = (self.name, self.description, self.args_schema, self.result_schema)
        cached = rt.described
        if cached is None or cached[0] != key:
            cached = rt.described = (key, self._render_description())
        return cached[1]

    def _render_description(self) -> str:
        lines = [
            f"Tool Name: {self.tool_name}",
            f"Tool Arguments: {json.dumps(self.parameters(), ensure_ascii=False)}",
            f"Tool Description: {self.description}",
        ]
        result = self.describe_result()
        if result is not None:
            lines.append(f"Tool Result: {result}")
        return "\n".join(lines)

    def describe_result(self) -> str | None:
        """The result's JSON schema as prompt text, if the tool declares one (an OpenAI tool dict cannot carry it)."""
        if self.result_schema is None:
            return None
        return json.dumps(parameters_schema(self.result_schema), ensure_ascii=False)

    def to_openai_tool(self, strict: bool = False) -> dict[str, Any]:
        """The OpenAI function-tool dict (litellm translates it for other providers)."""
        parameters = self.parameters()
        function: dict[str, Any] = {"name": self.tool_name, "description": self.description}
        if strict:
            function["parameters"] = strict_schema(parameters)
            function["strict"] = True
        else:
            function["parameters"] = parameters
        return {"type": "function", "function": function, **self.extras}

    # -- internals ----------------------------------------------------------------------

    def _bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[dict[str, Any], RunContext | None]:
        """Positional arguments map onto the schema's fields in order; a passed RunContext is kept."""
        context = None
        rt: ToolRuntime = self.__pydantic_private__["_rt"]
        injected = rt.injected
        if injected:
            for key in injected & kwargs.keys():
                value = kwargs.pop(key)
                context = context or value
        if args:
            names = [n for n in self.args_schema.model_fields if n not in kwargs]
            if len(args) > len(names):
                raise TypeError(f"Tool '{self.name}' takes {len(names)} positional arguments, got {len(args)}")
            kwargs = {**dict(zip(names, args, strict=False)), **kwargs}
        return self.validate_args(kwargs), context

    def _claim_usage(self) -> str | None:
        """Check the limit and count this use in one atomic step."""
        rt: ToolRuntime = self.__pydantic_private__["_rt"]
        with rt.usage.lock:
            limit = self.max_usage_count
            count = self.current_usage_count
            if limit is not None and count >= limit:
                return self.usage_limit_message
            self.__dict__["current_usage_count"] = count + 1  # pyright: ignore[reportIndexIssue] - the instance dict, past pydantic's slow __setattr__
        return None
