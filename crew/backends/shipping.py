"""Can this crew be sent to another process? A clear answer naming the part that cannot.

Ray pickles what it sends (cloudpickle). A tool holding an open connection, a lock or a
file handle cannot travel; rather than Ray's traceback deep inside pickle, the user gets
which tool (of which agent or task) and which of its fields, and what to do about it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from crew.errors import NotShippableError

Dumps = Callable[[Any], bytes]


_HINT = (
    "open such resources inside the tool when it runs (e.g. in _run, or lazily on first use) "
    "instead of holding them on the tool, or run with backend='local'"
)


def check_no_servers(crew: Any) -> None:
    """``NotShippableError`` naming every agent that has MCP servers: they do not travel to Ray workers.

    A server's connection (a subprocess, a socket, the loop it is bound to) lives in the
    process that opened it, and a worker would need its own for every task; asked before
    anything runs, so no server starts for a run that cannot go on.
    """
    problems = [
        f"agent '{agent.role}' has MCP server '{getattr(server, 'name', server)}', and MCP servers do not travel "
        "to Ray workers (their connections live in the process that opened them)"
        for agent in _agents(crew)
        for server in getattr(agent, "mcp", None) or ()
    ]
    if problems:
        problems[-1] += "; run this crew with backend='local'"
        raise NotShippableError("\n".join(problems), errors=problems)


def check_shippable(crew: Any, dumps: Dumps) -> bytes:
    """The pickled crew, or ``NotShippableError`` naming every MCP server, tool and part that cannot travel."""
    check_no_servers(crew)
    try:
        return dumps(crew)
    except Exception as exc:  # noqa: BLE001 - whatever pickle raises, we explain it below
        whole = f"{type(exc).__name__}: {exc}"
    problems: list[str] = []
    for where, tool in _tools(crew):
        reason = _why(tool, dumps)
        if reason is not None:
            problems.append(f"tool '{tool.name}' ({where}) cannot be sent to Ray workers: {reason}")
    if not problems:
        for where, part in _parts(crew):
            reason = _why(part, dumps)
            if reason is not None:
                problems.append(f"{where} cannot be sent to Ray workers: {reason}")
    if not problems:
        problems.append(f"the crew cannot be sent to Ray workers: {whole}")
    problems[-1] += f"; {_HINT}"
    raise NotShippableError(problems[0] if len(problems) == 1 else "\n".join(problems), errors=problems)


def register_local_modules(crew: Any, register: Callable[[Any], None]) -> None:
    """Have cloudpickle send by value the modules a crew's code comes from when workers could
    not import them by name (a crew folder's ``tools.py``, a script's helpers); installed
    packages and crew itself still travel by reference."""
    seen: set[str] = set()
    for obj in _code(crew):
        name = getattr(obj, "__module__", None)
        if not isinstance(name, str) or name in seen or name == "__main__" or name.split(".")[0] == "crew":
            continue
        seen.add(name)
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if module is not None and path and not _installed(Path(path)):
            register(module)


def _code(crew: Any) -> Iterator[Any]:
    """The functions and classes a crew's parts are made of (theirs, and their types)."""
    for _, tool in _tools(crew):
        yield from (type(tool), getattr(tool, "func", None), getattr(tool, "coroutine", None))
    for _, part in _parts(crew):
        if part is not None:
            yield part if callable(part) and not isinstance(part, BaseModel) else type(part)
            yield getattr(part, "fn", None)  # a FunctionModel's function


def _installed(path: Path) -> bool:
    return any(part in ("site-packages", "dist-packages") for part in path.parts)


def _agents(crew: Any) -> list[Any]:
    return crew.all_agents(with_manager=True)


def _tools(crew: Any) -> Iterator[tuple[str, Any]]:
    for agent in _agents(crew):
        for tool in agent.tools:
            yield f"agent '{agent.role}'", tool
    for task in crew.tasks:
        for tool in task.tools or ():
            yield f"task '{task.name or task.description[:40]}'", tool


def _parts(crew: Any) -> Iterator[tuple[str, Any]]:
    for agent in crew.all_agents():
        yield f"the model of agent '{agent.role}'", agent.llm
    for task in crew.tasks:
        label = task.name or task.description[:40]
        for field in ("guardrail", "condition", "callback", "output_pydantic"):
            yield f"the {field} of task '{label}'", getattr(task, field, None)
    for field in ("llm", "manager_llm", "step_callback", "task_callback", "human_feedback", "cache"):
        yield f"the crew's {field}", getattr(crew, field, None)


def _why(obj: Any, dumps: Dumps) -> str | None:
    """None when ``obj`` pickles; else which of its fields does not, and pickle's words."""
    try:
        dumps(obj)
        return None
    except Exception as exc:  # noqa: BLE001
        whole = f"{type(exc).__name__}: {exc}"
    fields: dict[str, Any] = {}
    if isinstance(obj, BaseModel):
        state = obj.__getstate__()  # as pickle sees it (a tool's generated schema travels as a recipe)
        fields.update(state.get("__dict__", {}))
        fields.update({k.lstrip("_"): v for k, v in (state.get("__pydantic_private__") or {}).items()})
    elif hasattr(obj, "__dict__"):
        fields.update(vars(obj))
    for name, value in fields.items():
        try:
            dumps(value)
        except Exception as exc:  # noqa: BLE001
            return f"its field '{name}' holds a {type(value).__module__}.{type(value).__qualname__} ({exc})"
    return whole
