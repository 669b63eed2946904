"""What ``Crew(memory=...)`` and YAML ``memory:`` accept, checked where it is written.

``True`` (remember and recall with the defaults), ``False``/``None`` (no memory), a ``Memory``
object, or a mapping of ``path``, ``embedder``, ``limit``, ``analyze`` and ``scope``. A wrong key
or value is an error naming it (with a suggestion), so ``memory: {limt: 3}`` does not quietly
recall five.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from crew.common.keywords import did_you_mean

KEYS = ("path", "embedder", "limit", "analyze", "scope")
DEFAULT_LIMIT = 5


@dataclass(frozen=True)
class MemorySettings:
    """A crew's memory as configured: where, embedded how, how much a task recalls, how it saves.

    ``scope``: ``"agent"`` (an agent recalls what it remembered itself: ``/crew/<crew>/<agent>``)
    or ``"crew"`` (what any agent of the crew remembered: ``/crew/<crew>``). ``analyze``: the
    agent's model extracts the facts worth keeping from an output (one model call per task),
    instead of the output being remembered as it is (no model call).
    """

    path: Path | None = None
    embedder: Any = "default"
    limit: int = DEFAULT_LIMIT
    analyze: bool = False
    scope: Literal["agent", "crew"] = "agent"
    memory: Any = None
    """A ``Memory`` object given as it is (``Crew(memory=Memory(...))``)."""
    from_agents: bool = False
    """The crew asked for no memory, but some of its agents did (CrewAI's ``Agent(memory=True)``):
    only those agents recall and remember."""

    def serves(self, agent: Any) -> bool:
        """Whether ``agent``'s tasks recall and remember: an agent's own ``memory`` (CrewAI's key)
        opts it out (``False``) or, when only agents asked for memory, in (``True``)."""
        own = getattr(agent, "memory", None)
        return own is True if self.from_agents else own is not False


def for_agents(settings: MemorySettings | None, agents: list[Any]) -> MemorySettings | None:
    """The crew's memory settings, or, when it has none and an agent says ``memory=True``, the
    defaults for those agents only (CrewAI gives such an agent a memory of its own)."""
    if settings is None and any(getattr(agent, "memory", None) is True for agent in agents):
        return MemorySettings(from_agents=True)
    return settings


def parse(value: Any) -> MemorySettings | None:
    """``value`` as settings, or None for no memory; ``ValueError`` naming what is wrong."""
    from crew.memory.memory import Memory

    if value is None or value is False:
        return None
    if value is True:
        return MemorySettings()
    if isinstance(value, Memory):
        return MemorySettings(memory=value)
    if isinstance(value, MemorySettings):
        return value
    if not isinstance(value, Mapping):
        raise ValueError(
            f"memory must be true, false, a Memory(...) or a mapping of {', '.join(KEYS)}, not {type(value).__name__}"
        )
    for key in value:
        if key not in KEYS:
            raise ValueError(f"unknown memory setting '{key}'{did_you_mean(key, KEYS)} (known: {', '.join(KEYS)})")
    return MemorySettings(
        path=_path(value.get("path")),
        embedder=value.get("embedder", "default"),
        limit=_limit(value.get("limit", DEFAULT_LIMIT)),
        analyze=_flag(value.get("analyze", False)),
        scope=_scope(value.get("scope", "agent")),
    )


def _path(value: Any) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, str | Path) or not str(value).strip():
        raise ValueError(f"memory.path must be a file path, not {value!r}")
    return Path(value)


def _limit(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 50:
        raise ValueError(f"memory.limit must be a whole number from 0 to 50, not {value!r}")
    return value


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"memory.analyze must be true or false, not {value!r}")
    return value


def _scope(value: Any) -> Literal["agent", "crew"]:
    if value == "agent":
        return "agent"
    if value == "crew":
        return "crew"
    raise ValueError(f"memory.scope must be 'agent' or 'crew', not {value!r}")
