"""The ``crewai`` a CrewAI flow project's ``main.py`` and crew files import, while ``crew kickoff`` runs it.

A flow project says ``from crewai.flow.flow import Flow, listen, start``, and each of its
crews ``from crewai import Agent, Crew, Process, Task`` and ``from crewai.project import
CrewBase, agent, crew, task``. ``flow_namespace(make_crew)`` puts modules under those names
in ``sys.modules`` for the duration of one block, in place of a real ``crewai`` too (the
project runs on crew: its flow is ``crew.flow``, its crews are the crew folders crew
reads), and puts back what was there when the block ends: a user's own process importing
crew never sees them, and an installed crewai is shadowed only inside that window.

What is served is the table ``SERVED``; ``refusal(module, name)`` says why another name is
not (``crew kickoff`` checks every ``from crewai... import`` of the project against it before
anything runs). ``SomeCrew().crew()`` is the crew folder of ``SomeCrew``'s file, built by
``make_crew`` (the CLI's loader: the run's model, its dry tools) and kicked off as crew's
own ``Crew``: the crew file itself is read by crew (``crew/config/crewai/reader.py``), and its
methods are never run.
"""

from __future__ import annotations

import enum
import importlib.abc
import importlib.machinery
import inspect
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from crew.config.crewai.compat import STAND_IN, stand_in_modules
from crew.errors import ConfigError

CrewMaker = Callable[[Path, "dict[str, Any] | None"], Any]
"""Builds the crew of a crew folder for one kickoff's inputs (the CLI passes its loader)."""

_FLOW_NAMES = ("Flow", "FlowState", "start", "listen", "router", "or_", "and_", "persist")

_FEEDBACK = ("human_feedback", "HumanFeedbackResult")  # crewai.flow's and crewai.flow.human_feedback's

SERVED: dict[str, tuple[str, ...]] = {
    "crewai": ("Agent", "Crew", "Task", "Process", "LLM", "Flow"),
    "crewai.flow": (*_FLOW_NAMES, *_FEEDBACK),
    "crewai.flow.flow": _FLOW_NAMES,
    "crewai.flow.persistence": ("persist",),
    "crewai.flow.human_feedback": _FEEDBACK,
    "crewai.project": ("CrewBase", "agent", "task", "crew"),
}
"""Every ``crewai`` module a flow project may import from, and the names crew serves in it."""

_TOOL_MODULES = ("crewai.tools", "crewai.tools.base_tool")  # served by compat.py, as for a crew's tools


def refusal(module: str, name: str | None) -> str | None:
    """Why ``from module import name`` (``import module`` when name is None) is not served; None when it is."""
    if module in _TOOL_MODULES or module.split(".")[0] != "crewai":
        return None
    if module not in SERVED:
        served = ", ".join(sorted(SERVED))
        return f"`{module}` is CrewAI API that crew does not have (a flow project may import from {served})"
    if name is not None and name != "*" and name not in SERVED[module]:
        return (
            f"`{name}` of `{module}` is CrewAI API that crew does not have "
            f"(crew serves {', '.join(SERVED[module])} there)"
        )
    return None


# -- the crews ----------------------------------------------------------------------------------------------


class Process(enum.StrEnum):
    """CrewAI's ``Process``: what a crew file's ``process=Process.sequential`` names (crew reads it statically)."""

    sequential = "sequential"
    hierarchical = "hierarchical"


class _Declared:
    """``Agent(...)``, ``Task(...)``, ``Crew(...)`` and ``LLM(...)`` in a crew file: crew reads those calls
    from the file itself; made at import time (``llm = LLM(model=...)`` in a class body), they only keep
    their arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args, self.kwargs = args, kwargs

    def __repr__(self) -> str:
        return f"{type(self).__name__}(**{self.kwargs!r})"


class Agent(_Declared):
    pass


class Task(_Declared):
    pass


class LLM(_Declared):
    pass


class Crew(_Declared):
    """A ``Crew(...)`` built by the flow's own code, not by a ``@CrewBase`` class: crew cannot run it."""

    def kickoff(self, *args: Any, **kwargs: Any) -> Any:
        raise ConfigError(_SCRIPTED_CREW)

    kickoff_async = kickoff_for_each = kickoff


_SCRIPTED_CREW = (
    "a Crew(...) built by the flow's own code: crew runs the crews of @CrewBase classes (a crew folder with "
    "config/agents.yaml and config/tasks.yaml); move this one into such a folder"
)


class ProjectCrew:
    """What ``SomeCrew().crew()`` returns: the crew folder of ``SomeCrew``, run by crew."""

    def __init__(self, folder: Path, make: CrewMaker, name: str) -> None:
        self.folder, self._make, self.name = folder, make, name

    def _crew(self, inputs: dict[str, Any] | None = None) -> Any:
        return self._make(self.folder, inputs)

    def kickoff(self, inputs: dict[str, Any] | None = None) -> Any:
        return self._crew(inputs).kickoff(inputs or {})

    async def kickoff_async(self, inputs: dict[str, Any] | None = None) -> Any:
        return await self._crew(inputs).kickoff_async(inputs or {})

    def kickoff_for_each(self, inputs: list[dict[str, Any]]) -> list[Any]:
        return [self.kickoff(each) for each in inputs]

    async def kickoff_for_each_async(self, inputs: list[dict[str, Any]]) -> list[Any]:
        return [await self.kickoff_async(each) for each in inputs]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._crew(), name)  # agents, tasks ... of the crew crew reads


def _member(kind: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``@agent`` and ``@task``: crew builds the members from the crew folder; calling one is refused."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        def refused(self: Any, *args: Any, **kwargs: Any) -> Any:
            raise ConfigError(
                f"{type(self).__name__}.{fn.__name__}(): crew builds a @CrewBase crew's {kind}s from its folder "
                "and never runs their methods; call .crew() and kick it off"
            )

        refused.__name__, refused.__qualname__ = fn.__name__, fn.__qualname__
        refused.__dict__["__crewai_member__"] = kind
        return refused

    return decorate


agent = _member("agent")
task = _member("task")


def crew(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``@crew``: marks the method; ``@CrewBase`` makes it return the folder's crew."""
    fn.__dict__["__crewai_member__"] = "crew"
    return fn


def _crewbase(make: CrewMaker) -> Callable[[type], type]:
    def CrewBase(cls: type) -> type:
        """CrewAI's ``@CrewBase``: the class stands for the crew folder of its file."""
        folder = Path(inspect.getfile(cls)).resolve().parent
        method = next(
            (name for name, v in vars(cls).items() if getattr(v, "__crewai_member__", None) == "crew"), "crew"
        )

        def build(self: Any) -> ProjectCrew:
            return ProjectCrew(folder, make, cls.__name__)

        build.__name__ = method
        setattr(cls, method, build)
        return cls

    return CrewBase


# -- the namespace ------------------------------------------------------------------------------------------


def _module(name: str, attrs: dict[str, Any]) -> types.ModuleType:
    module = types.ModuleType(name, "crew's stand-in for CrewAI, served while `crew kickoff` runs a flow project")
    module.__dict__.update(attrs)
    module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
    module.__path__ = []
    setattr(module, STAND_IN, True)
    return module


def _flow_names() -> dict[str, Any]:
    import crew.flow as flow

    return {name: getattr(flow, name) for name in (*_FLOW_NAMES, *_FEEDBACK) if hasattr(flow, name)}


def namespace_modules(make: CrewMaker) -> dict[str, types.ModuleType]:
    """The ``crewai`` modules of a flow project's run (``crewai_tools`` only when it is not installed)."""
    flow = _flow_names()
    project = {"CrewBase": _crewbase(make), "agent": agent, "task": task, "crew": crew}
    members = {"Agent": Agent, "Crew": Crew, "Task": Task, "Process": Process, "LLM": LLM}
    tools = {k: v for k, v in stand_in_modules(force=True).items() if k.startswith("crewai.") or k == "crewai_tools"}
    feedback = {name: flow[name] for name in _FEEDBACK if name in flow}
    modules = {
        "crewai.flow.flow": _module("crewai.flow.flow", {k: v for k, v in flow.items() if k in _FLOW_NAMES}),
        "crewai.flow.persistence": _module("crewai.flow.persistence", {"persist": flow.get("persist")}),
        "crewai.flow.human_feedback": _module("crewai.flow.human_feedback", feedback),
        "crewai.project": _module("crewai.project", project),
        **tools,
    }
    modules["crewai.flow"] = _module(
        "crewai.flow",
        {
            **flow,
            "flow": modules["crewai.flow.flow"],
            "persistence": modules["crewai.flow.persistence"],
            "human_feedback": feedback.get("human_feedback"),  # the decorator, as CrewAI's package exports it
        },
    )
    top = {**members, "Flow": flow.get("Flow"), "flow": modules["crewai.flow"], "project": modules["crewai.project"]}
    if "crewai.tools" in modules:
        top["tools"] = modules["crewai.tools"]
    modules["crewai"] = _module("crewai", top)
    return modules


class CrewFiles(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """The project's crew files imported as their ``@CrewBase`` classes, without running the files.

    ``from .crews.poem_crew.poem_crew import PoemCrew`` gets a class whose ``crew()`` is the
    folder's crew: the file's module-level code (``llm = ChatOpenAI(...)``, ``SerperDevTool()``,
    imports of packages a dry run does not need) never runs, since crew reads the file instead.
    Any other name of the module (a pydantic model defined beside the crew) runs the real file then.
    """

    def __init__(self, files: dict[str, tuple[Path, list[str]]], make: CrewMaker) -> None:
        self.files, self.make = files, make  # module name -> (file, its @CrewBase class names)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.files:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, origin=str(self.files[fullname][0]))

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        file, classes = self.files[module.__name__]
        module.__file__ = str(file)
        for name in classes:
            setattr(module, name, _crew_class(name, module.__name__, file.parent, self.make))
        real: dict[str, types.ModuleType] = {}

        def __getattr__(name: str) -> Any:
            if name.startswith("__"):
                raise AttributeError(name)
            if "module" not in real:
                real["module"] = _run_file(module.__name__, file)
            return getattr(real["module"], name)

        module.__dict__["__getattr__"] = __getattr__


def _crew_class(name: str, module: str, folder: Path, make: CrewMaker) -> type:
    def build(self: Any) -> ProjectCrew:
        return ProjectCrew(folder, make, name)

    return type(name, (), {"crew": build, "__module__": module, "__doc__": f"The crew folder {folder.name}."})


def _run_file(name: str, file: Path) -> types.ModuleType:
    """The crew file run for real, under its own name's package (its relative imports work)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def flow_namespace(make: CrewMaker, crew_files: dict[str, tuple[Path, list[str]]] | None = None) -> Iterator[None]:
    """The flow project's ``crewai`` in ``sys.modules`` for the block; whatever was there before, back after it.

    ``crew_files`` (module name -> file and its ``@CrewBase`` classes) are imported as
    ``CrewFiles`` says while the block lasts.
    """
    modules = namespace_modules(make)
    covered = [n for n in list(sys.modules) if n == "crewai" or n.startswith("crewai.") or n in modules]
    saved = {name: sys.modules.pop(name) for name in covered}
    sys.modules.update(modules)
    finder = CrewFiles(crew_files or {}, make)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for name in [n for n in list(sys.modules) if n == "crewai" or n.startswith("crewai.") or n in modules]:
            del sys.modules[name]
        sys.modules.update(saved)


__all__ = ["SERVED", "CrewMaker", "ProjectCrew", "flow_namespace", "namespace_modules", "refusal"]
