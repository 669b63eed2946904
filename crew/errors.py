"""Every exception type crew raises on purpose, in one place, as one tree.

Callers catch ``CrewError`` for anything crew-specific; the CLI turns the user-facing ones
(``ConfigError`` and friends) into a one-line message and exit 2. This module imports nothing
of crew, so every layer can raise and catch these::

    CrewError
    ├── ToolDefinitionError (ValueError)    a tool declared wrongly
    ├── ToolArgumentsError (ValueError)     arguments that do not match a tool's schema
    ├── ToolException                       a tool's failure, shown to the model
    │   └── DelegationError                 a coworker's delegated run failed
    ├── AmbiguousCall (ValueError)          an approval by a call id several tasks share
    ├── ServeInputError (ValueError)        a served crew called with inputs its schema refuses
    ├── LLMError                            a model call failed for good
    ├── RedirectRefused                     a model server redirected a call to another origin
    ├── ConfigError                         a crew definition is invalid (before any model call)
    │   ├── MissingInputError               a {placeholder} without a value
    │   ├── GraphError                      a cycle, an unknown context task, a task without agent
    │   ├── StoreError                      a run store that cannot be used
    │   ├── FlowDefinitionError             a flow declared wrongly (a trigger no step or label names)
    │   ├── FlowStateError                  a flow's state does not validate (the field named)
    │   ├── KnowledgeSourceError            a knowledge source that cannot be read (file, line, page)
    │   ├── SearchIndexError                a search/memory file that cannot be used as asked
    │   │   └── EmbedderMismatchError       a collection embedded by another embedder
    │   └── NotShippableError               part of a crew cannot be pickled for Ray
    ├── MCPStartupError                     an MCP server did not start or shake hands
    ├── TaskTimeoutError (TimeoutError)     a task or agent ran past its time limit
    ├── TaskPaused                          a task waits for a person's approval
    ├── TaskFailedError                     a task failed for good (inside the scheduler)
    ├── GuardrailError                      a guardrail kept rejecting an output
    ├── CrewRunError                        a run stopped because a task failed
    │   └── BudgetExceededError             a run reached max_tokens or max_cost
    ├── AgentError                          no usable final answer
    │   └── OutputValidationError (ValueError)  still not the task's output model after re-asks
    ├── RunStopped                          a run stopped before a model call
    └── FlowError                           a flow run stopped (its step, state and run id kept)
        ├── FlowStepError                   a step raised
        ├── FlowStepLimitError              a flow ran max_steps step runs (a loop that never ends)
        ├── FlowBudgetExceededError         a flow's crews spent its max_tokens or max_cost
        │                                   (also a BudgetExceededError, as a crew's)
        └── FlowPaused                      a step waits for a person's answer (``Flow.ask``)

    FlowRouteWarning (UserWarning)          a router chose a label nothing waits for
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


class DelegationError(ToolException):
    """A coworker's run failed; ``output`` is its failed TaskOutput, with the usage it had spent.

    The manager reads the message as the tool's observation (``ToolResult.raw`` keeps this
    exception); the spent tokens are in the run's ledger already.
    """

    def __init__(self, message: str, *, output: Any) -> None:
        super().__init__(message)
        self.output = output


class AmbiguousCall(CrewError, ValueError):
    """A decision given by a call id that calls of several tasks share, without naming the task.

    Applied to whichever task asked first, it could approve a call nobody looked at, or
    leave the other one waiting again without a word: it is refused instead.
    """

    def __init__(self, message: str, *, call_id: str, tasks: list[str]) -> None:
        super().__init__(message)
        self.call_id = call_id
        self.tasks = tasks


class ServeInputError(CrewError, ValueError):
    """A served crew (``crew serve``) was called with inputs that do not fit its input schema.

    ``problems`` maps each offending input to what is wrong with it; the message names them
    all, so an MCP client, an A2A peer or a web app can show it as it is.
    """

    def __init__(self, message: str, *, crew: str, problems: dict[str, str] | None = None):
        super().__init__(message)
        self.crew = crew
        self.problems = problems or {}


class LLMError(CrewError):
    """A model call failed for good (retries spent, bad request, auth...)."""

    def __init__(self, message: str, *, model: str | None = None):
        super().__init__(message)
        self.model = model


class RedirectRefused(CrewError):
    """A model server answered a call with a redirect to another origin, which crew does not follow.

    Following it would re-send the call's headers (the API key, ``extra_headers``) to a host the
    user never named. Raised inside an attempt; the call then fails with an ``LLMError`` saying so.
    """


class ConfigError(CrewError):
    """A crew definition (Python or YAML) is invalid; raised before any model call."""

    def __init__(self, message: str, *, errors: list[str] | None = None):
        super().__init__(message)
        self.errors = errors or [message]


class MissingInputError(ConfigError):
    """A ``{placeholder}`` has no value in the kickoff inputs."""


class GraphError(ConfigError):
    """The task graph is invalid: a cycle, an unknown context task, a task without agent."""


class NotShippableError(ConfigError):
    """Part of a crew cannot be pickled, so it cannot run on Ray workers."""


class MCPStartupError(CrewError):
    """A server could not be started or did not complete the handshake; names the command or URL."""

    def __init__(self, message: str, *, server: str, stderr: str = "") -> None:
        super().__init__(message)
        self.server = server
        self.stderr = stderr


class TaskTimeoutError(CrewError, TimeoutError):
    """A task or an agent ran past its time limit."""


class TaskPaused(CrewError):
    """A task waits for a person's approval of a tool call; ``checkpoint`` (a
    ``crew.agent.checkpoint.TaskCheckpoint``) says where it stopped."""

    def __init__(self, checkpoint: Any) -> None:
        calls = ", ".join(f"{p.tool} ({p.call_id})" for p in checkpoint.pending)
        super().__init__(f"task '{checkpoint.task}' waits for approval of {calls}")
        self.checkpoint = checkpoint


class TaskFailedError(CrewError):
    """A task failed for good; ``output`` is its failed TaskOutput, ``__cause__`` the reason.

    Raised inside the scheduler; a run reports it as a ``CrewRunError`` (or, on a stream, as
    the ``crew.stream.TaskFailed`` event).
    """

    def __init__(self, output: Any):
        super().__init__(output.error or f"task '{output.name}' failed")
        self.output = output


class GuardrailError(CrewError):
    """The guardrail kept rejecting a task's output after all its retries."""


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


class KnowledgeSourceError(ConfigError):
    """A knowledge source cannot be read: a missing file, a PDF that is encrypted or has no text,
    a CSV or JSON that does not parse, a text that is not UTF-8, a path leaving ``knowledge/``.

    ``source`` names it (the file as given, or ``string '<its first words>'``); ``where`` says where in it (a line,
    a byte offset, a page), or is empty. Raised before the run; nothing of the source is indexed.
    """

    def __init__(self, message: str, *, source: str, where: str = ""):
        super().__init__(message)
        self.source = source
        self.where = where


class SearchIndexError(ConfigError):
    """A search or memory file cannot be used as asked: not a crew index, from a newer crew, no embedder."""


class EmbedderMismatchError(SearchIndexError):
    """A collection's vectors came from another embedder (or dimension); they are never mixed.

    ``recorded`` and ``requested`` are the two embedders' names.
    """

    def __init__(self, message: str, *, recorded: str, requested: str):
        super().__init__(message)
        self.recorded = recorded
        self.requested = requested


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


class FlowDefinitionError(ConfigError):
    """A flow is declared wrongly: a listener's trigger names no step and no router label, a step
    is both a router and something it cannot be, or ``max_steps`` is not a positive number."""


class FlowStateError(ConfigError):
    """A flow's state does not validate against its model; ``field`` names the first field at fault."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class FlowError(CrewError):
    """A flow run stopped before its end: ``step`` is where, ``state`` the state as it was then
    (a copy), ``run_id`` the run (resumable from a run store)."""

    def __init__(self, message: str, *, step: str | None = None, state: Any = None, run_id: str | None = None):
        super().__init__(message)
        self.step = step
        self.state = state
        self.run_id = run_id


class FlowStepError(FlowError):
    """A step of a flow raised; ``__cause__`` is what it raised."""


class FlowStepLimitError(FlowError):
    """A flow reached ``max_steps`` step runs: a router loop that does not end stops here."""


class FlowBudgetExceededError(FlowError, BudgetExceededError):
    """A flow run's crews, together, reached the flow's ``max_tokens`` or ``max_cost``.

    The error crews give (``budget``, ``limit``, ``spent``; caught as ``BudgetExceededError``),
    with the flow's ``step`` that was running, its ``state`` and ``run_id`` (resumable).
    """

    def __init__(
        self,
        message: str,
        *,
        budget: str,
        limit: float,
        spent: Any = None,
        step: str | None = None,
        state: Any = None,
        run_id: str | None = None,
    ) -> None:
        Exception.__init__(self, message)  # both bases' own __init__ would hand each other the message
        self.step, self.state, self.run_id = step, state, run_id
        self.budget, self.limit, self.spent = budget, limit, spent
        self.task: str | None = None
        self.output: Any = None


class FlowPaused(FlowError):
    """A step asked a person (``Flow.ask``) and waits for the answer; ``question`` is what it asked
    and ``call_id`` the approval that ``crew approve`` answers before ``crew resume`` continues."""

    def __init__(self, message: str, *, question: str, call_id: str, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.question = question
        self.call_id = call_id


class FlowRouteWarning(UserWarning):
    """A router returned a label that no listener and no labelled start waits for: the route ends there."""
