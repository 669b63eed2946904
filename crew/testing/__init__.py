"""Test crews offline: model doubles and a local OpenAI-compatible server.

- :class:`TestModel` (also the model string ``"test"``): calls every tool once
  with schema-valid arguments, then answers in the task's expected format.
- :class:`FunctionModel`: each turn is decided by your function.
- :func:`openai_server` / :class:`OpenAIServer`: a real HTTP endpoint on
  127.0.0.1 that scripted :class:`Reply` objects answer, so the real litellm
  path (retries, streaming, tool-call parsing) is tested without a network.

The server's names load on first use: the model string ``"test"`` (and ``crew kickoff
--llm test``) needs the models only, not an HTTP server's modules.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from crew.testing.models import FunctionModel, TestModel, approximate_usage
from crew.testing.values import example_value

if TYPE_CHECKING:
    from crew.testing.replies import ChatRequest, Reply
    from crew.testing.server import OpenAIServer, openai_server

__all__ = [
    "ChatRequest",
    "FunctionModel",
    "OpenAIServer",
    "Reply",
    "TestModel",
    "approximate_usage",
    "example_value",
    "openai_server",
]

_LAZY = {
    "ChatRequest": "crew.testing.replies",
    "Reply": "crew.testing.replies",
    "OpenAIServer": "crew.testing.server",
    "openai_server": "crew.testing.server",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'crew.testing' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
