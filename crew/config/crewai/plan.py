"""What a CrewAI ``crew.py`` says, as plain data with the line of every piece.

The reader (``reader.py``) fills these from the syntax tree alone; nothing here holds a
live object. Keeping the reading apart from the resolving (``objects.py``) means a
file that cannot be honoured is refused before any project module is imported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

ArgKind = Literal["literal", "agent", "tasks", "tools", "object", "llm", "knowledge", "unreadable"]


@dataclass(frozen=True)
class ToolRef:
    """One item of a ``tools=[...]`` list: ``SerperDevTool()``, ``MyTool(x=1)`` or a name (``search``)."""

    name: str  # the called or named identifier (dotted for ``module.attr``)
    called: bool  # ``X(...)`` rather than ``X``
    kwargs: dict[str, Any]  # literal keyword arguments of the call
    line: int
    source: str  # the expression as written, for messages
    args: tuple[Any, ...] = ()  # literal positional arguments (``SEC10KTool("AMZN")``)

    @property
    def signature(self) -> str:
        """What tells two uses of one tool apart: its arguments."""
        return repr((self.args, sorted(self.kwargs.items())))


@dataclass(frozen=True)
class Arg:
    """One keyword argument of ``Agent(...)``, ``Task(...)`` or ``Crew(...)``.

    ``value`` by kind: literal -> the value; agent -> a method name; tasks -> method
    names; tools -> ToolRefs; object -> an identifier (an output model, a callback);
    llm -> the literal settings of ``LLM(...)``; knowledge -> ``knowledge:`` items (mappings, as
    crew.yaml writes them); unreadable -> the source text.
    """

    kind: ArgKind
    value: Any
    line: int
    source: str = ""


@dataclass
class MemberPlan:
    """One ``@agent`` or ``@task`` method (or an undecorated method returning an Agent)."""

    method: str
    line: int
    config_key: str | None
    config_line: int
    kwargs: dict[str, Arg] = field(default_factory=dict)
    decorated: bool = True


@dataclass(frozen=True)
class Issue:
    """Something the reader noticed: an error (refused) or a warning (ignored), at a line."""

    line: int
    path: str
    message: str
    level: Literal["error", "warning", "note"] = "error"


@dataclass(frozen=True)
class Import:
    """``from module import attr as name`` (``attr`` None for ``import module as name``); level = leading dots."""

    module: str
    attr: str | None
    level: int
    line: int


@dataclass
class CrewPlan:
    """The whole of a ``@CrewBase`` class: agents and tasks in method order, the crew's arguments."""

    file: str  # as displayed in messages
    class_name: str
    line: int
    agents_config: str = "config/agents.yaml"
    tasks_config: str = "config/tasks.yaml"
    agents: list[MemberPlan] = field(default_factory=list)
    tasks: list[MemberPlan] = field(default_factory=list)
    helpers: dict[str, MemberPlan] = field(default_factory=dict)  # undecorated methods returning an Agent
    tool_methods: dict[str, ToolRef] = field(default_factory=dict)  # @tool methods: name -> what they return
    crew: dict[str, Arg] = field(default_factory=dict)
    crew_line: int = 0
    crew_agents: list[str] | None = None  # explicit agents=[self.a(), ...]; None = self.agents
    crew_tasks: list[str] | None = None
    imports: dict[str, Import] = field(default_factory=dict)
    assigns: dict[str, Any] = field(default_factory=dict)  # module-level NAME = <ast expr>
    definitions: dict[str, Any] = field(default_factory=dict)  # module-level class and def nodes by name
    class_attrs: dict[str, Any] = field(default_factory=dict)  # `llm = LLM(...)` in the class body, for self.llm
    attrs_read: set[str] = field(default_factory=set)  # the class attributes a keyword reads
    issues: list[Issue] = field(default_factory=list)

    def error(self, line: int, path: str, message: str) -> None:
        self.issues.append(Issue(line, path, message))

    def warn(self, line: int, path: str, message: str) -> None:
        self.issues.append(Issue(line, path, message, "warning"))
