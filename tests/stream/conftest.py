"""Fixtures of the streaming tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture
def fresh_secrets(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Secrets are known process-wide, and a delta ending in the first letters of one is held back
    until the next piece (so a secret split across pieces is still masked). One that an earlier test
    of the same worker registered would move a test's piece boundaries: start from none."""
    from crew.common import secrets

    monkeypatch.setattr(secrets, "_values", set())
    monkeypatch.setattr(secrets, "_pattern", None)
    secrets._generation[0] += 1
    yield
    secrets._generation[0] += 1
