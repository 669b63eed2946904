"""Checking a final answer against the task's ``output_pydantic`` / ``output_json`` model.

Models wrap JSON in code fences, put a sentence before it or use single quotes; the
reading here tolerates all of that, and a real mismatch produces a short list of
problems (``- items.0.price: Input should be a valid number``) that the agent loop
sends back to the model for another try.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ValidationError

from crew.agent.text_protocol import NO_JSON, parse_json_lenient

MAX_OUTPUT_RETRIES = 2
"""How many times a model is re-asked after a final answer that does not validate."""


class OutputProblem(ValueError):
    """A final answer that does not fit the output model; the text is meant for the model."""


def output_model(task: Any) -> tuple[type[BaseModel], str] | None:
    """The model a task's answer must fit and the field that asked for it, if any."""
    if getattr(task, "output_pydantic", None) is not None:
        return task.output_pydantic, "output_pydantic"
    if getattr(task, "output_json", None) is not None:
        return task.output_json, "output_json"
    return None


@lru_cache(maxsize=256)
def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema shown to the model (computed once per output model)."""
    return model.model_json_schema()


def parse_output(text: str, model: type[BaseModel]) -> BaseModel:
    """Read the first JSON value in ``text`` and validate it; ``OutputProblem`` says what is wrong."""
    value = parse_json_lenient(text)
    if value is NO_JSON:
        raise OutputProblem("- the answer contains no JSON object")
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise OutputProblem(describe_errors(exc)) from None


def describe_errors(exc: ValidationError, limit: int = 8) -> str:
    """One line per problem, with the path into the JSON, capped to keep the re-ask short."""
    lines = []
    for error in exc.errors()[:limit]:
        path = ".".join(str(part) for part in error["loc"]) or "(root)"
        lines.append(f"- {path}: {error['msg']}")
    if len(exc.errors()) > limit:
        lines.append(f"- ... and {len(exc.errors()) - limit} more")
    return "\n".join(lines)
