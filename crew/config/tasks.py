"""Tasks: who does them and which outputs they read, checked with their lines.

The scheduler's graph checks would find the same mistakes, but only by task name;
checking the names here first points at the exact ``context`` entry that is wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from crew.common.keywords import did_you_mean
from crew.config.build import Builder
from crew.config.entries import Entry, key_path, type_name
from crew.config.loader import YamlList


def build_tasks(
    builder: Builder, entries: list[Entry], agents: dict[str, Any], agent_names: set[str], process: Any
) -> list[Any]:
    """The tasks in declared order; each problem is reported, and broken tasks left out."""
    from crew.tasks.task import Task

    process = str(getattr(process, "value", process))
    edges: dict[str, list[tuple[str, Entry, int]]] = {}
    tasks: list[Any] = []
    for position, entry in enumerate(entries):
        fields = builder.check_keys(entry, "task")
        if fields is None:
            continue
        builder.collect_placeholders(entry, "task")
        kwargs, ok = builder.kwargs_for(entry, "task", fields)
        good, agent = _agent(builder, entry, agents, agent_names, hierarchical=process == "hierarchical")
        if agent is not None:
            kwargs["agent"] = agent
        ok = ok and good
        if "context" in entry.data:
            refs = _context(builder, entries, position, sequential=process == "sequential")
            if refs is None:
                ok = False
            else:
                kwargs["context"] = [name for name, _ in refs]
                edges[entry.name] = [(name, entry, line) for name, line in refs]
        output_file = kwargs.get("output_file")
        if builder.out_dir is not None and isinstance(output_file, str) and not Path(output_file).is_absolute():
            kwargs["output_file"] = str(builder.out_dir / output_file)
        kwargs.setdefault("name", entry.name)
        task = builder.construct(entry, Task, kwargs)  # even after an error: it reports the rest
        if task is not None and ok:
            tasks.append(task)
    _cycles(builder, edges)
    return tasks


def _agent(
    builder: Builder, entry: Entry, agents: dict[str, Any], agent_names: set[str], *, hierarchical: bool
) -> tuple[bool, Any]:
    """(ok, the Agent or None): no agent is fine only in the hierarchical process."""
    name = entry.data.get("agent")
    if name is None:
        if not hierarchical:
            listed = f"; agents: {', '.join(sorted(agent_names))}" if agent_names else ""
            builder.error(entry, "", f"no `agent:` (only the hierarchical process assigns tasks itself){listed}")
        return hierarchical, None
    if not isinstance(name, str) or name not in agent_names:
        builder.error(entry, "agent", f"unknown agent {name!r}{did_you_mean(name, agent_names)}")
        return False, None
    return name in agents, agents.get(name)  # not in agents: the agent itself is broken (already reported)


def _context(
    builder: Builder, entries: list[Entry], position: int, *, sequential: bool
) -> list[tuple[str, int]] | None:
    """The valid (name, line) references of a task's ``context``, or None after an error."""
    entry = entries[position]
    context = entry.data["context"]
    if context is None:
        return []
    if not isinstance(context, list):
        builder.error(entry, "context", f"expected a list of task names, got {type_name(context)}")
        return None
    names = [e.name for e in entries]
    refs: list[tuple[str, int]] = []
    ok = True
    for i, ref in enumerate(context):
        line = context.line_of(i) if isinstance(context, YamlList) else entry.line_of("context")
        path = key_path(entry.path, "context", i)
        if not isinstance(ref, str) or ref not in names:
            builder.problems.add(
                entry.file_of("context"), line, path, f"unknown task {ref!r}{did_you_mean(ref, names)}"
            )
            ok = False
        elif ref == entry.name:
            builder.problems.add(entry.file_of("context"), line, path, "a task cannot use its own output as context")
            ok = False
        elif sequential and _waits_for(entries, names.index(ref), position):
            builder.problems.add(
                entry.file_of("context"),
                line,
                path,
                f"'{ref}' is declared after '{entry.name}' and waits for it in the sequential process "
                "(move it up, or use process: graph)",
            )
            ok = False
        elif any(ref == seen for seen, _ in refs):  # harmless, but likely a slip for another task
            builder.problems.add(
                entry.file_of("context"), line, path, f"'{ref}' is listed twice; it is read once", "warning"
            )
        else:
            refs.append((ref, line))
    return refs if ok else None


def _waits_for(entries: list[Entry], later: int, earlier: int) -> bool:
    """Sequential process: whether task ``later`` waits for task ``earlier``.

    It does unless both sit in one run of consecutive ``async_execution`` tasks, which
    start side by side (CrewAI's meaning).
    """
    if later <= earlier:
        return False
    return not all(_is_async(e) for e in entries[earlier : later + 1])


def _is_async(entry: Entry) -> bool:
    return isinstance(entry.data, dict) and entry.data.get("async_execution") is True


def _cycles(builder: Builder, edges: dict[str, list[tuple[str, Entry, int]]]) -> None:
    """Report each dependency cycle once, at the context entry that closes it."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
    stack: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        stack.append(name)
        for dep, entry, line in edges.get(name, ()):
            if state.get(dep) == 1:
                cycle = " -> ".join(reversed([*stack[stack.index(dep) :], dep]))
                builder.problems.add(
                    entry.file_of("context"),
                    line,
                    key_path(entry.path, "context"),
                    f"tasks depend on each other in a cycle: {cycle}",
                )
            elif dep not in state:
                visit(dep)
        stack.pop()
        state[name] = 2

    for name in edges:
        if name not in state:
            visit(name)
