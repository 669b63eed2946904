"""Knowledge as a context provider: each task's prompt gets the passages most relevant to it.

``open_knowledge`` is awaited by the kickoff before any model call: it indexes the crew's and
its agents' sources in a worker thread (new or changed files only; a bad source raises its
``KnowledgeSourceError`` there, so the run never starts on it) and returns the provider the
run's tasks ask (``crew.agent.context``). Before each task, the provider searches with the
task's description and expected output, among the crew's sources and the task's agent's own,
and answers with one section whose items name their source (file, and page for a PDF). The
run store records each item's id, score, source and text, as it records memory's recalls, and
a replay shows the recorded passages again rather than searching.
"""

from __future__ import annotations

import asyncio
import difflib
from typing import Any

from crew.agent.context import ContextItem, ContextRequest, PromptSection
from crew.knowledge.crew_knowledge import LIMIT, CrewKnowledge, has_knowledge

TITLE = "Relevant knowledge (passages from the crew's documents, each with its source)"


class KnowledgeProvider:
    """The ``knowledge`` context provider of one run."""

    name = "knowledge"

    def __init__(self, knowledge: CrewKnowledge, limit: int = LIMIT) -> None:
        self.knowledge = knowledge
        self.limit = limit

    async def provide(self, request: ContextRequest) -> PromptSection | None:
        query = focus(request, self.knowledge.crew)
        passages = await asyncio.to_thread(self.knowledge.passages, request.agent, query, self.limit)
        items = tuple(ContextItem(text=p.text.strip(), source=p.label, id=p.id, score=p.score) for p in passages)
        return PromptSection(provider=self.name, title=TITLE, items=items) if items else None

    async def task_done(self, request: ContextRequest, output: Any) -> None:
        """Knowledge learns nothing from a run (memory does)."""

    def close(self) -> None:
        self.knowledge.close()


def focus(request: ContextRequest, crew: Any) -> str:
    """What to search for: the words this run's inputs put into the task's description, else the
    task's description and expected output.

    A task's own wording is the same on every run, and its instructions ("answer from the
    knowledge sources") match documents about knowledge, not the question; what this run asks
    is what its ``{placeholders}`` were filled with. (CrewAI asks the model to rewrite the
    query, one more model call per task; this asks none.)
    """
    template = next((t.description for t in crew.tasks if t.name == request.task), None)
    if template is None or template == request.description:
        return request.query
    base, filled = template.split(), request.description.split()
    matcher = difflib.SequenceMatcher(a=base, b=filled, autojunk=False)
    added = [w for tag, _, _, j1, j2 in matcher.get_opcodes() if tag in ("replace", "insert") for w in filled[j1:j2]]
    return " ".join(added) or request.query


async def open_knowledge(crew: Any, store_path: Any = None) -> KnowledgeProvider | None:
    """The run's knowledge provider, its sources indexed first; None when the crew has none."""
    if not has_knowledge(crew):
        return None
    knowledge = await asyncio.to_thread(CrewKnowledge.prepare, crew, store_path, crew.embedder)
    return None if knowledge is None else KnowledgeProvider(knowledge)
