"""``crew serve`` refuses what is unsafe or wrong before anything listens: one message, exit 2, no traceback."""

from __future__ import annotations

import pytest
from serve_kit import CREWS

from crew.cli import main


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["serve", *argv]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip()


def test_a_bind_beyond_loopback_needs_a_token(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CREW_SERVE_TOKEN", raising=False)
    err = _refused(["--mcp", str(CREWS / "brief"), "--http", "0.0.0.0:8123"], capsys)
    assert err == (
        "crew: --http 0.0.0.0:8123: listening beyond this machine needs a token: pass --token TOKEN or set "
        "CREW_SERVE_TOKEN (clients then send 'Authorization: Bearer TOKEN'), or bind 127.0.0.1"
    )


def test_a_mode_an_address_and_a_crew_folder_are_checked(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    assert "needs a mode: --mcp" in _refused([str(CREWS / "brief")], capsys)
    assert "--http 'localhost:http': expected HOST:PORT" in _refused(
        ["--mcp", str(CREWS / "brief"), "--http", "localhost:http"], capsys
    )
    (tmp_path / "crew.yaml").write_text("agents: {}\ntasks:\n  t: {description: x, agnt: a}\n")
    assert "crew.yaml:3" in _refused(["--mcp", str(tmp_path)], capsys)
