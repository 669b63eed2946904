"""The run commands find the store kickoff wrote, take a crew folder as ``crew runs`` does, print safely."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from store_kit import crew, write

from crew.testing import OpenAIServer, Reply

SMALL = """
    agents:
      worker: {role: Worker, goal: Work}
    tasks:
      t1: {description: first, expected_output: a line, agent: worker}
    """


def test_show_from_above_the_crew_folder_finds_its_store_and_takes_the_folder_as_a_folder(tmp_path) -> None:
    folder = write(tmp_path / "examples" / "trip", {"crew.yaml": SMALL})
    kicked = crew("kickoff", "examples/trip", "--llm", "test", "-q", cwd=tmp_path)
    assert kicked.returncode == 0, kicked.stderr
    assert (folder / ".crew" / "runs.db").is_file()

    page = crew("show", "-o", "run.html", cwd=tmp_path)  # as docs/cli.md shows it, from the top
    assert page.returncode == 0, page.stderr
    assert "store: examples/trip/.crew/runs.db" in page.stderr and (tmp_path / "run.html").is_file()

    shown = crew("show", "examples/trip", cwd=tmp_path)  # the folder, not a run id
    assert shown.returncode == 0, shown.stderr
    assert "[1] t1 · done · Worker" in shown.stdout
    as_json = crew("show", "examples/trip", "--json", cwd=tmp_path)
    run = json.loads(as_json.stdout)["run"]["id"]
    by_id = crew("show", run[:8], "--path", "examples/trip", cwd=tmp_path)
    assert by_id.returncode == 0 and f"run {run}" in by_id.stdout

    resumed = crew("resume", "examples/trip", cwd=tmp_path)
    assert resumed.returncode == 2 and "no unfinished run" in resumed.stderr  # not "no run 'examples/trip'"
    listed = crew("runs", cwd=tmp_path)
    assert listed.returncode == 0 and run[:12] in listed.stdout


def test_show_prints_terminal_escapes_from_a_model_as_text_never_as_escapes(tmp_path) -> None:
    hostile = "fine\x1b]0;pwned\x07\x1b[2J\x1b[1A\rfaked line\x9b31m\u202eevil"
    with OpenAIServer() as server:
        server.enqueue(Reply.text(hostile))
        llm = f'{{model: openai/gpt-4o-mini, api_base: "{server.url}", api_key: sk-test, num_retries: 0}}'
        folder = write(tmp_path / "c", {"crew.yaml": f"llm: {llm}\n" + SMALL.replace("\n    ", "\n")})
        assert crew("kickoff", "-q", cwd=folder).returncode == 0
    shown = crew("show", cwd=folder)
    assert shown.returncode == 0, shown.stderr
    assert not any(c in shown.stdout for c in "\x1b\x07\r\x9b\u202e")
    assert r"fine\x1b]0;pwned\x07\x1b[2J\x1b[1A\rfaked line\x9b31m\u202eevil" in shown.stdout


def _as_reader(command: list[str], cwd: Path, at: Path) -> tuple[int, str, str]:
    """``crew COMMAND`` run by a user who may read the store but not write it (``nobody`` when we are root,
    who writes anything), in a forked child: (exit code, stdout, stderr)."""
    import crew.cli
    import crew.cli.runs
    import crew.config.project
    import crew.store  # imported while still readable by anyone

    out, err = cwd / "stdout.txt", cwd / "stderr.txt"
    pid = os.fork()
    if pid == 0:  # the child: drop to a reader, run the command, report through the files
        code = 70
        try:
            with out.open("w") as o, err.open("w") as e:
                sys.stdout, sys.stderr = o, e
                if os.geteuid() == 0:
                    os.setgid(65534)
                    os.setuid(65534)
                os.chdir(at)
                code = 71
                code = crew.cli.main(command)
                sys.stdout.flush()
                sys.stderr.flush()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.read_text(), err.read_text()


def test_a_store_crew_may_read_but_not_write_is_still_listed_and_shown(tmp_path) -> None:
    folder = write(tmp_path / "c", {"crew.yaml": SMALL})
    assert crew("kickoff", "--llm", "test", "-q", cwd=folder).returncode == 0
    runs = folder / ".crew"
    place = Path(tempfile.mkdtemp())  # a folder any user may enter
    os.chmod(place, 0o755)
    shutil.copy(runs / "runs.db", place / "runs.db")  # as a backup or a mounted volume holds it: no -wal, no -shm
    os.chmod(place / "runs.db", 0o444)
    os.chmod(place, 0o555)
    try:
        code, stdout, stderr = _as_reader(["runs", "--store", str(place / "runs.db")], tmp_path, place)
        assert code == 0, stderr
        assert re.search(r"^[0-9a-f]{12}\s+done\s", stdout, re.M), stdout
        code, stdout, stderr = _as_reader(["show", "--store", str(place / "runs.db")], tmp_path, place)
        assert code == 0 and "[1] t1 · done · Worker" in stdout, stderr
    finally:
        os.chmod(place, 0o755)
        shutil.rmtree(place)
