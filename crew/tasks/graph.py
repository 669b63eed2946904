"""The task DAG: built from ``context`` edges (and task order), checked, and measured.

The checks and measures are a few lines of plain Python (Kahn's algorithm, one DFS),
so building a crew costs no networkx import; ``to_networkx()`` hands the graph to
networkx for plotting and analysis. Every method works on task *names*; the crew
resolves objects to names once, so the scheduler's hot loop never touches pydantic models.
"""

from __future__ import annotations

import difflib
import heapq
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from crew.errors import GraphError

if TYPE_CHECKING:
    import networkx as nx

    from crew.tasks.task import Task


def task_names(tasks: Sequence[Task]) -> list[str]:
    """Each task's name: its own, or ``task_<position>`` (1-based) when it has none.

    Raises ``GraphError`` when two tasks end up with the same name.
    """
    names = [task.name or f"task_{i}" for i, task in enumerate(tasks, start=1)]
    seen: dict[str, int] = {}
    errors = []
    for i, name in enumerate(names, start=1):
        if name in seen:
            errors.append(
                f"task name '{name}' is used twice (tasks {seen[name]} and {i}); names must be unique in a crew"
            )
        seen.setdefault(name, i)
    if errors:
        raise GraphError("; ".join(errors), errors=errors)
    return names


class TaskGraph:
    """Which task waits for which, and which outputs each one reads.

    ``deps[name]`` is what a task waits for; ``context[name]`` is whose outputs it is
    given. They differ in the sequential process, where a task waits for the tasks
    before it but, with an explicit ``context``, reads only those (CrewAI's rule).
    Both lists keep the declared order of the tasks.
    """

    def __init__(
        self,
        names: Sequence[str],
        deps: Mapping[str, Sequence[str]],
        context: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.names: list[str] = list(names)
        self.index: dict[str, int] = {name: i for i, name in enumerate(self.names)}
        unknown = sorted({d for ds in deps.values() for d in ds if d not in self.index})
        if unknown:
            raise GraphError(f"unknown tasks in dependencies: {', '.join(unknown)}")
        self.deps: dict[str, list[str]] = {
            n: sorted(set(deps.get(n, ())), key=self.index.__getitem__) for n in self.names
        }
        self.context: dict[str, list[str]] = (
            {n: list(context.get(n, ())) for n in self.names} if context is not None else self.deps
        )
        self.dependants: dict[str, list[str]] = {n: [] for n in self.names}
        for name in self.names:
            for dep in self.deps[name]:
                self.dependants[dep].append(name)
        self._order = self._topological_order()
        self._readers: dict[str, list[str]] | None = None

    @classmethod
    def from_tasks(cls, tasks: Sequence[Task], *, sequential: bool, require_agents: bool = True) -> TaskGraph:
        """Build and check the graph of a crew's tasks; every problem found is reported at once.

        ``sequential``: each task also waits for the tasks declared before it; a run of
        consecutive ``async_execution`` tasks runs side by side (CrewAI's meaning) and the
        next synchronous task waits for all of them. Without an explicit ``context`` a
        sequential task reads every output it waited for.
        """
        names = task_names(tasks)
        explicit = _explicit_context(tasks, names, require_agents)
        if sequential:
            deps, context = _sequential_edges(tasks, names, explicit)
        else:
            deps = {name: explicit[name] or [] for name in names}
            context = deps
        return cls(names, deps, context)

    # -- views -------------------------------------------------------------------------

    def to_networkx(self) -> nx.DiGraph:
        """The graph as a networkx DiGraph (edges point from a task to the tasks that need it)."""
        import networkx as nx

        graph = nx.DiGraph()
        graph.add_nodes_from(self.names)
        graph.add_edges_from((dep, name) for name in self.names for dep in self.deps[name])
        return graph

    @property
    def order(self) -> list[str]:
        """A topological order; among tasks free to go, the one declared first comes first."""
        return list(self._order)

    @property
    def generations(self) -> list[list[str]]:
        """Tasks grouped by depth: each group needs only tasks of earlier groups."""
        depth: dict[str, int] = {}
        for name in self._order:
            depth[name] = 1 + max((depth[d] for d in self.deps[name]), default=-1)
        groups: list[list[str]] = [[] for _ in range(max(depth.values(), default=-1) + 1)]
        for name in self.names:
            groups[depth[name]].append(name)
        return groups

    def _topological_order(self) -> list[str]:
        """Kahn's algorithm with a heap on declared position; a leftover means a cycle."""
        waiting = {n: len(self.deps[n]) for n in self.names}
        ready = [self.index[n] for n in self.names if waiting[n] == 0]
        heapq.heapify(ready)
        order: list[str] = []
        while ready:
            name = self.names[heapq.heappop(ready)]
            order.append(name)
            for dep in self.dependants[name]:
                waiting[dep] -= 1
                if waiting[dep] == 0:
                    heapq.heappush(ready, self.index[dep])
        if len(order) < len(self.names):
            stuck = {n for n, count in waiting.items() if count > 0}
            raise GraphError(
                "tasks depend on each other in a cycle (each one feeds the next): " + " -> ".join(self._cycle(stuck))
            )
        return order

    def _cycle(self, stuck: set[str]) -> list[str]:
        """One cycle among ``stuck`` tasks, in data-flow order, first task repeated at the end."""
        # Every stuck task waits for at least one stuck task, so walking "waits for" edges
        # from any of them must revisit a task: the walk from there on is a cycle.
        node = min(stuck, key=self.index.__getitem__)
        seen: dict[str, int] = {}
        walk: list[str] = []
        while node not in seen:
            seen[node] = len(walk)
            walk.append(node)
            node = next(d for d in self.deps[node] if d in stuck)
        cycle = walk[seen[node] :][::-1]  # waits-for reversed = feeds
        first = min(range(len(cycle)), key=lambda i: self.index[cycle[i]])
        cycle = cycle[first:] + cycle[:first]  # start at the task declared first
        return [*cycle, cycle[0]]

    def descendants(self, name: str) -> set[str]:
        """Every task that waits for ``name``, directly or not."""
        return _reachable(name, self.dependants)

    def readers(self, name: str) -> set[str]:
        """Every task that reads the output of ``name``, directly or through tasks that read it.

        Smaller than ``descendants`` in the sequential process, where a task with an
        explicit ``context`` waits for the tasks before it without reading them all.
        """
        if self._readers is None:
            self._readers = {n: [] for n in self.names}
            for reader in self.names:
                for source in self.context[reader]:
                    self._readers[source].append(reader)
        return _reachable(name, self._readers)

    def remaining(self, weights: Mapping[str, float] | None = None) -> dict[str, float]:
        """For each task, the longest weighted path from its start to the end of the run.

        Weights are estimated durations (1 each by default); this is the scheduler's
        priority: when more tasks are ready than slots, the longest remaining path goes first.
        """
        out: dict[str, float] = {}
        for name in reversed(self._order):
            tail = max((out[d] for d in self.dependants[name]), default=0.0)
            out[name] = _weight(weights, name) + tail
        return out

    def critical_path(self, weights: Mapping[str, float] | None = None) -> list[str]:
        """The chain of tasks with the largest total weight: the run's lower bound on time."""
        if not self.names:
            return []
        remaining = self.remaining(weights)
        node = max((n for n in self.names if not self.deps[n]), key=lambda n: (remaining[n], -self.index[n]))
        path = [node]
        while self.dependants[node]:
            node = max(self.dependants[node], key=lambda n: (remaining[n], -self.index[n]))
            path.append(node)
        return path

    def makespan(self, weights: Mapping[str, float] | None = None, max_concurrency: int | None = None) -> float:
        """Wall time of a zero-overhead run with at most ``max_concurrency`` tasks at once.

        Simulates the scheduler's own policy (start what is ready, longest remaining path
        first), so it is the ideal the real scheduler is measured against. Unbounded
        concurrency gives the critical path's weight.
        """
        remaining = self.remaining(weights)
        waiting = {n: len(self.deps[n]) for n in self.names}
        ready = [(-remaining[n], self.index[n], n) for n in self.names if waiting[n] == 0]
        heapq.heapify(ready)
        running: list[tuple[float, int, str]] = []
        now = 0.0
        slots = max_concurrency or len(self.names) or 1
        while ready or running:
            while ready and len(running) < slots:
                _, idx, name = heapq.heappop(ready)
                heapq.heappush(running, (now + _weight(weights, name), idx, name))
            now = running[0][0]
            while running and running[0][0] == now:
                _, _, name = heapq.heappop(running)
                for dep in self.dependants[name]:
                    waiting[dep] -= 1
                    if waiting[dep] == 0:
                        heapq.heappush(ready, (-remaining[dep], self.index[dep], dep))
        return now


def _explicit_context(tasks: Sequence[Task], names: list[str], require_agents: bool) -> dict[str, list[str] | None]:
    """Each task's ``context`` as names (None: not given); every problem found is reported at once."""
    by_id = {id(task): name for task, name in zip(tasks, names, strict=True)}
    known = set(names)
    errors: list[str] = []
    explicit: dict[str, list[str] | None] = {}
    for task, name in zip(tasks, names, strict=True):
        if require_agents and task.agent is None:
            errors.append(f"task '{name}' has no agent: give it agent=... (only the hierarchical process assigns work)")
        if task.context is None:
            explicit[name] = None
            continue
        refs: list[str] = []
        for ref in task.context:
            resolved = by_id.get(id(ref)) if not isinstance(ref, str) else ref
            problem = _context_problem(name, ref, resolved, known, names)
            if problem is not None:
                errors.append(problem)
            elif resolved is not None:
                refs.append(resolved)
        explicit[name] = refs
    if errors:
        raise GraphError("; ".join(errors), errors=errors)
    return explicit


def _context_problem(name: str, ref: Any, resolved: str | None, known: set[str], names: list[str]) -> str | None:
    """What is wrong with one entry of a task's ``context``, if anything."""
    if resolved is None or resolved not in known:
        label = ref if isinstance(ref, str) else ref.key
        hint = difflib.get_close_matches(label, names, n=1)
        return f"task '{name}' has context task '{label}' that is not in the crew" + (
            f" (did you mean '{hint[0]}'?)" if hint else ""
        )
    if resolved == name:
        return f"task '{name}' lists itself in its context"
    return None


def _sequential_edges(
    tasks: Sequence[Task], names: list[str], explicit: Mapping[str, list[str] | None]
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """What each task waits for and reads in the sequential process.

    Waiting only for the last synchronous task (and the async ones since) is the
    transitive reduction of "wait for everything before": O(n) edges, not O(n^2).
    """
    deps: dict[str, list[str]] = {}
    context: dict[str, list[str]] = {}
    done_before: list[str] = []
    last_sync: list[str] = []
    pending_async: list[str] = []
    for task, name in zip(tasks, names, strict=True):
        waits = last_sync if task.async_execution else last_sync + pending_async
        given = explicit[name]
        deps[name] = list(dict.fromkeys(waits + (given or [])))
        if given is not None:
            context[name] = given
        else:
            context[name] = done_before if task.async_execution else done_before + pending_async
        if task.async_execution:
            pending_async.append(name)
        else:
            done_before = done_before + pending_async + [name]
            last_sync, pending_async = [name], []
    return deps, context


def _reachable(start: str, edges: Mapping[str, Sequence[str]]) -> set[str]:
    out: set[str] = set()
    stack = list(edges[start])
    while stack:
        node = stack.pop()
        if node not in out:
            out.add(node)
            stack.extend(edges[node])
    return out


def _weight(weights: Mapping[str, float] | None, name: str) -> float:
    return 1.0 if weights is None else float(weights.get(name, 1.0))
