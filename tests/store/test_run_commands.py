"""The run commands find the store kickoff wrote, take a crew folder as ``crew runs`` does, print safely."""

from __future__ import annotations

import json

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
