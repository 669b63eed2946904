"""Memory: what a crew remembers across runs, in one SQLite file, searched offline.

``memory`` (``Memory``: remember, recall, forget, reset, list records; names as CrewAI's unified
``Memory``), ``settings`` (what ``Crew(memory=...)`` and YAML ``memory:`` accept, checked), and
``provider`` (the context provider through which a crew's tasks recall before they start and
remember their outputs when done).

May import: ``crew.errors``, ``crew.common``, ``crew.search``, and, for the provider, the layers up
to ``crew.agent`` (the context-provider contract and the prompt's texts).
"""

from __future__ import annotations

from crew.memory.memory import Memory, MemoryMatch, MemoryRecord

__all__ = ["Memory", "MemoryMatch", "MemoryRecord"]
