"""``verbose: true`` under the CLI: its lines belong to the progress view, and ``-q`` silences them.

The library prints a verbose agent's steps and a verbose crew's task events straight to
stderr, from wherever the run is. Under ``crew kickoff`` that text would cut into the
view's own lines in another format (and through ``-q``). So the CLI takes the steps over:
each goes through the view, as one of its lines (plain output) or above the live block;
the crew's task events are what the view shows already. Steps that run in other
processes (``backend: ray``) and ``--stream`` (whose text is the view) keep their lines.
"""

from __future__ import annotations

import inspect
from typing import Any


def route_verbose(crew: Any, progress: Any, *, quiet: bool) -> None:
    """Silence verbose output (``quiet``), or send it through ``progress`` (None: leave it as it is)."""
    talkers = [a for a in [*crew.all_agents(), crew.manager_agent] if a is not None and a.verbose]
    if quiet:
        crew.verbose = False
        for agent in talkers:
            agent.verbose = False
        return
    if progress is None or progress.stream is None or crew.backend not in (None, "local"):
        return
    crew.verbose = False  # one line per task event: the view's own lines say the same
    for agent in talkers:
        agent.verbose = False
        agent.step_callback = _through(progress, agent.step_callback)


def _through(progress: Any, own: Any) -> Any:
    """A step callback showing the step on the view, then running the agent's own callback."""
    from crew.agent.loop import describe_step

    async def show(step: Any) -> Any:
        progress.step(step.task, describe_step(step))
        if own is None:
            return None
        outcome = own(step)
        return await outcome if inspect.isawaitable(outcome) else outcome

    return show
