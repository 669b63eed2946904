"""The shared tool executor (skeleton; being built out by the EXECUTOR helper)."""

from __future__ import annotations


class ToolExecutor:
    """One executor per crew run, shared by every agent."""
