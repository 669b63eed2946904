"""``crew create NAME``: a new crew folder that runs at once, offline.

The folder holds a two-agent crew with one tool, so every piece a user edits next
(agents, tasks, a tool in tools.py, inputs) is already there and already works.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from crew.cli import EXIT_OK, UsageError

CREW_YAML = """\
# {name}: a crew of two agents. Run it:
#   crew kickoff {path}                              (offline test model)
#   crew kickoff {path} --llm openai/gpt-4o-mini -i topic="..."
# Reference: docs/yaml.md. Editor completion: crew schema -o crew.schema.json
name: {name}
process: sequential
llm: ${{CREW_LLM:-test}}    # CREW_LLM or --llm picks a real model; "test" runs offline

inputs:
  topic: the history of tea

tools:
  word_count: tools:word_count

agents:
  researcher:
    role: Researcher
    goal: Collect the key facts about {{topic}}
    backstory: You dig up facts quickly and say where they come from.
  writer:
    role: Writer
    goal: Explain {{topic}} clearly to a curious reader
    backstory: You write short, friendly explanations.
    tools: [word_count]

tasks:
  research:
    description: List the five most important facts about {{topic}}.
    expected_output: Five bullet points, one fact each.
    agent: researcher
  write:
    description: >
      Write a short article about {{topic}} from the research notes. Check its length
      with the word_count tool.
    expected_output: An article of about 200 words.
    agent: writer
    context: [research]
    output_file: out/article.md
"""

TOOLS_PY = '''\
"""Tools of the {name} crew: plain functions with a docstring and type hints."""

from crew import tool


@tool
def word_count(text: str) -> int:
    """Count the words of a text.

    Args:
        text: The text to measure.
    """
    return len(text.split())
'''

README = """\
# {name}

A crew made by `crew create`. Files:

- `crew.yaml`: the crew: its agents, tasks, tools and default inputs.
- `tools.py`: the tools the agents may call (listed under `tools:` in crew.yaml).

Commands:

```bash
crew validate {path}                 # check it without running (no model needed)
crew kickoff {path}                  # run it (offline test model unless CREW_LLM or --llm says otherwise)
crew kickoff {path} --llm openai/gpt-4o-mini -i topic="the history of coffee"
crew plot {path} -o graph.html       # draw the task graph
```
"""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_MAX_NAME = 100  # a folder name, also the crew's name in every message: file systems stop at 255 bytes


def _folder_name(given: str) -> str:
    """NAME as the one folder it names in the current folder, or a UsageError saying why not.

    A path (``a/b``, ``../x``, ``bad name/../x``) would make folders elsewhere than
    ``./NAME``, or a crew named after only its last part: it is refused, not reinterpreted.
    """
    if "/" in given or "\\" in given:
        raise UsageError(
            f"create {given!r}: NAME is the new folder's name, made in the current folder; "
            "it cannot hold '/' or '\\' (to make it elsewhere, cd there first)"
        )
    if not _NAME.match(given):
        raise UsageError(
            f"create {given!r}: use letters, digits, '_', '-' or '.' for the name, starting with one of the first two"
        )
    if len(given) > _MAX_NAME:
        raise UsageError(f"create: the name has {len(given)} characters; use at most {_MAX_NAME}")
    return given


def run(args: argparse.Namespace) -> int:
    name = _folder_name(args.name)
    target = Path(name)
    try:
        if target.exists() and (not target.is_dir() or any(target.iterdir())):
            raise UsageError(f"create {name}: {target} already exists and is not empty")
        target.mkdir(parents=True, exist_ok=True)
        values = {"name": name, "path": name}
        (target / "crew.yaml").write_text(CREW_YAML.format(**values), encoding="utf-8")
        (target / "tools.py").write_text(TOOLS_PY.format(**values), encoding="utf-8")
        (target / "README.md").write_text(README.format(**values), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"create {name}: cannot make the folder: {exc.strerror or exc}") from None
    print(f"created {name}/ (crew.yaml, tools.py, README.md)", file=sys.stderr)
    print(f"next: crew kickoff {name}", file=sys.stderr)
    return EXIT_OK
