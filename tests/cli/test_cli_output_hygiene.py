"""A user audit of the real `crew` command: stdout holds only the documented output, and
a bad path, file or name is a clear usage error before anything runs.

Each test here failed before its fix.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_kit import EXAMPLES, run_crew

CREW_YAML = """
llm: test
tools:
  chatty: tools:chatty
agents:
  a:
    role: Writer
    goal: Write about {topic}
    backstory: Writes.
    tools: [chatty]
tasks:
  write:
    description: Write one line about {topic}.
    expected_output: one line
    agent: a
    output_file: note.md
"""

# A module-level print (runs when the folder is loaded) and a tool that prints, starts a
# subprocess writing to descriptor 1, and leaves a mark so a test can tell it ran.
TOOLS = '''
import subprocess
from pathlib import Path

print("TOOLPRINT")

def chatty(text: str) -> str:
    """Say something."""
    print("IN TOOL")
    subprocess.run(["echo", "SUBPROC"], check=True)
    (Path(__file__).parent / "tool_ran").write_text("yes")
    return text
'''

NOISE = ("TOOLPRINT", "IN TOOL", "SUBPROC")


@pytest.fixture
def chatty(crew_dir) -> Path:
    return crew_dir({"crew.yaml": CREW_YAML, "tools.py": TOOLS})


def _inputs(tmp_path: Path, count: int = 2) -> Path:
    path = tmp_path / "inputs.jsonl"
    path.write_text("".join(json.dumps({"topic": f"t{i}"}) + "\n" for i in range(count)))
    return path


def _clean(stdout: str) -> None:
    for word in NOISE:
        assert word not in stdout


# -- 1. --for-each: a tool's print and its subprocess go to stderr --------------------------------


def test_for_each_keeps_tool_output_out_of_the_json_lines(crew_dir, tmp_path):
    quiet_import = TOOLS.replace('print("TOOLPRINT")\n', "")  # only the tool itself writes
    chatty = crew_dir({"crew.yaml": CREW_YAML, "tools.py": quiet_import})
    done = run_crew(
        "kickoff",
        str(chatty),
        "--live-tools",
        "--for-each",
        str(_inputs(tmp_path)),
        "--out",
        str(tmp_path),
        "-q",
        "--no-store",
    )
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]  # every line is JSON
    assert sorted(r["index"] for r in rows) == [0, 1] and {r["status"] for r in rows} == {"done"}
    _clean(done.stdout)
    assert done.stderr.count("IN TOOL") == 2 and done.stderr.count("SUBPROC") == 2


# -- 2. a print while tools.py is imported goes to stderr, whatever the command -----------------


@pytest.mark.parametrize(
    "command",
    [
        ["kickoff", "--json", "-i", "topic=bees"],
        ["kickoff", "-i", "topic=bees"],
        ["validate"],
        ["plot"],
        ["tools", "--json"],
        ["for-each"],
    ],
    ids=lambda c: " ".join(c),
)
def test_a_print_while_the_folder_loads_is_not_output(chatty, tmp_path, command):
    if command == ["for-each"]:
        command = ["kickoff", "--for-each", str(_inputs(tmp_path, 1))]
    run_flags = ["--out", str(tmp_path), "--no-store", "-q"] if command[0] == "kickoff" else []
    done = run_crew(command[0], str(chatty), *command[1:], *run_flags)
    assert done.returncode == 0, done.stderr
    assert "TOOLPRINT" in done.stderr
    _clean(done.stdout)
    if "--json" in command:
        json.loads(done.stdout)
    elif "--for-each" in command:
        assert [json.loads(line)["status"] for line in done.stdout.splitlines()] == ["done"]
    elif command[0] == "kickoff":
        assert done.stdout.startswith("Test answer for: Task: Write one line about bees.")  # the answer alone


# -- 3. -o of --for-each and of show: folders made, unwritable paths are usage errors -----------


def test_for_each_output_gets_its_folder(chatty, tmp_path):
    out = tmp_path / "missing" / "dir" / "out.jsonl"
    done = run_crew(
        "kickoff", str(chatty), "--for-each", str(_inputs(tmp_path)), "-o", str(out), "--no-store", "-q", cwd=tmp_path
    )  # cwd: the crew's output_file lands there, not in the checkout
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and len(out.read_text().splitlines()) == 2


def _unwritable(tmp_path: Path, name: str) -> list[Path]:
    """Paths no file can be written at: under a regular file, and (on Linux) in /proc."""
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    paths = [blocker / name]
    if Path("/proc/self").exists():
        paths.append(Path("/proc") / name)
    return paths


def test_for_each_unwritable_output_is_a_usage_error_before_anything_runs(chatty, tmp_path):
    for out in _unwritable(tmp_path, "x.jsonl"):
        done = run_crew("kickoff", str(chatty), "--for-each", str(_inputs(tmp_path)), "-o", str(out), "--no-store")
        assert done.returncode == 2, done.stderr
        assert f"crew: -o {out}: cannot write it" in done.stderr
        assert "unexpected error" not in done.stderr and "Traceback" not in done.stderr
        assert not (chatty / "tool_ran").exists()  # nothing ran


def test_show_output_gets_its_folder_and_an_unwritable_one_is_a_usage_error(chatty, tmp_path):
    store = tmp_path / "runs.db"
    ran = run_crew("kickoff", str(chatty), "-i", "topic=bees", "--store", str(store), "--out", str(tmp_path), "-q")
    assert ran.returncode == 0, ran.stderr
    page = tmp_path / "new" / "folder" / "run.html"
    done = run_crew("show", "--store", str(store), "-o", str(page))
    assert done.returncode == 0, done.stderr
    assert page.read_text().lower().startswith("<!doctype html>")
    for target in _unwritable(tmp_path, "nope.html"):
        done = run_crew("show", "--store", str(store), "-o", str(target))
        assert done.returncode == 2, done.stderr
        assert f"crew: -o {target}: cannot write it" in done.stderr
        assert "unexpected error" not in done.stderr


# -- 4. --out is checked before anything runs ----------------------------------------------------


def test_an_unusable_out_folder_is_a_usage_error_before_anything_runs(chatty, tmp_path):
    for out in _unwritable(tmp_path, "x"):
        done = run_crew("kickoff", str(chatty), "-i", "topic=bees", "--out", str(out), "--no-store")
        assert done.returncode == 2, done.stderr
        assert f"crew: --out {out}: cannot create the folder" in done.stderr
        assert "running" not in done.stderr and done.stdout == ""
        assert not (chatty / "tool_ran").exists()


def test_the_trip_planner_with_out_in_proc_stops_before_any_task(tmp_path):
    if not Path("/proc/self").exists():
        pytest.skip("needs /proc")
    folder = shutil.copytree(EXAMPLES / "trip_planner", tmp_path / "trip_planner")
    done = run_crew("kickoff", str(folder), "--llm", "test", "--out", "/proc/x", "--no-store")
    assert done.returncode == 2, done.stderr
    assert "crew: --out /proc/x: cannot create the folder" in done.stderr
    assert "running" not in done.stderr and done.stdout == ""


# -- 5. show omits a finish reason that was not recorded -----------------------------------------


def test_show_prints_no_literal_none(chatty, tmp_path):
    store = tmp_path / "runs.db"
    ran = run_crew("kickoff", str(chatty), "-i", "topic=bees", "--store", str(store), "--out", str(tmp_path), "-q")
    assert ran.returncode == 0, ran.stderr
    done = run_crew("show", "--store", str(store))
    assert done.returncode == 0, done.stderr
    model_lines = [line for line in done.stdout.splitlines() if line.strip().startswith("model ")]
    assert model_lines and all(line.endswith("$0.0000") for line in model_lines), model_lines
    assert "None" not in done.stdout


# -- 6. a tab in the indentation ---------------------------------------------------------------


@pytest.mark.parametrize(
    "yaml_text", ["llm: test\nagents:\n  a:\n\trole: r\n", "agents:\n  a:\n    role: r\n\tgoal: g\n"]
)
def test_a_tab_in_the_indentation_says_yaml_wants_spaces(crew_dir, yaml_text):
    folder = crew_dir({"crew.yaml": yaml_text})
    done = run_crew("validate", str(folder))
    assert done.returncode == 2, done.stderr
    line = yaml_text.splitlines().index(next(t for t in yaml_text.splitlines() if t.startswith("\t"))) + 1
    assert f"crew.yaml:{line}: " in done.stderr
    assert "YAML indents with spaces, not tabs" in done.stderr


# -- 7. an import path that is a file path -------------------------------------------------------


@pytest.mark.parametrize("spec", ["../secret:foo", "./tools:chatty", ".tools:chatty", "tools/chatty:chatty"])
@pytest.mark.parametrize("no_import", [False, True])
def test_a_file_path_as_import_path_is_a_located_error(crew_dir, spec, no_import):
    folder = crew_dir({"crew.yaml": CREW_YAML.replace("tools:chatty", spec), "tools.py": TOOLS})
    done = run_crew("validate", str(folder), *(["--no-import"] if no_import else []))
    assert done.returncode == 2, done.stderr
    module = spec.split(":")[0]
    assert f"crew.yaml:3: tools.chatty: '{module}' in '{spec}' is not a module path" in done.stderr
    assert "TypeError" not in done.stderr and "no module ''" not in done.stderr


# -- 8. replay --from a near miss ----------------------------------------------------------------


def test_replay_from_a_misspelt_task_suggests_the_name(tmp_path):
    folder = shutil.copytree(EXAMPLES / "trip_planner", tmp_path / "trip_planner")
    ran = run_crew("kickoff", str(folder), "--llm", "test", "--out", str(tmp_path), "--json", "-q")
    assert ran.returncode == 0, ran.stderr
    run_id = json.loads(ran.stdout)["run_id"]
    done = run_crew("replay", run_id[:12], "--path", str(folder), "--from", "sight", "-q")
    assert done.returncode == 2, done.stderr
    assert "no task 'sight' in crew 'trip_planner' (did you mean 'sights'?)" in done.stderr


VERBOSE_CREW = {
    "crew.yaml": """
        llm: test
        verbose: true
        agents:
          writer: {role: Writer, goal: Write, verbose: true}
        tasks:
          draft: {description: Draft a note, agent: writer}
          review: {description: Review the note, agent: writer}
        """
}


def test_verbose_steps_are_lines_of_the_progress_view_and_quiet_silences_them(crew_dir) -> None:
    import re

    folder = crew_dir(VERBOSE_CREW)
    done = run_crew("kickoff", str(folder), "--no-store")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == "crew mycrew (sequential): 2 tasks" and lines[-1].startswith("done: 2 done")
    event = re.compile(r"^ +\d+\.\d\ds  (draft |review)  (running|step|done) ")
    assert all(event.match(line) for line in lines[1:-1]), lines  # one format: nothing cuts in
    steps = [line for line in lines if " step " in line]
    assert len(steps) == 2 and "[Writer] draft #1 final_answer: Test answer for: Task: Draft a note" in steps[0]
    quiet = run_crew("kickoff", str(folder), "--no-store", "-q")
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    assert quiet.stdout.startswith("Test answer for:")
