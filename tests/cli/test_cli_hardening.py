"""Issue 9 through the real `crew` command: hostile YAML, tools that exit, print or hang, signals, secrets, paths.

Each test here failed before its fix (see the issue's item number in the docstring).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_kit import REPO, crew_env, run_crew

BASE_CREW = """
llm: test
tools:
  {tool}: tools:{tool}
agents:
  a:
    role: r
    goal: g
    backstory: b
    tools: [{tool}]
tasks:
  first:
    description: the first task
    expected_output: text
    agent: a
  second:
    description: the second task
    expected_output: text
    agent: a
    context: [first]
    {second}
"""


def tool_crew(crew_dir, tool: str, body: str, second: str = "", head: str = "import time, sys") -> Path:
    """A crew whose second task calls ``tool`` (the test model calls each tool once)."""
    tools = f'{head}\n\ndef {tool}(text: str) -> str:\n    """A tool."""\n{body}\n'
    yaml = BASE_CREW.format(tool=tool, second=second)
    # only the second task's agent holds the tool: the first finishes cleanly
    yaml = yaml.replace("    tools: [" + tool + "]\n", "")
    yaml = yaml.replace("tasks:\n", f"  b:\n    role: rb\n    goal: g\n    backstory: b\n    tools: [{tool}]\ntasks:\n")
    yaml = yaml.replace("    agent: a\n    context: [first]", "    agent: b\n    context: [first]")
    return crew_dir({"crew.yaml": yaml, "tools.py": tools})


# -- 1. YAML aliases, depth, tags --------------------------------------------------------------


def _alias_bomb(levels: int = 9) -> str:
    lines = ["a0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def test_alias_bomb_in_crew_yaml_is_a_located_error_not_a_hang(crew_dir):
    """Item 1: 9 levels of nested aliases used to make validate run forever."""
    folder = crew_dir(
        {"crew.yaml": "llm: test\ninputs:\n" + "".join("  " + line + "\n" for line in _alias_bomb().splitlines())}
    )
    started = time.monotonic()
    done = run_crew("validate", str(folder), timeout=30)
    assert time.monotonic() - started < 20
    assert done.returncode == 2, done.stderr
    assert (
        "crew.yaml:8:" in done.stderr
    )  # the alias whose expansion crosses the limit and "expands to more than" in done.stderr
    assert "Traceback" not in done.stderr


def test_alias_bomb_in_inputs_file_is_refused(crew_dir, tmp_path):
    """Item 1: the same in --inputs-file used to reach 1 GiB and crash."""
    folder = crew_dir({"crew.yaml": BASE_CREW.format(tool="nap", second="").replace("the first task", "about {a9}")})
    (folder / "tools.py").write_text('def nap(text: str) -> str:\n    """A tool."""\n    return text\n')
    inputs = tmp_path / "in.yaml"
    inputs.write_text(_alias_bomb())
    done = run_crew("kickoff", str(folder), "--inputs-file", str(inputs), "-q", timeout=30)
    assert done.returncode == 2, done.stderr
    assert f"{inputs}:6: cannot read the inputs: expands to more than" in done.stderr


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("llm: test\ninputs:\n  deep: " + "[" * 250 + "]" * 250 + "\n", 3, "nested more than 64 levels deep"),
        ('llm: test\nname: !!int "x"\n', 2, "cannot read this value as int"),
        ("llm: test\ninputs:\n  n: !!float abc\n", 3, "cannot read this value as float"),
        ("llm: test\n? [a, b]\n: 1\n", 2, "a mapping key must be a plain value"),
    ],
)
def test_bad_yaml_values_are_located_errors(crew_dir, text, line, message):
    """Item 11: these were "unexpected error" (exit 1, no file:line)."""
    folder = crew_dir({"crew.yaml": text})
    done = run_crew("validate", str(folder))
    assert done.returncode == 2, done.stderr
    assert f"crew.yaml:{line}:" in done.stderr and message in done.stderr
    assert "unexpected" not in done.stderr


def test_inputs_file_nested_100000_deep_is_a_usage_error(crew_dir, tmp_path):
    """Item 11: JSON nested 100,000 deep in --inputs-file."""
    folder = crew_dir({"crew.yaml": BASE_CREW.format(tool="nap", second="")})
    (folder / "tools.py").write_text('def nap(text: str) -> str:\n    """A tool."""\n    return text\n')
    inputs = tmp_path / "in.json"
    inputs.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    done = run_crew("kickoff", str(folder), "--inputs-file", str(inputs), "-q")
    assert done.returncode == 2 and "nested more than 64 levels deep" in done.stderr, done.stderr
    deep = run_crew("kickoff", str(folder), "-i", "a=" + "[" * 10_000 + "]" * 10_000, "-q")
    assert deep.returncode == 2 and "-i a: the value is nested" in deep.stderr, deep.stderr


# -- 2. timeouts let the process exit ------------------------------------------------------------


def test_a_timed_out_sync_tool_does_not_keep_kickoff_alive(crew_dir):
    """Item 2: the command used to print "timed out" and then wait 10 minutes for the tool."""
    folder = tool_crew(crew_dir, "nap", "    time.sleep(600)\n    return text", second="timeout: 1")
    started = time.monotonic()
    done = run_crew("kickoff", str(folder), "--live-tools", "-q", timeout=30, process=True)  # the process exits
    assert time.monotonic() - started < 15
    assert done.returncode == 1
    assert "task 'second' timed out after 1 s" in done.stderr


def test_a_timed_out_sync_tool_does_not_keep_python_alive(crew_dir):
    """Item 2, in Python: kickoff() returned but the interpreter could not exit."""
    folder = tool_crew(crew_dir, "nap", "    time.sleep(600)\n    return text", second="timeout: 1")
    script = (
        "import sys\nfrom crew.config import load_crew\ncrew = load_crew(sys.argv[1])\n"
        "try:\n    crew.kickoff()\nexcept Exception as exc:\n    print(exc)\n"
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", script, str(folder)], env=crew_env(), capture_output=True, text=True, timeout=30
    )
    assert time.monotonic() - started < 15
    assert done.returncode == 0 and "timed out after 1 s" in done.stdout, done.stderr


# -- 4. what finished is printed when a run fails -------------------------------------------------


def test_a_failed_plain_kickoff_prints_what_finished(crew_dir):
    """Item 4: a failed run without --json printed none of the finished tasks' text."""
    folder = tool_crew(crew_dir, "boom", "    raise RuntimeError('no')", second="guardrail: tools:reject")
    (folder / "tools.py").write_text(
        (folder / "tools.py").read_text() + "\ndef reject(output):\n    return (False, 'never')\n"
    )
    done = run_crew("kickoff", str(folder))
    assert done.returncode == 1
    assert "## first\n" in done.stdout and "the first task" in done.stdout  # the test model echoes its task
    assert "second" not in done.stdout
    assert "printed what finished: first" in done.stderr


# -- 5. a tool's sys.exit / KeyboardInterrupt; sys.exit while importing ------------------------


@pytest.mark.parametrize(
    ("body", "head"),
    [
        ("    sys.exit(7)", "import time, sys"),
        ("    raise KeyboardInterrupt", "import time, sys"),
    ],
)
def test_a_tool_that_exits_is_that_tools_error(crew_dir, body, head):
    """Item 5: sys.exit() in a tool ended the run silently with the tool's code;
    a KeyboardInterrupt from a tool looked like the user's Ctrl-C."""
    folder = tool_crew(crew_dir, "quitter", body, head=head)
    done = run_crew("kickoff", str(folder), "--live-tools", "--json", "-q")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    second = document["tasks_output"][1]
    assert second["status"] == "done"
    assert "tool 'quitter' " in second["raw"]  # the model saw the tool's error as its observation
    assert "interrupted" not in done.stderr


def test_an_async_tool_that_exits_is_that_tools_error(crew_dir):
    folder = crew_dir(
        {
            "crew.yaml": BASE_CREW.format(tool="quitter", second=""),
            "tools.py": 'import sys\n\nasync def quitter(text: str) -> str:\n    """A tool."""\n    sys.exit(3)\n',
        }
    )
    done = run_crew("kickoff", str(folder), "--json", "-q")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "done"


def test_sys_exit_while_importing_tools_is_a_config_error(crew_dir):
    """Item 5: validate exited 7 with no message."""
    folder = crew_dir({"crew.yaml": BASE_CREW.format(tool="nap", second=""), "tools.py": "import sys\nsys.exit(7)\n"})
    done = run_crew("validate", str(folder))
    assert done.returncode == 2
    assert "crew.yaml:3: tools.nap: importing 'tools' failed" in done.stderr
    assert "tools.py" in done.stderr and "sys.exit(7)" in done.stderr


# -- 6. SIGTERM -----------------------------------------------------------------------------------


def _ignore_ctrl_c() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("ctrl_c", ["handled", "ignored"])
def test_sigterm_stops_like_ctrl_c_with_its_own_exit_code(crew_dir, ctrl_c):
    """Item 6: SIGTERM killed kickoff with no orderly shutdown.

    "ignored": started as a script's background job (Ctrl-C ignored), SIGTERM used to stop nothing.
    """
    folder = tool_crew(crew_dir, "nap", "    print('napping', flush=True)\n    time.sleep(600)\n    return text")
    proc = subprocess.Popen(
        [sys.executable, "-m", "crew.cli", "kickoff", str(folder), "--live-tools", "--json", "-q"],
        cwd=REPO,
        env=crew_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_ignore_ctrl_c if ctrl_c == "ignored" else None,
    )
    assert proc.stderr is not None
    try:
        line = proc.stderr.readline()  # the tool prints (to stderr) once the first task is done
        assert "napping" in line
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:  # a failed check leaves no kickoff behind
            proc.kill()
            proc.wait()
    assert proc.returncode == 143
    assert "crew: terminated; finished: first; stopped while running: second" in err
    document = json.loads(out)
    assert document["status"] == "terminated" and [t["name"] for t in document["tasks_output"]] == ["first"]


# -- 7. a tool's print does not corrupt stdout ---------------------------------------------------


def test_a_tools_print_goes_to_stderr(crew_dir):
    """Item 7: a tool's print() went to stdout and broke --json and `> answer.md`."""
    body = "    print('TOOL SAYS HI')\n    os.system('echo FROM A SUBPROCESS')\n    return text"
    folder = tool_crew(crew_dir, "chatty", body, head="import os")
    done = run_crew("kickoff", str(folder), "--live-tools", "--json", "-q")
    assert done.returncode == 0, done.stderr
    json.loads(done.stdout)  # one clean document
    assert "TOOL SAYS HI" not in done.stdout and "FROM A SUBPROCESS" not in done.stdout
    assert "TOOL SAYS HI" in done.stderr and "FROM A SUBPROCESS" in done.stderr


# -- 8. secrets ------------------------------------------------------------------------------------


SECRET = "Zq7-unregistered-looking-value-4411"


def test_a_key_quoted_by_a_tool_is_scrubbed_everywhere(crew_dir, tmp_path):
    """Item 8: a tool exception quoting the key reached the model, the answer and --json."""
    body = "    raise RuntimeError('auth failed for ' + os.environ['SERVICE_API_KEY'])"
    folder = tool_crew(crew_dir, "leaky", body, head="import os", second="output_file: out/second.md")
    done = run_crew(
        "kickoff", str(folder), "--live-tools", "--json", "--out", str(tmp_path), env=crew_env(SERVICE_API_KEY=SECRET)
    )
    assert done.returncode == 0, done.stderr
    assert SECRET not in done.stdout and SECRET not in done.stderr
    assert "auth failed for ***" in done.stdout  # the observation, as the model saw it, in the answer
    assert SECRET not in (tmp_path / "out" / "second.md").read_text()


def test_a_key_in_a_wrong_yaml_field_is_not_echoed(crew_dir):
    """Item 8: `llm.timeout: ... (got 'sk-...')`."""
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8J9k0L1m2"
    folder = crew_dir(
        {
            "crew.yaml": f"llm:\n  model: openai/gpt-4o-mini\n  timeout: {key}\n"
            + BASE_CREW.split("\n", 2)[2].format(tool="nap", second="")
        }
    )
    done = run_crew("validate", str(folder))
    assert done.returncode == 2
    assert "llm.timeout" in done.stderr and key not in done.stderr and "***" in done.stderr


def test_a_secret_env_var_substituted_in_yaml_is_scrubbed(crew_dir):
    """Item 8: a ${VAR} value whose name looks secret, pasted where it is echoed."""
    folder = crew_dir(
        {
            "crew.yaml": "llm: test\nmax_concurrency: ${MY_SERVICE_TOKEN}\n"
            + BASE_CREW.split("\n", 2)[2].format(tool="nap", second="")
        }
    )
    done = run_crew("validate", str(folder), env=crew_env(MY_SERVICE_TOKEN="x" + SECRET))
    assert done.returncode == 2 and "max_concurrency" in done.stderr
    assert "x" + SECRET not in done.stdout + done.stderr and "(got '***')" in done.stderr


# -- 9. output paths built from inputs --------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "inputs"),
    [
        ("{p}.md", ["-i", "p=ABSOLUTE"]),
        ("{p}.md", ["-i", "p=~/crew-escape"]),
        ("out/{a}{b}/x.md", ["-i", "a=.", "-i", "b=."]),
    ],
)
def test_inputs_cannot_move_an_output_file_out_of_its_folder(crew_dir, tmp_path, template, inputs):
    """Item 9, through the command."""
    folder = crew_dir({"crew.yaml": BASE_CREW.format(tool="nap", second=f"output_file: '{template}'")})
    (folder / "tools.py").write_text('def nap(text: str) -> str:\n    """A tool."""\n    return text\n')
    work, home, outside = tmp_path / "work", tmp_path / "home", tmp_path / "outside"
    work.mkdir()
    home.mkdir()
    inputs = [f"p={outside / 'abs'}" if item == "p=ABSOLUTE" else item for item in inputs]
    done = run_crew("kickoff", str(folder), *inputs, "-q", cwd=work, env=crew_env(HOME=str(home)))
    assert done.returncode == 2, done.stderr
    assert "out of its folder" in done.stderr
    assert not outside.exists() and not list(home.iterdir())
    assert not list(tmp_path.rglob("*.md"))


def test_a_literal_home_path_keeps_its_meaning(crew_dir, tmp_path):
    folder = crew_dir({"crew.yaml": BASE_CREW.format(tool="nap", second="output_file: '~/notes/{p}.md'")})
    (folder / "tools.py").write_text('def nap(text: str) -> str:\n    """A tool."""\n    return text\n')
    home = tmp_path / "home"
    home.mkdir()
    done = run_crew("kickoff", str(folder), "-i", "p=today", "-q", cwd=tmp_path, env=crew_env(HOME=str(home)))
    assert done.returncode == 0, done.stderr
    assert (home / "notes" / "today.md").is_file()


def test_a_too_long_output_path_fails_the_task_and_the_summary_still_prints(crew_dir, tmp_path):
    """Item 11: the task failed correctly, then the summary crashed."""
    folder = crew_dir({"crew.yaml": BASE_CREW.format(tool="nap", second="output_file: 'out/{p}.md'")})
    (folder / "tools.py").write_text('def nap(text: str) -> str:\n    """A tool."""\n    return text\n')
    done = run_crew("kickoff", str(folder), "-i", "p=" + "x" * 300, cwd=tmp_path)
    assert done.returncode == 1
    assert "unexpected" not in done.stderr and "task 'second' failed" in done.stderr
    assert "## first" in done.stdout


# -- 11. files named on the command line; 12. --llm ---------------------------------------------------


def test_output_options_create_their_folder_and_names_are_bounded(tmp_path):
    plot = run_crew("plot", str(REPO / "examples" / "trip_planner"), "-o", str(tmp_path / "missing" / "dir" / "g.html"))
    assert plot.returncode == 0, plot.stderr
    assert (tmp_path / "missing" / "dir" / "g.html").is_file()
    schema = run_crew("schema", "-o", str(tmp_path / "other" / "s.json"))
    assert schema.returncode == 0 and json.loads((tmp_path / "other" / "s.json").read_text())
    blocked = tmp_path / "file"
    blocked.write_text("")
    refused = run_crew("schema", "-o", str(blocked / "s.json"))
    assert refused.returncode == 2 and f"-o {blocked / 's.json'}: cannot write it" in refused.stderr
    create = run_crew("create", "n" * 300, cwd=tmp_path)
    assert create.returncode == 2 and "use at most 100" in create.stderr and "unexpected" not in create.stderr


@pytest.mark.parametrize("value", ["  ", ""])
def test_a_blank_llm_option_is_a_usage_error(value):
    """Item 12: `--llm "  "` ran and failed every task; `--llm ""` was silently ignored."""
    done = run_crew("kickoff", str(REPO / "examples" / "trip_planner"), "--llm", value, "-q")
    assert done.returncode == 2
    assert "--llm needs a model name" in done.stderr


@pytest.mark.parametrize("value", ["openai/", "/gpt-4o", "openai//"])
def test_an_llm_option_without_a_model_or_provider_is_a_usage_error(value):
    """`--llm openai/` passed validate and then failed every task with litellm's credentials error."""
    for command in ("validate", "kickoff"):
        done = run_crew(command, str(REPO / "examples" / "trip_planner"), "--llm", value)
        assert done.returncode == 2, (command, done.stderr)
        assert f"--llm {value!r}: model {value!r}" in done.stderr and "Traceback" not in done.stderr


def test_a_yaml_model_without_a_model_after_its_provider_is_located(tmp_path):
    folder = tmp_path / "trip"
    shutil.copytree(REPO / "examples" / "trip_planner", folder)
    crew_file = folder / "crew.yaml"
    lines = crew_file.read_text().splitlines()
    number = next(i for i, line in enumerate(lines) if line.startswith("llm:"))
    lines[number] = "llm: anthropic/"
    crew_file.write_text("\n".join(lines) + "\n")
    done = run_crew("validate", str(folder))
    assert done.returncode == 2
    assert f"crew.yaml:{number + 1}: llm: model 'anthropic/' names the provider 'anthropic' but no model" in done.stderr


# -- also decided: untrusted folders ---------------------------------------------------------------------


def test_validate_no_import_runs_none_of_the_folders_code(crew_dir, tmp_path):
    marker = tmp_path / "ran"
    tools = (
        f'open({str(marker)!r}, \'w\').write(\'x\')\n\ndef nap(text: str) -> str:\n    """A tool."""\n    return text\n'
    )
    folder = crew_dir({"crew.yaml": BASE_CREW.format(tool="nap", second=""), "tools.py": tools})
    done = run_crew("validate", str(folder), "--no-import")
    assert done.returncode == 0, done.stderr
    assert not marker.exists() and "--no-import" in done.stdout
    missing = crew_dir({"crew.yaml": BASE_CREW.format(tool="nap", second="").replace("tools:nap", "nowhere:nap")}, "m")
    bad = run_crew("validate", str(missing), "--no-import")
    assert bad.returncode == 2 and "no module 'nowhere'" in bad.stderr
    assert not marker.exists()
    run_crew("validate", str(folder))
    assert marker.exists()  # without the flag the folder's code runs, as documented
    assert "--no-import" in run_crew("validate", "--help").stdout


def test_a_tool_from_the_standard_librarys_process_modules_is_a_warning(crew_dir):
    folder = crew_dir({"crew.yaml": BASE_CREW.format(tool="nap", second="").replace("tools:nap", "os:system")})
    done = run_crew("validate", str(folder))
    assert done.returncode == 0, done.stderr
    assert "crew.yaml:3: tools.nap: warning: tool 'nap' is 'os:system'" in done.stderr


def test_sigterm_handler_is_not_left_installed_by_main(tmp_path):
    from crew.cli import main

    before = signal.getsignal(signal.SIGTERM)
    assert main(["schema", "-o", str(tmp_path / "s.json")]) == 0
    assert signal.getsignal(signal.SIGTERM) is before
    assert os.path.exists(tmp_path / "s.json")
