"""A stand-in ``crewai`` for importing a project's tool modules when CrewAI is not installed.

A CrewAI project's ``tools/*.py`` start with ``from crewai.tools import BaseTool`` (or
``crewai_tools``, or CrewAI's ``@tool``). To load those tools without CrewAI, the
modules below are put in ``sys.modules`` only while the project's own modules are
imported, and taken out again at once, so a user's real ``crewai`` is never shadowed
and nothing else in the process sees the stand-in. Its ``BaseTool`` has CrewAI's
attribute shape (name, description, args_schema derived from ``_run``, result_as_answer,
max_usage_count, cache_function), which is what the interop adapters read.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import types
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

STAND_INS = frozenset({"crewai", "crewai_tools"})  # the top-level packages stood in for when missing
STAND_IN = "__crew_stand_in__"  # set on every stand-in module, so a real one is never removed by mistake


def _always(_arguments: Any = None, _result: Any = None) -> bool:
    return True


class EnvVar(BaseModel):
    name: str
    description: str = ""
    required: bool = True
    default: str | None = None


class BaseTool(BaseModel, ABC):
    """CrewAI's ``BaseTool`` as a tool author sees it: subclass, set name and description, write ``_run``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str
    description: str
    env_vars: list[EnvVar] = Field(default_factory=list)
    args_schema: Any = None
    description_updated: bool = False
    cache_function: Callable[..., bool] = _always
    result_as_answer: bool = False
    max_usage_count: int | None = None
    current_usage_count: int = 0
    package_dependencies: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _default_args_schema(self) -> BaseTool:
        if self.args_schema is None or self.args_schema is BaseModel:
            self.args_schema = _schema_of(self._source(), self.name)
        return self

    def _source(self) -> Callable[..., Any]:
        return type(self)._run

    @abstractmethod
    def _run(self, *args: Any, **kwargs: Any) -> Any:
        """The tool's work (CrewAI's contract)."""

    def run(self, *args: Any, **kwargs: Any) -> Any:
        self.current_usage_count += 1
        return self._run(*args, **kwargs)


class Tool(BaseTool):
    """What CrewAI's ``@tool`` makes of a function."""

    func: Callable[..., Any]

    def _source(self) -> Callable[..., Any]:
        return self.func

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)


def tool(*args: Any, result_as_answer: bool = False, max_usage_count: int | None = None) -> Any:
    """CrewAI's ``@tool``, ``@tool("Name")`` and ``@tool("Name", result_as_answer=True)``."""

    def make(name: str, func: Callable[..., Any]) -> Tool:
        if not func.__doc__:
            raise ValueError(f"tool '{name}': the function must have a docstring (CrewAI's rule)")
        return Tool(
            name=name,
            description=func.__doc__.strip(),
            func=func,
            result_as_answer=result_as_answer,
            max_usage_count=max_usage_count,
        )

    if len(args) == 1 and callable(args[0]):
        return make(args[0].__name__, args[0])
    if len(args) == 1 and isinstance(args[0], str):
        return lambda func: make(args[0], func)
    if not args:
        return lambda func: make(func.__name__, func)
    raise ValueError("@tool takes a function, or a name and then decorates a function")


def _schema_of(fn: Callable[..., Any], name: str) -> type[BaseModel]:
    from crew.tools.schema import build_args_model, model_name_for, signature_params

    params, _ = signature_params(fn, name)
    return build_args_model(model_name_for(name), params, tool_name=name)


def _module(name: str, **attrs: Any) -> types.ModuleType:
    module = types.ModuleType(name, "crew's stand-in for CrewAI (active only while a project's tools are imported)")
    module.__dict__.update(attrs)
    setattr(module, STAND_IN, True)
    module.__path__ = []  # a package, so its submodules import
    # a spec, so importlib.util.find_spec answers (rather than raising) while a stand-in is in sys.modules
    module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
    return module


def stand_in_modules(*, force: bool = False) -> dict[str, types.ModuleType]:
    """The modules to alias: ``crewai`` (with ``crewai.tools``) and ``crewai_tools``, each only if not installed.

    ``force`` gives the ``crewai`` ones even when CrewAI is installed: a flow project run by
    ``crew kickoff`` runs on crew's stand-ins throughout (``flow_compat.py``).
    """
    out: dict[str, types.ModuleType] = {}
    shared = {"BaseTool": BaseTool, "tool": tool, "Tool": Tool, "EnvVar": EnvVar}
    if force or importlib.util.find_spec("crewai") is None:
        tools = _module("crewai.tools", **shared)
        out.update(
            {
                "crewai": _module("crewai", tools=tools),
                "crewai.tools": tools,
                "crewai.tools.base_tool": _module("crewai.tools.base_tool", **shared),
            }
        )
    if importlib.util.find_spec("crewai_tools") is None:
        out["crewai_tools"] = _module("crewai_tools", BaseTool=BaseTool, tool=tool, EnvVar=EnvVar)
    return out


@contextmanager
def crewai_alias() -> Iterator[None]:
    """Stand-ins for the missing CrewAI modules in ``sys.modules`` for the duration of the block only."""
    modules = {name: module for name, module in stand_in_modules().items() if name not in sys.modules}
    sys.modules.update(modules)
    try:
        yield
    finally:
        for name, module in modules.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
