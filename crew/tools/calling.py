"""A tool's arguments validated straight into a dict, without building the model instance.

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

from typing import Any

from pydantic import BaseModel
from pydantic_core import SchemaValidator

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
