"""Every exception type crew raises on purpose, in one place.

Callers catch ``CrewError`` for anything crew-specific; the CLI turns the
user-facing ones (``ConfigError`` and friends) into a one-line message and exit 2.
"""

from __future__ import annotations

from typing import Any


class CrewError(Exception):
    """Base class of crew's own errors."""


class ToolDefinitionError(CrewError, ValueError):
    """A tool was declared wrongly (no description, bad schema, bad limit)."""


class ToolArgumentsError(CrewError, ValueError):
    """Arguments did not match a tool's schema.

    ``problems`` maps each offending argument to what is wrong with it, so the
    executor can hand the model a precise observation.
    """

    def __init__(self, message: str, *, tool: str, problems: dict[str, str] | None = None):
        super().__init__(message)
        self.tool = tool
        self.problems = problems or {}


class ToolException(CrewError):
    """Raise from a tool to report a failure the model should see as an observation."""


class LLMError(CrewError):
    """A model call failed for good (retries spent, bad request, auth...)."""

    def __init__(self, message: str, *, model: str | None = None):
        super().__init__(message)
        self.model = model


class ConfigError(CrewError):
    """A crew definition (Python or YAML) is invalid; raised before any model call."""

    def __init__(self, message: str, *, errors: list[str] | None = None):
        super().__init__(message)
        self.errors = errors or [message]


class MissingInputError(ConfigError):
    """A ``{placeholder}`` has no value in the kickoff inputs."""


class GraphError(ConfigError):
    """The task graph is invalid: a cycle, an unknown context task, a task without agent."""


class TaskTimeoutError(CrewError, TimeoutError):
    """A task or an agent ran past its time limit."""


class CrewRunError(CrewError):
    """A run stopped because a task failed; ``output`` holds the partial CrewOutput."""

    def __init__(self, message: str, *, task: str | None = None, output: Any = None):
        super().__init__(message)
        self.task = task
        self.output = output


class BudgetExceededError(CrewRunError):
    """A run reached its ``max_tokens`` or ``max_cost``: no model call starts past a budget.

    ``budget`` names it ("max_tokens" or "max_cost"), ``limit`` is its value and ``spent``
    the run's ``Usage`` when it stopped; as a ``CrewRunError`` it carries the partial output.
    """

    def __init__(
        self, message: str, *, budget: str, limit: float, spent: Any = None, task: str | None = None, output: Any = None
    ):
        super().__init__(message, task=task, output=output)
        self.budget = budget
        self.limit = limit
        self.spent = spent


class StoreError(ConfigError):
    """A run store cannot be used: not a crew store, corrupt, from a newer crew, or no such run."""


class AgentError(CrewError):
    """An agent could not produce a usable final answer (e.g. an empty reply at max_iter)."""

    def __init__(self, message: str, *, agent: str | None = None, task: str | None = None):
        super().__init__(message)
        self.agent = agent
        self.task = task


class OutputValidationError(AgentError, ValueError):
    """A final answer still did not match ``output_pydantic``/``output_json`` after the re-asks."""


class RunStopped(CrewError):
    """A run was stopped before a model call (``RunScope.stop``, or a hook refusing the call: a budget)."""
