"""Calls seen before: raw arguments already validated, so a repeated call skips validation.

A model repeats calls (the same search, the same lookup), and a repeated call of a cached
tool is the executor's hottest path. Validating the same raw arguments again gives the same
validated arguments and the same canonical cache key, so both are kept per tool, keyed by
the raw arguments themselves (with their types: ``1``, ``1.0`` and ``True`` are equal in
Python but not to a validator). Only flat arguments of JSON scalars are kept (what models
send most); anything else is validated every time. Entries are made only for calls whose
result may come from the cache and whose arguments dropped nothing (so no
``tool.args_dropped`` event is skipped), and the table is bounded.

The text a hit hands back is scrubbed of secrets once per cached value and secrets
generation (``crew.secrets.generation``), not on every hit.
"""

from __future__ import annotations

from typing import Any

from crew.secrets import generation, scrub
from crew.tools.base import BaseTool
from crew.tools.stats import ToolStats

__all__ = ["Recall", "Seen"]

_SCALARS = frozenset({str, int, float, bool, type(None)})

LIMIT = 4096
"""Entries one executor keeps; the table starts afresh when full."""


class Seen:
    """One tool's validated arguments for one set of raw arguments, and their cache key."""

    __slots__ = ("args", "key", "name", "scrubbed", "stats", "tool")

    def __init__(self, tool: BaseTool, name: str, args: dict[str, Any], key: str, stats: ToolStats) -> None:
        self.tool = tool
        self.name = name
        self.args = args
        self.key = key
        self.stats = stats  # the name's counters (the executor's ``Tally`` keeps one object per name)
        self.scrubbed: tuple[Any, int, str] | None = None  # (cached value, secrets generation, its scrubbed text)

    def content(self, value: Any) -> str:
        """The scrubbed text of cached ``value``, scrubbed again only for a new value or new secrets."""
        kept = self.scrubbed
        now = generation()
        if kept is not None and kept[0] is value and kept[1] == now:
            return kept[2]
        text = scrub(value["content"])
        self.scrubbed = (value, now, text)  # one assignment: threads never see a mixed triple
        return text


class Recall:
    """The calls one executor has seen, by tool and raw arguments (dict operations: safe across threads)."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[tuple[int, tuple[Any, ...], tuple[type, ...]], Seen] = {}

    def find(self, tool: BaseTool, name: str, args: dict[str, Any]) -> Seen | None:
        try:
            seen = self._seen.get((id(tool), tuple(args.items()), tuple(map(type, args.values()))))
        except TypeError:  # an unhashable raw value (a list, a dict): never kept
            return None
        if seen is None or seen.tool is not tool or seen.name != name:  # ``tool is``: an id reused
            return None
        return seen

    def keep(
        self, tool: BaseTool, name: str, raw: dict[str, Any], args: dict[str, Any], key: str, stats: ToolStats
    ) -> None:
        types = tuple(map(type, raw.values()))
        if not _SCALARS.issuperset(types):
            return
        if len(self._seen) >= LIMIT:
            self._seen.clear()
        self._seen[(id(tool), tuple(raw.items()), types)] = Seen(tool, name, args, key, stats)
