import asyncio

from crew import tool


@tool
async def hold(reason: str) -> str:
    """Wait until the run is cancelled."""
    await asyncio.Event().wait()
    return reason
