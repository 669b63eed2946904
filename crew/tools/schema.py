"""From a Python signature to the model's manual: a pydantic model, its JSON schema, provider names.

Everything here runs when a tool is built (or once per argument model, cached), never
per call: LangChain re-reads signatures on every invocation and pays ~300 µs for it.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import json
import re
import types
import warnings
from collections.abc import Callable
from functools import lru_cache
from typing import Annotated, Any, Union, cast, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.fields import FieldInfo

from crew.errors import ToolDefinitionError
from crew.tools.messages import RunContext

_VALID_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_INVALID_RUN = re.compile(r"[^a-zA-Z0-9_-]+")

# Argument models accept and drop extras a model invents (the executor logs them);
# `model_` names are ordinary argument names here, not pydantic internals.
ARGS_CONFIG = ConfigDict(extra="ignore", arbitrary_types_allowed=True, protected_namespaces=())


def args_config(title: str) -> ConfigDict:
    """An argument model's config; its JSON schema's title is the tool's name, as in LangChain."""
    config: ConfigDict = {**ARGS_CONFIG, "title": title}
    return config


@lru_cache(maxsize=4096)  # read on every executor call via ``tool.tool_name``
def sanitize_tool_name(name: str) -> str:
    """The provider-safe spelling of a tool name (``^[a-zA-Z0-9_-]{1,64}$``).

    A valid name is returned unchanged. Otherwise each run of other characters
    becomes one ``_``; a name that had non-ASCII letters, or nothing left, gets a
    short hash of the original so that ``天气`` and ``股票`` stay distinct.
    """
    if _VALID_NAME.match(name):
        return name
    digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:8]
    cleaned = _INVALID_RUN.sub("_", name).strip("_")
    if not cleaned or not name.isascii():
        cleaned = f"{cleaned or 'tool'}_{digest}"
    if len(cleaned) > 64:
        cleaned = f"{cleaned[:55]}_{digest}"
    return cleaned


def is_run_context(annotation: Any) -> bool:
    """True for ``RunContext`` (or a subclass), also inside ``Optional``/``Annotated``."""
    if get_origin(annotation) is Annotated:
        return is_run_context(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        return any(is_run_context(arg) for arg in get_args(annotation))
    return isinstance(annotation, type) and issubclass(annotation, RunContext)


def model_name_for(tool_name: str) -> str:
    """``get weather`` -> ``GetWeatherArgs``: the argument model's class name."""
    words = re.split(r"[^a-zA-Z0-9]+", tool_name)
    stem = "".join(word[:1].upper() + word[1:] for word in words if word)
    return f"{stem or 'Tool'}Args"


def signature_params(fn: Callable[..., Any], tool_name: str) -> tuple[list[inspect.Parameter], frozenset[str]]:
    """The model-visible parameters of ``fn`` (types resolved) and the injected ones.

    Skips ``self``/``cls``, ``*args`` and ``**kwargs``; a parameter typed
    ``RunContext`` is injected by the runtime, never shown to the model.
    """
    try:
        sig = inspect.signature(fn, eval_str=True)
    except (NameError, AttributeError, SyntaxError, TypeError):
        sig = inspect.signature(fn)
    visible: list[inspect.Parameter] = []
    injected: set[str] = set()
    for position, param in enumerate(sig.parameters.values()):
        if position == 0 and param.name in ("self", "cls"):
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if param.kind is param.POSITIONAL_ONLY:  # tools are always called with keyword arguments
            raise ToolDefinitionError(
                f"Tool '{tool_name}': argument '{param.name}' is positional-only, but tools are called "
                f"with keyword arguments; wrap it, e.g. lambda {param.name}: fn({param.name})"
            )
        annotation = param.annotation
        if isinstance(annotation, str):
            annotation = _resolve(annotation, fn, param.name, tool_name)
        if annotation is param.empty:
            annotation = Any
        if is_run_context(annotation):
            injected.add(param.name)
            continue
        visible.append(param.replace(annotation=annotation))
    return visible, frozenset(injected)


def _resolve(text: str, fn: Callable[..., Any], arg: str, tool_name: str) -> Any:
    namespace = dict(getattr(inspect.unwrap(fn), "__globals__", {}))
    try:
        return eval(text, namespace)
    except Exception:  # noqa: BLE001 - eval of a user's hint may raise anything; reported as a definition error
        raise ToolDefinitionError(
            f"Tool '{tool_name}': cannot resolve the type hint {text!r} of argument '{arg}'. "
            "Define that type at module level, or pass args_schema=..."
        ) from None


def annotation_description(annotation: Any) -> str | None:
    """The text of ``Annotated[T, "text"]`` (LangChain's convention), if any."""
    if get_origin(annotation) is Annotated:
        for meta in get_args(annotation)[1:]:
            if isinstance(meta, str):
                return meta
    return None


def _strip_text_metadata(annotation: Any) -> Any:
    if get_origin(annotation) is not Annotated:
        return annotation
    base, *meta = get_args(annotation)
    kept = [m for m in meta if not isinstance(m, str)]
    return Annotated[(base, *kept)] if kept else base


def build_args_model(
    model_name: str,
    params: list[inspect.Parameter],
    *,
    tool_name: str,
    descriptions: dict[str, str] | None = None,
) -> type[BaseModel]:
    """One pydantic field per parameter: no default means required.

    Argument descriptions come from ``Annotated[T, "text"]`` or ``Field(description=)``
    first, then from the docstring's ``Args:`` section.
    """
    descriptions = descriptions or {}
    fields: dict[str, Any] = {}
    for param in params:
        text = annotation_description(param.annotation) or descriptions.get(param.name)
        annotation = _strip_text_metadata(param.annotation)
        default = param.default
        if isinstance(default, FieldInfo):
            info = copy.copy(default)
            if text and not info.description:
                info.description = text
        else:
            # description only when we have one: an explicit None would override the one of
            # ``Annotated[T, Field(description=...)]`` when pydantic merges the two
            extra: dict[str, Any] = {"description": text} if text else {}
            info = Field(**extra) if default is param.empty else Field(default=default, **extra)
        fields[param.name] = (annotation, info)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an argument called `schema` or `json` is fine here
            return create_model(model_name, __config__=args_config(tool_name), **fields)
    except Exception as exc:
        raise ToolDefinitionError(f"Tool '{tool_name}': cannot build its argument schema: {exc}") from exc


# -- rendering for models -------------------------------------------------------------

_DATA_KEYS = frozenset({"default", "enum", "const", "examples", "example"})
_SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions", "patternProperties"})


@lru_cache(maxsize=1024)
def _parameters_json(model: type[BaseModel]) -> str:
    try:
        schema = model.model_json_schema()
    except Exception as exc:
        raise ToolDefinitionError(
            f"The argument model {model.__name__} has no JSON schema ({exc}); "
            "use JSON-compatible argument types or pass args_schema=..."
        ) from exc
    schema = _drop_titles(schema)
    schema.pop("description", None)  # the tool's description already says it
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return json.dumps(schema)


def parameters_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema a model sees for a tool's arguments (titles dropped to save tokens)."""
    return json.loads(_parameters_json(model))


def strict_schema(
    schema: dict[str, Any], root: dict[str, Any] | None = None, expanding: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """OpenAI strict mode: every object lists all its properties as required, no extras.

    Like the openai SDK's own helper, it also drops ``None`` defaults and inlines a
    ``$ref`` that has sibling keywords (``{"$ref": ..., "description": ...}``), both of
    which strict mode rejects.
    """
    if not isinstance(schema, dict):  # pyright: ignore[reportUnnecessaryIsInstance] - callers outside typed code pass anything
        return schema
    root = schema if root is None else root
    ref = schema.get("$ref")
    if isinstance(ref, str) and len(schema) > 1 and ref.startswith("#/") and ref not in expanding:
        siblings = {key: value for key, value in schema.items() if key != "$ref"}
        return strict_schema({**_resolve_ref(root, ref), **siblings}, root, expanding | {ref})
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if not (key == "default" and value is None):
            out[key] = _strict_value(key, value, root, expanding)
    if "properties" in out or (out.get("type") == "object" and "additionalProperties" not in out):
        out["required"] = list(out.get("properties", {}))
        out["additionalProperties"] = False
    return out


def _resolve_ref(root: dict[str, Any], ref: str) -> Any:
    """The schema a local ``#/...`` reference points at (empty when it points nowhere)."""
    target: object = root
    for part in ref[2:].split("/"):
        target = cast("dict[str, object]", target).get(part, {}) if isinstance(target, dict) else {}
    return target


def _strict_value(key: str, value: Any, root: dict[str, Any], expanding: frozenset[str]) -> Any:
    """One keyword's value in strict form: the subschemas it holds made strict, anything else as it is."""
    if key in _SCHEMA_MAPS and isinstance(value, dict):
        subschemas = cast("dict[str, dict[str, Any]]", value)
        return {name: strict_schema(sub, root, expanding) for name, sub in subschemas.items()}
    if key in ("items", "additionalProperties", "not") and isinstance(value, dict):
        return strict_schema(cast("dict[str, Any]", value), root, expanding)
    if key in ("anyOf", "oneOf", "allOf", "prefixItems") and isinstance(value, list):
        return [strict_schema(sub, root, expanding) for sub in cast("list[dict[str, Any]]", value)]
    return value


def _drop_titles(node: Any) -> Any:
    if isinstance(node, list):
        return [_drop_titles(item) for item in cast("list[Any]", node)]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in cast("dict[str, Any]", node).items():
        if key == "title" and isinstance(value, str):
            continue
        if key in _DATA_KEYS:
            out[key] = value
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _drop_titles(sub) for name, sub in cast("dict[str, Any]", value).items()}
        else:
            out[key] = _drop_titles(value)
    return out


@lru_cache(maxsize=1024)
def args_hint(model: type[BaseModel]) -> str:
    """``a (integer, required), unit ("c" or "f", default "c")``: the expected arguments."""
    try:
        schema = parameters_schema(model)
    except ToolDefinitionError:
        return _python_hint(model)
    return hint_for(schema)


def hint_for(schema: dict[str, Any]) -> str:
    """``args_hint`` for a JSON schema given as it is (an MCP server's ``inputSchema``)."""
    required = set(schema.get("required", ()))
    parts: list[str] = []
    for name, prop in schema.get("properties", {}).items():
        state = (
            "required"
            if name in required
            else (f"default {json.dumps(prop['default'], ensure_ascii=False)}" if "default" in prop else "optional")
        )
        parts.append(f"{name} ({type_label(prop)}, {state})")
    return ", ".join(parts) if parts else "none"


def _python_hint(model: type[BaseModel]) -> str:
    parts: list[str] = []
    for name, info in model.model_fields.items():
        kind = getattr(info.annotation, "__name__", None) or str(info.annotation).replace("typing.", "")
        parts.append(f"{info.alias or name} ({kind}, {'required' if info.is_required() else 'optional'})")
    return ", ".join(parts) if parts else "none"


def type_label(prop: dict[str, Any]) -> str:
    """A short human reading of a JSON-schema type (for error messages and hints)."""
    if "$ref" in prop:
        return f"{prop['$ref'].rsplit('/', 1)[-1]} object"
    if "enum" in prop:
        return " or ".join(json.dumps(v, ensure_ascii=False) for v in prop["enum"])
    if "const" in prop:
        return json.dumps(prop["const"], ensure_ascii=False)
    for key in ("anyOf", "oneOf"):
        if key in prop:
            return " or ".join(type_label(sub) for sub in prop[key])
    if len(prop.get("allOf", ())) == 1:
        return type_label(prop["allOf"][0])
    kind = prop.get("type")
    if isinstance(kind, list):
        return " or ".join(type_label({**prop, "type": k}) for k in cast("list[str]", kind))
    if kind == "array":
        items = prop.get("items")
        return f"list of {type_label(cast('dict[str, Any]', items))}" if isinstance(items, dict) and items else "list"
    return kind or "any"
