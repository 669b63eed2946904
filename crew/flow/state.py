"""A flow's state: a pydantic model or a dict, and always an ``id``.

CrewAI refuses a state model without an ``id`` field; three of its own example flows declare
none. Here such a model is given one: the state is an instance of a subclass of the user's
model (``isinstance`` still holds) whose ``id`` is a UUID unless the inputs give one.
Validation failures name the field, the value and what was expected.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, Field, ValidationError, create_model

from crew.errors import FlowStateError

__all__ = ["FlowState", "apply_inputs", "dump_state", "initial_state", "load_state"]


def _new_id() -> str:
    return str(uuid.uuid4())


class FlowState(BaseModel):
    """A base for state models that want ``id`` declared (CrewAI's ``FlowState``)."""

    id: str = Field(default_factory=_new_id, description="the flow run's state id (a UUID unless given)")


@lru_cache(maxsize=256)
def _with_id(model: type[BaseModel]) -> type[BaseModel]:
    """``model`` itself when it has an ``id`` field, else a subclass of it that has one."""
    if "id" in model.model_fields:
        return model
    return create_model(  # type: ignore[call-overload, no-any-return]
        model.__name__, __base__=model, __module__=model.__module__, id=(str, Field(default_factory=_new_id))
    )


def initial_state(declared: Any, flow: str) -> BaseModel | dict[str, Any]:
    """The state a new run starts from, built from ``initial_state`` or ``Flow[State]``'s type."""
    if declared is None or declared is dict:
        return {"id": _new_id()}
    if isinstance(declared, type) and issubclass(declared, BaseModel):
        state = _defaults(_with_id(declared), flow)
        if not getattr(state, "id", None):
            state.id = _new_id()  # type: ignore[attr-defined]
        return state
    if isinstance(declared, BaseModel):
        return _validated(_with_id(type(declared)), declared.model_dump(), flow)
    if isinstance(declared, Mapping):
        state = copy.deepcopy(dict(declared))
        state.setdefault("id", _new_id())
        return state
    raise FlowStateError(
        f"flow {flow}: initial_state must be a pydantic model class, an instance of one, or a dict, not {declared!r}",
        field="initial_state",
    )


def apply_inputs(state: BaseModel | dict[str, Any], inputs: Mapping[str, Any], flow: str) -> BaseModel | dict[str, Any]:
    """The state with ``inputs`` set on it (validated against the model); ``state`` is not changed."""
    if isinstance(state, dict):
        return {**state, **inputs}
    return _validated(type(state), {**state.model_dump(), **inputs}, flow)


def load_state(like: BaseModel | dict[str, Any], stored: Mapping[str, Any], flow: str) -> BaseModel | dict[str, Any]:
    """A stored state (JSON, from a run store) back in the shape of ``like``."""
    if isinstance(like, dict):
        return dict(stored)
    return _validated(type(like), dict(stored), flow)


def dump_state(state: BaseModel | dict[str, Any]) -> dict[str, Any]:
    """The state as JSON-able data (what events carry and a run store keeps)."""
    if isinstance(state, BaseModel):
        return state.model_dump(mode="json")
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(state, fallback=repr)  # type: ignore[no-any-return]


def _defaults(model: type[BaseModel], flow: str) -> BaseModel:
    """The model's defaults; fields without one stay unset until the inputs give them (then checked)."""
    try:
        return model()
    except ValidationError as exc:
        if any(error["type"] != "missing" for error in exc.errors()):
            raise _state_error(exc, model, flow) from None
        return model.model_construct()


def _validated(model: type[BaseModel], data: dict[str, Any], flow: str) -> BaseModel:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise _state_error(exc, model, flow) from None


def _state_error(exc: ValidationError, model: type[BaseModel], flow: str) -> FlowStateError:
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "(the state)"
    got = "" if first["type"] == "missing" else f" (got {first.get('input')!r})"
    more = f"; {exc.error_count() - 1} more problem(s)" if exc.error_count() > 1 else ""
    return FlowStateError(
        f"flow {flow}: state field '{field}' of {model.__name__}: {first['msg']}{got}{more}", field=field
    )
