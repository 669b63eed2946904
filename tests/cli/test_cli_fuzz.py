"""Mutated example crews: `crew validate` and `crew kickoff --llm test` end in bounded time, cleanly.

A seeded generator (so every run checks the same cases) breaks the example crew.yaml
files the way people and tools do: lines deleted, doubled, re-indented or cut off,
values swapped for hostile ones (bad tags, aliases, deep nesting, paths that climb,
huge or empty strings, import paths that do not exist). For each mutated folder both
commands must finish within a deadline, print no traceback, exit 0, 1 or 2, and, on a
configuration error (2), say where: ``file:line: key: message``.

The cases run in one child process (the command's ``main`` called in turn, its output
captured), so ~150 cases cost a few seconds instead of a Python start-up each; the
child's own alarm bounds every case, and the test bounds the child.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

from cli_kit import EXAMPLES, REPO, crew_env

SEED = 9
CASES_PER_EXAMPLE = 80
# world_clock (added after the three the fuzz was written on, so last in the seeded sequence: the
# others' cases are unchanged) starts its real MCP server in every kickoff that runs, ~20 times
# the cost of any other case; a quarter of the cases still mutate its mcp_servers block.
CASES_OF = {"world_clock": 20}
CASE_DEADLINE = 10  # seconds: one command on one mutated folder

HOSTILE = [
    "",
    "  ",
    "~",
    "null",
    "-1",
    "0",
    "1e309",
    "!!int x",
    "!!float abc",
    "!!binary ???",
    "!!python/object:os.system ls",
    "*nowhere",
    "&self [*self]",
    "[" * 80 + "]" * 80,
    "{",
    "[a, b",
    "'unterminated",
    "${UNSET_FUZZ_VAR}",
    "${UNSET_FUZZ_VAR:-x}",
    "{missing_placeholder}",
    "../../outside/{city}.md",
    "/tmp/{city}",
    "tools:does_not_exist",
    "nowhere:thing",
    "os:system",
    "x" * 300,
    "? [a, b]",
    "[1, 2, 3]",
    "{a: 1}",
    "yes",
    "sequential",
    "hierarchical",
    "graph",
]

INPUTS = ["../../x", "/tmp/fuzz-abs", "~/fuzz", "x" * 300, "{", "[[[]]]", "", "null", "-5", '{"a": [1, {"b": 2}]}']

WORKER = r"""
import contextlib, io, json, signal, sys, time
from crew.cli import main

class Hang(BaseException):
    pass

def on_alarm(signum, frame):
    raise Hang()

signal.signal(signal.SIGALRM, on_alarm)
deadline = int(sys.argv[1])
for line in sys.stdin:
    argv = json.loads(line)
    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    signal.alarm(deadline)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    except Hang:
        code = "hang"
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    except BaseException as exc:  # escaped main(): a bug by definition
        import traceback
        code = "escaped"
        err.write("Traceback (most recent call last):\n" + "".join(traceback.format_exception(exc)))
    finally:
        signal.alarm(0)
    print(json.dumps({"argv": argv, "code": code, "out": out.getvalue()[-2000:], "err": err.getvalue()[-4000:],
                      "seconds": round(time.monotonic() - started, 3)}), flush=True)
"""


def _mutate(text: str, rng: random.Random) -> str:
    lines = text.splitlines()
    for _ in range(rng.choice([1, 1, 2])):
        if not lines:
            break
        i = rng.randrange(len(lines))
        kind = rng.choice(["delete", "double", "indent", "dedent", "value", "value", "value", "key", "cut", "insert"])
        line = lines[i]
        if kind == "delete":
            del lines[i]
        elif kind == "double":
            lines.insert(i, line)
        elif kind == "indent":
            lines[i] = "  " + line
        elif kind == "dedent":
            lines[i] = line[2:] if line.startswith("  ") else line
        elif kind == "value" and ":" in line:
            head = line.split(":", 1)[0]
            lines[i] = f"{head}: {rng.choice(HOSTILE)}"
        elif kind == "key" and ":" in line:
            head, rest = line.split(":", 1)
            name = head.strip()
            if name:
                cut = rng.randrange(len(name))
                lines[i] = head.replace(name, name[:cut] + name[cut + 1 :] + rng.choice(["", "s", "_x"])) + ":" + rest
        elif kind == "cut":
            lines[i] = line[: rng.randrange(len(line) + 1)]
        elif kind == "insert":
            indent = len(line) - len(line.lstrip())
            lines.insert(
                i, " " * indent + f"{rng.choice(['tools', 'agent', 'context', 'llm', 'zzz'])}: {rng.choice(HOSTILE)}"
            )
    return "\n".join(lines) + "\n"


def _cases(root: Path) -> list[tuple[Path, list[str]]]:
    rng = random.Random(SEED)
    cases = []
    for example in sorted(p for p in EXAMPLES.iterdir() if (p / "crew.yaml").is_file()):
        text = (example / "crew.yaml").read_text(encoding="utf-8")
        for n in range(CASES_OF.get(example.name, CASES_PER_EXAMPLE)):
            folder = root / f"{example.name}_{n}"
            shutil.copytree(example, folder, ignore=shutil.ignore_patterns("__pycache__", "out"))
            (folder / "crew.yaml").write_text(_mutate(text, rng), encoding="utf-8")
            cases.append((folder, ["validate", str(folder)]))
            kickoff = ["kickoff", str(folder), "--llm", "test", "-q", "--out", str(folder / "out")]
            if rng.random() < 0.5:  # hostile inputs too: they fill texts and output paths
                kickoff += ["-i", f"{rng.choice(['city', 'topic', 'order_id', 'days'])}={rng.choice(INPUTS)}"]
            cases.append((folder, kickoff))
    return cases


_LOCATED = re.compile(r"^\S+:\d+: ")
_FLAGGED = re.compile(r"^crew: -i \S+: ", re.M)
"""A usage error located by the command line's own flag (an input no placeholder reads)."""


def test_mutated_example_crews_end_cleanly_in_bounded_time(tmp_path):
    cases = _cases(tmp_path)
    script = tmp_path / "worker.py"
    script.write_text(WORKER, encoding="utf-8")
    feed = "".join(json.dumps(argv) + "\n" for _, argv in cases)
    done = subprocess.run(
        [sys.executable, str(script), str(CASE_DEADLINE)],
        input=feed,
        cwd=tmp_path,
        env={**crew_env(), "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=240,
    )
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(results) == len(cases), done.stderr[-3000:]

    problems = []
    for result in results:
        code, err, what = result["code"], result["err"], " ".join(result["argv"][:2])
        errors = [line for line in err.splitlines() if line and not line.startswith(("crew: ", " "))]
        if code not in (0, 1, 2):
            problems.append(f"{what}: exit {code}")
        elif "Traceback" in err or "Traceback" in result["out"]:
            problems.append(f"{what}: traceback")
        elif "unexpected error" in err:
            problems.append(f"{what}: {err.strip().splitlines()[-1]}")
        elif code == 2 and not any(_LOCATED.match(line) for line in errors) and not _FLAGGED.search(err):
            problems.append(f"{what}: configuration error without file:line: {err.strip()[:300]}")
        elif result["argv"][0] == "validate" and code == 1:
            problems.append(f"{what}: validate failed without a configuration error: {err.strip()[:300]}")
    assert not problems, "\n".join(problems[:20])
    codes = {r["code"] for r in results}
    assert {0, 2} <= codes  # the mutations produce both sound and broken crews
