"""A kickoff's inputs: checked as a mapping, then filled into the tasks and agents that use them.

Both take plain parts (the agents and the tasks), not a ``Crew``, so everything that must
know a run's filled-in texts before it runs (the kickoff, the run store's fingerprints, a
batch checking every input first) asks here without reaching up to the crew. Agents are
read by duck typing (``interpolate``): this layer sits below the agents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from crew.errors import MissingInputError
from crew.tasks.graph import task_names
from crew.tasks.task import Task


def as_inputs(inputs: Mapping[str, Any] | None) -> dict[str, Any]:
    """A kickoff's inputs as a dict, or a TypeError that says what was expected."""
    if inputs is None:
        return {}
    if not isinstance(inputs, Mapping):
        raise TypeError(
            "kickoff inputs must be a mapping of placeholder names to values, e.g. {'topic': 'bees'}; "
            f"got {type(inputs).__name__}"
        )
    named = [key for key in inputs if not isinstance(key, str)]
    if named:
        raise TypeError(f"kickoff input names must be strings (the placeholders' names), got {named[0]!r}"[:200])
    return dict(inputs)


def fill_inputs(
    agents: Sequence[Any], tasks: Sequence[Task], inputs: Mapping[str, Any], names: list[str] | None = None
) -> tuple[dict[int, Any], dict[str, Task]]:
    """This run's filled-in copies: agents by id of the declared agent, tasks by name.

    Every missing input (in any task or agent text) is reported in one ``MissingInputError``.
    """
    names = names if names is not None else task_names(tasks)
    errors: list[str] = []
    copies: dict[int, Any] = {}
    for agent in agents:
        try:
            copies[id(agent)] = agent.interpolate(inputs)
        except MissingInputError as exc:
            errors.extend(exc.errors)
    filled: dict[str, Task] = {}
    for task, name in zip(tasks, names, strict=True):
        try:
            filled[name] = task.interpolate(inputs, name=name)
        except MissingInputError as exc:
            errors.extend(exc.errors)
    if errors:
        raise MissingInputError("; ".join(errors), errors=errors)
    return copies, filled
