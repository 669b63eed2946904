"""What turns a user's ``llm=...`` (a string, an LLM, any ChatModel, or nothing) into a ChatModel."""

from __future__ import annotations

from crew.errors import ConfigError
from crew.models.base import ChatModel
from crew.models.doors import model_name_problem
from crew.models.llm import LLM


def as_chat_model(value: str | ChatModel | None, default: str | ChatModel | None = None) -> ChatModel:
    """Whatever a user wrote for ``llm=`` as a ChatModel: ``"test"`` is the offline TestModel.

    Strings name litellm models; LLMs and other ChatModels pass through; ``None``
    falls back to ``default`` and without one is a ConfigError saying what to do.
    """
    if value is None:
        if default is None:
            raise ConfigError(
                "no model given: set llm=... (a litellm model string such as "
                "'openai/gpt-4o-mini'), or run offline with --llm test"
            )
        return as_chat_model(default)
    if isinstance(value, str):
        name = value.strip()
        if name.lower() == "test":
            from crew.testing import TestModel

            return TestModel()
        problem = model_name_problem(name)
        if problem is not None:
            raise ConfigError(f"{problem}: give a model string such as 'openai/gpt-4o-mini'")
        return LLM(name)
    if isinstance(value, ChatModel):  # pyright: ignore[reportUnnecessaryIsInstance] - YAML and untyped callers
        return value
    raise ConfigError(f"llm must be a model string, an LLM or a ChatModel, not {type(value).__name__}")
