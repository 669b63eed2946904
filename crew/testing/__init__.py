"""Test crews offline: model doubles and a local OpenAI-compatible server.

- :class:`TestModel` (also the model string ``"test"``): calls every tool once
  with schema-valid arguments, then answers in the task's expected format.
- :class:`FunctionModel`: each turn is decided by your function.
- :func:`openai_server` / :class:`OpenAIServer`: a real HTTP endpoint on
  127.0.0.1 that scripted :class:`Reply` objects answer, so the real litellm
  path (retries, streaming, tool-call parsing) is tested without a network.
"""

from crew.testing.models import FunctionModel, TestModel, approximate_usage
from crew.testing.replies import ChatRequest, Reply
from crew.testing.server import OpenAIServer, openai_server
from crew.testing.values import example_value

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
