"""The real `crew` command in a subprocess: every subcommand, every exit code, output formats."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from cli_kit import EXAMPLES, REPO, crew_env, run_crew, terminal_screen

TRIP = str(EXAMPLES / "trip_planner")

TWO_TASKS = """
    name: two
    llm: test
    agents:
      writer:
        role: Writer
        goal: Write about {topic}
    tasks:
      outline:
        description: Outline {topic} in {n} points
        expected_output: An outline
        agent: writer
      draft:
        description: Draft {topic}
        expected_output: A draft
        agent: writer
        output_file: drafts/{topic}.md
    """


def test_version_help_and_no_command() -> None:
    version = run_crew("--version")
    assert (version.returncode, version.stdout.strip()) == (0, "crew 0.1.0")
    helped = run_crew("--help")
    assert helped.returncode == 0
    for command in ("kickoff", "validate", "plot", "tools", "create", "schema"):
        assert command in helped.stdout
    bare = run_crew()
    assert bare.returncode == 2 and "usage: crew" in bare.stderr


def test_python_dash_m_crew_is_the_same_command() -> None:
    done = subprocess.run([sys.executable, "-m", "crew", "--version"], capture_output=True, text=True, cwd=REPO)
    assert (done.returncode, done.stdout.strip()) == (0, "crew 0.1.0")


def test_validate_ok_and_broken_without_traceback_unless_debug(crew_dir) -> None:
    ok = run_crew("validate", TRIP)
    assert ok.returncode == 0
    assert "ok: " in ok.stdout and "process graph, 4 agents, 4 tasks, 2 tools" in ok.stdout
    broken = crew_dir(
        {
            "crew.yaml": """
        name: t
        agents:
          writer: {role: Writer, goal: Write}
        tasks:
          draft: {description: Draft, agent: writter}
        """
        }
    )
    bad = run_crew("validate", str(broken), cwd=broken)
    assert bad.returncode == 2
    assert bad.stderr.splitlines() == [
        "crew.yaml:5: tasks.draft.agent: unknown agent 'writter' (did you mean 'writer'?)"
    ]
    assert "Traceback" not in bad.stderr and bad.stdout == ""
    debug = run_crew("validate", str(broken), "--debug")
    assert debug.returncode == 2 and "Traceback" in debug.stderr


def test_kickoff_json_is_one_document_of_the_whole_output(tmp_path) -> None:
    (tmp_path / "out").write_text("")  # a file where plan's output_file (out/Kyoto_trip_plan.md) needs a folder
    done = run_crew("kickoff", TRIP, "--llm", "test", "--json", "-i", "city=Kyoto", "--out", str(tmp_path), "-q")
    # the file write fails: the plan task fails, exit 1
    assert done.returncode == 1
    document = json.loads(done.stdout)
    assert document["status"] == "failed" and "plan" in document["error"]
    statuses = {t["name"]: t["status"] for t in document["tasks_output"]}
    assert statuses == {"food": "done", "sights": "done", "logistics": "done", "plan": "failed"}


def test_kickoff_piped_output_has_plain_lines_and_no_control_codes(tmp_path) -> None:
    out = tmp_path / "made" / "here"  # --out is created when missing
    done = run_crew("kickoff", TRIP, "--llm", "test", "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["status"] == "done" and [t["name"] for t in document["tasks_output"]] == [
        "food",
        "sights",
        "logistics",
        "plan",
    ]
    assert document["tasks_output"][-1]["raw"] == document["raw"]
    assert "\x1b" not in done.stdout and "\x1b" not in done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == "crew trip_planner (graph): 4 tasks"
    assert any(" plan " in line and " running " in line for line in lines)
    assert any("tool     search_attractions" in line for line in lines)
    assert lines[-2].startswith("done: 4 done")
    assert (out / "out" / "Osaka_trip_plan.md").read_text(encoding="utf-8") == document["raw"]


def test_kickoff_text_result_goes_to_stdout_inputs_typed_and_layered(crew_dir, tmp_path) -> None:
    folder = crew_dir({"crew.yaml": TWO_TASKS + "inputs: {topic: tea, n: 2}\n"})
    inputs_file = tmp_path / "in.yaml"
    inputs_file.write_text("topic: coffee\nn: 4\n")
    done = run_crew(
        "kickoff", str(folder), "--inputs-file", str(inputs_file), "-i", "n=[1, 2]", "--json", "-q", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    outline = json.loads(done.stdout)["tasks_output"][0]
    assert outline["description"] == "Outline coffee in [1, 2] points"  # -i beats the file, the file beats crew.yaml
    assert (tmp_path / "drafts" / "coffee.md").is_file()  # relative output_file: the current folder
    text = run_crew("kickoff", str(folder), "-q", cwd=tmp_path)
    assert text.returncode == 0 and text.stdout.startswith("Test answer for: Task: Draft tea")


def test_kickoff_missing_input_is_exit_2_with_its_line(crew_dir) -> None:
    folder = crew_dir({"crew.yaml": TWO_TASKS})
    done = run_crew("kickoff", str(folder), "-i", "topic=tea", cwd=folder)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "crew.yaml:9: tasks.outline.description: input 'n' has no value "
        "(pass -i n=..., or give it a default under `inputs:` in crew.yaml)"
    )


def test_kickoff_without_any_model_suggests_the_test_model(crew_dir) -> None:
    folder = crew_dir({"crew.yaml": TWO_TASKS.replace("    llm: test\n", "")})
    done = run_crew("kickoff", str(folder), "-i", "topic=tea", "-i", "n=1", cwd=folder)
    assert done.returncode == 2
    assert done.stderr.startswith("crew.yaml:1: llm: no model for 'writer'") and "--llm test" in done.stderr
    assert "OPENAI_API_KEY" in done.stderr and "Traceback" not in done.stderr  # or a provider model and its key
    assert (
        run_crew(
            "kickoff", str(folder), "-i", "topic=tea", "-i", "n=1", "-q", cwd=folder, env=crew_env(CREW_LLM="test")
        ).returncode
        == 0
    )


def test_kickoff_failed_task_is_exit_1_and_says_which(crew_dir) -> None:
    folder = crew_dir(
        {
            "crew.yaml": """
        llm: test
        process: graph
        on_error: continue
        agents:
          writer: {role: Writer, goal: Write}
        tasks:
          picky:
            description: Write something acceptable
            agent: writer
            guardrail: tools:reject
            guardrail_max_retries: 0
          fine:
            description: Write anything
            agent: writer
        """
        }
    )
    done = run_crew("kickoff", str(folder))
    assert done.returncode == 1
    assert "failed: 1 failed, 1 done" in done.stderr
    assert "task 'picky' failed" in done.stderr and "never good enough" in done.stderr
    as_json = run_crew("kickoff", str(folder), "--json", "-q")
    document = json.loads(as_json.stdout)  # the reason, not "error": null
    assert as_json.returncode == 1 and document["status"] == "failed"
    assert document["error"].startswith("task 'picky' failed: ") and "never good enough" in document["error"]


def test_usage_errors_are_exit_2(tmp_path) -> None:
    assert run_crew("kickoff", TRIP, "-i", "novalue").returncode == 2
    (tmp_path / "afile").write_text("")
    not_a_folder = run_crew("kickoff", TRIP, "--out", str(tmp_path / "afile"))
    assert not_a_folder.returncode == 2 and not_a_folder.stderr.strip().endswith("afile: not a folder")
    assert run_crew("kickoff", str(tmp_path / "missing")).stderr.strip().endswith("no such file or folder")
    wrong = run_crew("plot", TRIP, "-o", str(tmp_path / "graph.png"))
    assert wrong.returncode == 2 and "unknown format '.png'" in wrong.stderr
    assert run_crew("kickoff", TRIP, "--bogus").returncode == 2


def test_plot_formats(tmp_path) -> None:
    mermaid = run_crew("plot", TRIP)
    assert mermaid.returncode == 0
    lines = mermaid.stdout.splitlines()
    assert "flowchart LR" in lines and lines.count("    t0 --> t3") == 1
    assert sum("-->" in line for line in lines) == 3  # three scouts feed the plan, nothing else
    for suffix, marker in (
        (".dot", "digraph crew {"),
        (".gv", "t2 -> t3;"),
        (".html", "<svg"),
        (".md", "```mermaid"),
        (".mmd", "flowchart LR"),
        (".mermaid", "flowchart LR"),
    ):
        target = tmp_path / f"graph{suffix}"
        done = run_crew("plot", TRIP, "-o", str(target))
        assert done.returncode == 0 and marker in target.read_text(encoding="utf-8"), suffix


def test_tools_lists_names_descriptions_and_arguments() -> None:
    text = run_crew("tools", str(EXAMPLES / "support_triage"))
    assert text.returncode == 0
    assert "escalate_to_human\n  File a hand-off ticket" in text.stdout
    assert 'priority ("low" | "normal" | "urgent", default "normal")' in text.stdout
    assert "max_usage_count=1" in text.stdout and "result_as_answer" in text.stdout
    assert "cache_function=cache_final_states" in text.stdout
    as_json = json.loads(run_crew("tools", TRIP, "--json").stdout)
    assert [t["function"]["name"] for t in as_json] == ["search_attractions", "weather_outlook"]
    search = as_json[0]["function"]["parameters"]
    assert search["required"] == ["city", "preference"] and search["properties"]["limit"]["default"] == 5


def test_create_scaffolds_a_crew_that_runs_at_once(tmp_path) -> None:
    made = run_crew("create", "my_crew", cwd=tmp_path)
    assert made.returncode == 0
    assert sorted(p.name for p in (tmp_path / "my_crew").iterdir()) == ["README.md", "crew.yaml", "tools.py"]
    assert run_crew("validate", "my_crew", cwd=tmp_path).returncode == 0
    ran = run_crew("kickoff", "my_crew", "--json", "-q", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["tasks_output"][1]["tool_calls"][0]["name"] == "word_count"
    offline = run_crew(
        "kickoff",
        "my_crew",
        "--llm",
        "test",
        "-q",
        cwd=tmp_path,
        env=crew_env(CREW_LLM="openai/gpt-4o-mini", OPENAI_API_KEY=""),
    )
    assert offline.returncode == 0 and offline.stdout.startswith("Test answer for:")  # --llm test beats CREW_LLM
    again = run_crew("create", "my_crew", cwd=tmp_path)
    assert again.returncode == 2 and "already exists" in again.stderr


def test_create_refuses_a_name_that_is_a_path_and_writes_nothing(tmp_path) -> None:
    place = tmp_path / "here"
    place.mkdir()
    for name in ("bad name/../x", "../x", "a/b", "a\\b"):
        done = run_crew("create", name, cwd=place)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert "NAME is the new folder's name, made in the current folder" in done.stderr
    assert list(place.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["here"]


def test_schema_is_json_schema_on_stdout_or_a_file(tmp_path) -> None:
    done = run_crew("schema")
    assert done.returncode == 0
    schema = json.loads(done.stdout)
    assert schema["$schema"].endswith("2020-12/schema") and "Agent" in schema["$defs"]
    assert run_crew("schema", "-o", str(tmp_path / "s.json")).returncode == 0
    assert json.loads((tmp_path / "s.json").read_text()) == schema


@pytest.mark.skipif(os.name != "posix", reason="SIGINT delivery to a child process")
def test_ctrl_c_stops_cleanly_and_says_what_finished(crew_dir) -> None:
    folder = crew_dir(
        {
            "crew.yaml": """
        llm: test
        tools:
          nap: slow:nap
        agents:
          writer: {role: Writer, goal: Write}
          sleeper: {role: Sleeper, goal: Sleep, tools: [nap]}
        tasks:
          quick: {description: Be quick, agent: writer}
          slow: {description: Take a nap, agent: sleeper}
          never: {description: Too late, agent: writer}
        """,
            "slow.py": '''
        import time
        from crew import tool

        @tool
        def nap(minutes: int) -> str:
            """Sleep for a while."""
            time.sleep(30)
            return "rested"
        ''',
        }
    )
    child = subprocess.Popen(
        [sys.executable, "-m", "crew.cli", "kickoff", str(folder), "--live-tools", "--json"],
        cwd=folder,
        env=crew_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stderr is not None
    seen = []
    for line in child.stderr:
        seen.append(line)
        if " slow " in line and "running" in line:
            break
    time.sleep(0.3)  # let the model call the tool
    started = time.monotonic()
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=15)
    assert time.monotonic() - started < 10  # did not wait for the 30 s tool
    assert child.returncode == 130
    assert "crew: interrupted; finished: quick; stopped while running: slow; not started: never" in err, (
        "".join(seen) + err
    )
    document = json.loads(out)  # --json still means one document on stdout
    assert document["status"] == "interrupted" and [t["name"] for t in document["tasks_output"]] == ["quick"]


@pytest.mark.skipif(os.name != "posix", reason="needs a pseudo-terminal")
def test_kickoff_on_a_terminal_redraws_live_progress(tmp_path) -> None:
    import pty
    import threading

    leader, follower = pty.openpty()
    chunks: list[bytes] = []

    def drain() -> None:  # keep reading, so a full pty buffer never blocks the child
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "crew.cli", "kickoff", TRIP, "--out", str(tmp_path)],
            cwd=REPO,
            env=crew_env(TERM="xterm"),
            stdout=subprocess.PIPE,
            stderr=follower,
            text=True,
        )
        out, _ = child.communicate(timeout=60)
    finally:
        os.close(follower)
        reader.join(timeout=5)
        os.close(leader)
    screen = b"".join(chunks)
    assert child.returncode == 0 and out.startswith("Test answer for:")  # stdout stays plain
    text = screen.decode("utf-8", "replace")
    assert "\x1b[" in text and "F\x1b[J" in text  # redrawn in place
    final = text.rsplit("\x1b[J", 1)[-1]
    assert "crew trip_planner (graph)" in final and final.count("✓") == 4 and "(4 done)" in final


@pytest.mark.skipif(os.name != "posix", reason="needs a pseudo-terminal")
def test_live_progress_leaves_verbose_lines_and_the_human_input_prompt_alone(crew_dir) -> None:
    import pty
    import threading

    folder = crew_dir(
        {
            "crew.yaml": """
        llm: test
        agents:
          writer: {role: Writer, goal: Write, verbose: true}
        tasks:
          draft: {description: Draft a note, agent: writer, human_input: true}
        """
        }
    )
    leader, follower = pty.openpty()
    chunks: list[bytes] = []
    answered: list[int] = []

    def converse() -> None:  # read the terminal; accept the output once the prompt has waited a while
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                return
            if not chunk:
                return
            chunks.append(chunk)
            if not answered and b"Feedback for the agent" in b"".join(chunks):
                time.sleep(0.5)  # the live view ticks every 0.1 s: it must not draw over the prompt
                answered.append(len(b"".join(chunks)))
                os.write(leader, b"\n")

    reader = threading.Thread(target=converse, daemon=True)
    reader.start()
    try:
        # stdout is a pipe (`crew kickoff > out.md`): it gets the result only, the prompt goes to the terminal
        child = subprocess.Popen(
            [sys.executable, "-m", "crew.cli", "kickoff", str(folder)],
            cwd=folder,
            env=crew_env(TERM="xterm"),
            stdin=follower,
            stdout=subprocess.PIPE,
            stderr=follower,
        )
        out, _ = child.communicate(timeout=20)  # a prompt nobody can see would wait forever
        time.sleep(0.2)
    finally:
        os.close(follower)
        reader.join(timeout=5)
        os.close(leader)
    data = b"".join(chunks)
    text = data.decode("utf-8", "replace")
    assert child.returncode == 0 and answered, text
    assert out.decode().startswith("Test answer for: Task: Draft a note") and b"Feedback" not in out
    waiting = data[data.index(b"Feedback for the agent") : answered[0]]
    assert b"\x1b[" not in waiting  # nothing drawn while the person reads and types
    lines = terminal_screen(text)
    verbose = [i for i, line in enumerate(lines) if line.startswith("[Writer] draft #1")]
    prompt = [i for i, line in enumerate(lines) if line.startswith("Feedback for the agent")]
    blocks = [i for i, line in enumerate(lines) if line.startswith("crew ")]
    assert len(verbose) == 1 and len(prompt) == 1 and len(blocks) == 1, lines
    assert verbose[0] < prompt[0] < blocks[0] and "✓ draft" in lines[blocks[0] + 1]


def test_kickoff_path_defaults_to_the_current_folder_and_inputs_come_from_json(crew_dir, tmp_path) -> None:
    folder = crew_dir({"crew.yaml": TWO_TASKS})
    inputs = tmp_path / "inputs.json"
    inputs.write_text(json.dumps({"topic": "rye", "n": 5}))
    done = run_crew("kickoff", "--inputs-file", str(inputs), "--json", "-q", cwd=folder)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["tasks_output"][0]["description"] == "Outline rye in 5 points"
    assert (folder / "drafts" / "rye.md").read_text(encoding="utf-8") == document["raw"]


def test_llm_flag_overrides_every_model_the_files_name(crew_dir) -> None:
    folder = crew_dir(
        {
            "crew.yaml": """
        llm: anthropic/claude-3-5-haiku-latest
        agents:
          writer: {role: Writer, goal: Write, llm: openai/gpt-4o-mini}
          editor: {role: Editor, goal: Edit}
        tasks:
          draft: {description: Draft, agent: writer}
          edit: {description: Edit, agent: editor}
        """
        }
    )
    env = crew_env(CREW_LLM="openai/gpt-4o", OPENAI_API_KEY="", ANTHROPIC_API_KEY="")
    done = run_crew("kickoff", str(folder), "--llm", "test", "--json", "-q", env=env)
    assert done.returncode == 0, done.stderr  # offline: no key, no network
    document = json.loads(done.stdout)
    assert [t["model"] for t in document["tasks_output"]] == ["test", "test"]
    assert list(document["usage_by_model"]) == ["test"]


def test_validate_needs_no_model_and_notes_placeholders_without_default(crew_dir) -> None:
    folder = crew_dir({"crew.yaml": TWO_TASKS.replace("    llm: test\n", "")})
    done = run_crew("validate", str(folder), cwd=folder)
    assert done.returncode == 0, done.stderr
    notes = [line.strip() for line in done.stdout.splitlines() if ": note: " in line]
    assert [n.split(": note: ")[0] for n in notes] == [
        "crew.yaml:5: agents.writer.goal",
        "crew.yaml:8: tasks.outline.description",
        "crew.yaml:1: llm",
    ]
    assert "input 'topic' has no default" in notes[0] and "no model for 'writer'" in notes[2]
    at_kickoff = run_crew("kickoff", str(folder), "--llm", "test", cwd=folder)
    assert at_kickoff.returncode == 2 and "input 'topic' has no value" in at_kickoff.stderr


def test_a_crewai_project_validates_with_a_warning_per_unsupported_key(crew_dir) -> None:
    folder = crew_dir(
        {
            "agents.yaml": """
            researcher:
              role: >
                {topic} Senior Data Researcher
              goal: Uncover cutting-edge developments in {topic}
              backstory: >
                You're a seasoned researcher.
              llm: test
              memory: true
            """,
            "tasks.yaml": """
            research_task:
              description: >
                Conduct a thorough research about {topic}
              expected_output: >
                A list with 10 bullet points of the most relevant information about {topic}
              agent: researcher
              create_directory: true
            """,
        }
    )
    done = run_crew("validate", str(folder), cwd=folder)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "tasks.yaml:7: tasks.research_task.create_directory: warning: CrewAI key 'create_directory' is not "
        "supported here and is ignored",
    ]
    ran = run_crew("kickoff", str(folder), "-i", "topic=AI", "--json", "-q", cwd=folder)
    assert ran.returncode == 0 and json.loads(ran.stdout)["tasks_output"][0]["agent"] == "AI Senior Data Researcher"
