"""A crew's knowledge for one run: its sources and each agent's, indexed before the run.

``CrewKnowledge.prepare`` is called by the kickoff before any model call: every source of the
crew (``Crew(knowledge_sources=)``, YAML ``knowledge:``) and of each agent is indexed into the
project's knowledge file (new or changed units only), so a bad source stops the run before it
starts. During the run, ``passages(agent, query)`` finds what the agent may read: the crew's
sources and its own (an agent never sees another agent's).

The file is ``knowledge.db`` beside the run store (``.crew/knowledge.db`` in a crew folder), or,
with no store, ``.crew/knowledge.db`` beside the ``knowledge/`` folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from crew.knowledge.base import KnowledgeBase, Passage
from crew.knowledge.sources import KNOWLEDGE_FOLDER

LIMIT = 5
"""Passages a task's prompt gets at most (CrewAI's ``KnowledgeConfig.results_limit``)."""


def knowledge_file(crew: Any, store: Any = None) -> Path:
    """Where ``crew``'s knowledge is indexed: beside its run store, else beside its knowledge folder."""
    chosen = store if store is not None else getattr(crew, "store", None)
    if chosen is not None:
        return Path(getattr(chosen, "path", chosen)).parent / "knowledge.db"
    return knowledge_folder(crew).parent / ".crew" / "knowledge.db"


def knowledge_folder(crew: Any) -> Path:
    return Path(getattr(crew, "knowledge_folder", None) or KNOWLEDGE_FOLDER)


def crew_scope(crew: Any) -> str:
    return f"/crew/{_part(crew.name)}/shared"


def agent_scope(crew: Any, agent: Any) -> str:
    return f"/crew/{_part(crew.name)}/agents/{_part(agent.name or agent.role)}"


def has_knowledge(crew: Any) -> bool:
    return bool(crew.knowledge_sources) or any(a.knowledge_sources for a in crew.all_agents())


class CrewKnowledge:
    """The indexed knowledge of one crew; search it per agent with ``passages``."""

    def __init__(self, crew: Any, base: KnowledgeBase) -> None:
        self.crew = crew
        self.base = base

    @classmethod
    def prepare(cls, crew: Any, store: Any = None, embedder: Any = None) -> CrewKnowledge | None:
        """Index the crew's and its agents' sources now; None when the crew has none."""
        if not has_knowledge(crew):
            return None
        base = KnowledgeBase(knowledge_file(crew, store), folder=knowledge_folder(crew), embedder=embedder)
        try:
            base.ingest(crew_scope(crew), crew.knowledge_sources)
            for agent in crew.all_agents():
                base.ingest(agent_scope(crew, agent), agent.knowledge_sources)
        except BaseException:
            base.close()
            raise
        return cls(crew, base)

    def passages(self, agent: Any, query: str, limit: int = LIMIT) -> list[Passage]:
        """What ``agent`` may read that best matches ``query``: the crew's sources and its own."""
        scopes = [crew_scope(self.crew)]
        if agent is not None and getattr(agent, "name", None):
            scopes.append(agent_scope(self.crew, agent))
        return self.base.search(query, scopes, limit)

    def close(self) -> None:
        self.base.close()


def _part(name: str) -> str:
    """A name as one scope segment (a role with a slash would split the path)."""
    return "-".join(str(name).replace("/", " ").split()) or "_"
