"""``--max-tokens`` / ``--max-cost``: checked (positive) and set on what runs, a crew or a flow."""

from __future__ import annotations

import argparse
from typing import Any

from crew.cli import UsageError

__all__ = ["apply_budgets"]


def apply_budgets(crew: Any, args: argparse.Namespace) -> None:
    for name in ("max_tokens", "max_cost"):
        value = getattr(args, name, None)
        if value is not None:
            if value <= 0:
                raise UsageError(f"--{name.replace('_', '-')} must be positive, got {value}")
            setattr(crew, name, value)
