"""Asking a run's context providers before each task, and telling them of its output after.

Once per task, before its first attempt (retries and guardrail re-asks see the same sections):
every provider of the run is asked, in order, and the sections they give are kept on the run's
scope for the agent's task prompt (``crew.agent.prompts.task_prompt``), and announced in one
``task.context`` event, which the run store records (each item's id, score, source and text).
A replayed run shows the sections its first run recorded and asks no provider: it recalls
exactly what that run recalled. A task that finishes is handed to every provider
(``task_done``: memory remembers its output there).
"""

from __future__ import annotations

from typing import Any

from crew.agent.context import ContextRequest, PromptSection
from crew.agent.scope import RunScope
from crew.common.events import bus
from crew.tasks.output import TaskOutput
from crew.tasks.task import Task


def request_for(scope: RunScope, name: str, task: Task, agent: Any) -> ContextRequest:
    return ContextRequest(
        run_id=scope.run_id,
        task=name,
        description=task.description,
        expected_output=task.expected_output or "",
        agent=agent,
        crew=scope.crew_name,
        extra={"scope": scope},
    )


async def gather(scope: RunScope, name: str, task: Task, agent: Any) -> tuple[PromptSection, ...]:
    """The sections task ``name``'s prompt shows (recorded ones when replaying), kept on ``scope``."""
    replayed = name in scope.replayed_sections
    if replayed:
        sections = tuple(scope.replayed_sections[name])
    elif not scope.context_providers:
        return ()
    else:
        request = request_for(scope, name, task, agent)
        found = [await provider.provide(request) for provider in scope.context_providers]
        sections = tuple(section for section in found if section is not None and section.items)
    scope.sections[name] = sections
    if sections:
        bus.emit(
            "task.context",
            run_id=scope.run_id,
            task=name,
            replayed=replayed,
            sections=[section.as_record() for section in sections],
        )
    return sections


async def task_done(scope: RunScope, name: str, task: Task, agent: Any, output: TaskOutput) -> None:
    """Hand a finished task's output to every provider (memory remembers it)."""
    if not scope.context_providers or output.status != "done":
        return
    request = request_for(scope, name, task, agent)
    for provider in scope.context_providers:
        await provider.task_done(request, output)
