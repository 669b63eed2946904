"""What a kickoff takes over from an earlier run: one value instead of keywords threaded through.

A resume reuses every finished output and goes on with the tasks a person's approval
paused; a replay reuses the outputs upstream of the task it reruns from. Both say which
run they continue, and what that run had spent, so a budget caps the whole piece of work.
``Crew.kickoff_async(precomputed=...)`` is a continuation of no stored run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from crew.common.usage import Usage
from crew.tasks.output import TaskOutput
from crew.tools.approval import DecisionKey

Mode = Literal["kickoff", "resume", "replay"]


@dataclass(frozen=True)
class Continuation:
    """Outputs to reuse (by task name) and paused tasks to go on with, from run ``from_run``.

    ``from_task``: the task a replay reruns from (None: a resume, or no stored run).
    ``checkpoints`` (by task name) and ``approvals`` (decisions by call id, or by
    ``(task, call id)``) continue a paused run's tasks where they stopped. ``sections``: what
    the earlier run's tasks recalled.
    """

    outputs: Mapping[str, TaskOutput] = field(default_factory=dict)
    from_run: str | None = None
    from_task: str | None = None
    spent_before: Usage = field(default_factory=Usage)
    checkpoints: Mapping[str, Any] = field(default_factory=dict)
    approvals: Mapping[DecisionKey, Any] = field(default_factory=dict)
    sections: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    """By task name, the context sections (``crew.agent.context.PromptSection``) the earlier run's
    prompts showed: a replay shows them again instead of asking memory or knowledge anew."""

    @property
    def mode(self) -> Mode:
        """How the run store names the run this continuation starts."""
        if self.from_run is None:
            return "kickoff"
        return "replay" if self.from_task is not None else "resume"

    def unspent(self) -> Continuation:
        """The reused outputs without their usage: the continuing run did not spend it (its record says so)."""
        outputs = {name: out.model_copy(update={"usage": Usage()}) for name, out in self.outputs.items()}
        return replace(self, outputs=outputs)


FRESH = Continuation()
"""A kickoff that reuses nothing."""
