"""A crew's memory as a context provider: recall before a task, remember its output after.

Before a task its agent recalls what is relevant to the task (its description and expected
output) in its scope (``/crew/<crew>/<agent>``, or the crew's with ``scope: crew``), and the
prompt gets a short section of at most ``limit`` items, each saying the run and task it came
from. Records of the current run are left out (its outputs reach later tasks as context).
When the task is done its output is remembered as it is (no model call), or, with
``analyze``, as the facts the agent's model extracts from it (one call, on the run's ledger).
The file's work runs in a worker thread: SQLite and the embedder never block the run's loop.
"""

from __future__ import annotations

from typing import Any

from crew.agent import prompts
from crew.agent.context import ContextItem, ContextRequest, PromptSection
from crew.common.blocking import in_thread
from crew.memory.memory import Memory, MemoryMatch
from crew.memory.settings import MemorySettings

ITEM_CHARS = 600
"""An item longer than this is cut (with an ellipsis): the section stays short."""


class MemoryProvider:
    """Recalls into a task's prompt and remembers its output, in ``memory``."""

    name = "memory"

    def __init__(self, memory: Memory, settings: MemorySettings) -> None:
        self.memory = memory
        self.settings = settings

    def agent_scope(self, request: ContextRequest) -> str:
        return f"/crew/{_part(request.crew)}/{_part(request.agent_role or 'agent')}"

    def recall_scope(self, request: ContextRequest) -> str:
        return f"/crew/{_part(request.crew)}" if self.settings.scope == "crew" else self.agent_scope(request)

    async def provide(self, request: ContextRequest) -> PromptSection | None:
        limit = self.settings.limit
        if limit == 0 or not self.settings.serves(request.agent):
            return None
        matches = await in_thread(self.memory.recall, request.query, 3 * limit, self.recall_scope(request))
        earlier = [m for m in matches if m.record.metadata.get("run_id") != request.run_id][:limit]
        if not earlier:
            return None
        return PromptSection(self.name, prompts.MEMORY_TITLE, tuple(_item(match) for match in earlier))

    async def task_done(self, request: ContextRequest, output: Any) -> None:
        text = str(getattr(output, "raw", "") or "").strip()
        if not text or not self.settings.serves(request.agent):
            return
        facts = await self._facts(request, text) if self.settings.analyze else [text]
        metadata = {"run_id": request.run_id, "task": request.task, "agent": request.agent_role, "crew": request.crew}
        scope = self.agent_scope(request)
        for fact in facts:
            await in_thread(self.memory.remember, fact, scope, metadata)

    async def _facts(self, request: ContextRequest, text: str) -> list[str]:
        """The facts the agent's model finds worth keeping in ``text`` (one call, billed to the task)."""
        from crew.models.info import ModelCallInfo

        scope = request.extra["scope"]
        agent = request.agent
        account = scope.meter.open_account(request.task, request.agent_role)
        model = scope.model_for(agent)
        ask = prompts.render(prompts.MEMORY_FACTS, {"task": request.task, "output": text})
        info = ModelCallInfo(agent=request.agent_role, task=request.task, run_id=request.run_id)
        reply = await scope.meter.call(account, model, [{"role": "user", "content": ask}], info=info)
        lines = [line.strip().lstrip("-*• ").strip() for line in (reply.content or "").splitlines()]
        return [line for line in lines if line]


def _item(match: MemoryMatch) -> ContextItem:
    record = match.record
    text = " ".join(record.content.split())
    if len(text) > ITEM_CHARS:
        text = text[: ITEM_CHARS - 1].rstrip() + "…"
    run = str(record.metadata.get("run_id") or "")[:8]
    task = record.metadata.get("task")
    source = ", ".join(part for part in (f"run {run}" if run else "", f"task {task}" if task else "") if part)
    return ContextItem(text=text, source=source, id=record.id, score=round(match.score, 6))


def _part(name: str) -> str:
    """A name as one part of a scope path (a '/' in a role would start another)."""
    return "-".join(str(name).replace("/", " ").split()) or "unnamed"
