"""What a process's first kickoff loads before its tasks start, so independent tasks start together.

A task's first step resolves its agent's model and calls it. Done inside the first task,
a cold import there (``"test"`` imports ``crew.testing``; the native transport imports
aiohttp) runs on the event loop and freezes it: the tasks next to
it start a tenth of a second or more later. So the kickoff resolves every performer's
model before the scheduler starts, and loads the native transport in a worker thread
(joining the prewarm thread when one is still at it). The litellm door needs nothing: it
imports litellm in a thread already, and its tasks wait for it side by side.

Earlier still, a crew that will need litellm starts importing it in the background as soon as
it is built (``prewarm``), and each kickoff asks again (its models may have been set since).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable, Sequence
from typing import Any

from crew.agent.scope import RunScope
from crew.models import LLM, innermost, prewarm_litellm
from crew.models.doors import choose, door_of, prewarm_native

_native_loaded = False


def resolve_models(scope: RunScope, agents: Iterable[Any]) -> list[Any]:
    """The model of every agent that will perform a task, resolved once (each agent copy caches it).

    A model that does not resolve is left out: its task reports that, as it always did.
    """
    models = []
    for agent in agents:
        with contextlib.suppress(Exception):
            models.append(scope.model_for(agent))
    return models


async def doors_ready(models: Iterable[Any]) -> None:
    """Load the native transport off the event loop when one of ``models`` takes it (once per process)."""
    global _native_loaded
    if _native_loaded or not any(getattr(innermost(m), "door", None) == "native" for m in models):
        return
    await asyncio.to_thread(_load_native)
    _native_loaded = True


def _load_native() -> None:
    with contextlib.suppress(Exception):  # the first call imports again and reports the error
        import crew.models.openai_door  # noqa: F401 - and aiohttp with it
        from crew.models.pricing import table

        table()


def prewarm(crew: Any) -> None:
    """Start importing litellm in the background when a model of this crew will need it,
    so the import overlaps with whatever happens before the first model call."""
    specs = [crew.llm, crew.manager_llm, *(a.llm for a in crew.all_agents())]
    if crew.manager_agent is not None:
        specs.append(crew.manager_agent.llm)
    if _needs_litellm(specs):
        prewarm_litellm()
    if any(door_of(spec) == "native" for spec in specs):
        prewarm_native()


def _needs_litellm(specs: Sequence[Any]) -> bool:
    """True when a model spec will go through litellm (a model string or an LLM whose transport is litellm)."""
    for spec in specs:
        if isinstance(spec, str) and spec.strip().lower() != "test" and choose(spec.strip(), None) == "litellm":
            return True
        if isinstance(spec, LLM) and spec.door == "litellm":
            return True
    return False
