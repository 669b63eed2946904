"""An environment with the 1.x SDK (crewai 1.x pins mcp<2) gets an error naming the version and the fix."""

from __future__ import annotations

import pytest

from crew.mcp.sdk import version_problem


@pytest.mark.parametrize("version", ["1.26.0", "1.9.4", "2.2.1", "2.0.0rc1"])
def test_an_sdk_older_than_2_3_is_named_with_the_fix(version: str) -> None:
    problem = version_problem(version)
    assert problem is not None
    assert f"this environment has mcp {version}" in problem
    assert 'pip install "mcp>=2.3"' in problem and "crewai" in problem


@pytest.mark.parametrize("version", ["2.3.0", "2.10.1", "3.0.0"])
def test_a_recent_sdk_is_accepted(version: str) -> None:
    assert version_problem(version) is None


def test_the_installed_sdk_loads() -> None:
    pytest.importorskip("mcp", reason="the mcp extra is in the dev extra")
    from crew.mcp.sdk import load

    assert load().__name__ == "mcp"
