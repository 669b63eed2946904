"""The local backend: kickoffs on this process's event loop (what ``kickoff_for_each`` always did)."""

from __future__ import annotations

from typing import Any

from crew.tasks.output import CrewOutput


class LocalBackend:
    """Each kickoff is a coroutine on the driver's loop; nothing is copied or shipped."""

    name = "local"

    async def open(self, crew: Any) -> None:
        return None

    async def kickoff(self, crew: Any, inputs: dict[str, Any], *, run_id: str) -> CrewOutput:
        return await crew.kickoff_async(inputs, run_id=run_id)

    async def close(self) -> None:
        return None
