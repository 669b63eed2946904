"""The Python examples in ``README.md`` and ``docs/*.md`` run, so the docs cannot drift from the code.

The rules (docs/CONTRIBUTING.md says them for writers):

- Every ```` ```python ```` block of a file runs, in order, in **one namespace per file**:
  a page reads top to bottom, and its later examples reuse what earlier ones defined (the
  ``search`` tool, the ``crew``), exactly as a reader pasting them into one script would.
  Each file starts from a fresh namespace.
- No block uses top-level ``await``: pasted into a script it would be a syntax error. Async
  examples define ``async def main()`` and end with ``asyncio.run(main())``.
- A block that imports a package crew does not install (the ``mcp`` or ``otel`` extra,
  ``langchain-core``, ``pytest``) follows text that says how to install it (a ``pip install``
  line within the few lines before the block).
- A **fragment** is only compiled (its syntax is checked), not run: a block whose info
  string says so (```` ```python fragment ````) or that follows an HTML comment starting
  with ``fragment`` (``<!-- fragment: why -->``, invisible on the rendered page). Say why:
  a real API key, a package we do not depend on, a signature listing.
- Blocks run offline (the ``"test"`` model, ``crew.testing``'s doubles and local server) in
  a temporary working directory holding a copy of ``examples/``, so files they write go
  nowhere and paths like ``examples/trip_planner`` work as they do from the repository root.

A failing block's traceback points at its line in the Markdown file.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\n]*)$")
_FRAGMENT_COMMENT = re.compile(r"^\s*<!--\s*fragment\b", re.IGNORECASE)


@dataclass(frozen=True)
class Block:
    """One ```python block: its code, the Markdown line its code starts on, and whether it runs."""

    code: str
    line: int
    fragment: bool


def python_blocks(markdown: str) -> list[Block]:
    """The ```python blocks of a Markdown text, in order (indented ones too, dedented)."""
    lines = markdown.splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, fence, info = opening["indent"], opening["fence"], opening["info"].split()
        start = i + 1
        i = start
        while i < len(lines):
            closing = _FENCE.match(lines[i])
            if closing and closing["fence"].startswith(fence) and not closing["info"].strip():
                break
            i += 1
        if info and info[0].lower() in ("python", "py", "python3"):
            body = [line.removeprefix(indent) for line in lines[start:i]]
            previous = next((lines[j] for j in range(start - 2, -1, -1) if lines[j].strip()), "")
            fragment = "fragment" in (word.lower() for word in info[1:]) or bool(_FRAGMENT_COMMENT.match(previous))
            blocks.append(Block("\n".join(body) + "\n", start + 1, fragment))
        i += 1  # past the closing fence
    return blocks


def _compile(block: Block, filename: str):
    # leading newlines put the code at its line in the Markdown file, for tracebacks
    source = "\n" * (block.line - 1) + block.code
    return compile(source, filename, "exec", dont_inherit=True)


# Packages a doc block may import only after saying how to install them: crew installs none of them.
_EXTRAS = {
    "mcp": "crew-agents[mcp]",
    "opentelemetry": "crew-agents[otel]",
    "langchain_core": "langchain-core",
    "pytest": "pytest",
    "ray": "crew-agents[ray]",
    "starlette": "crew-agents[web-stream]",
}
_IMPORTED = re.compile(r"^\s*(?:from|import)\s+(\w+)", re.M)


def missing_install_notes(markdown: str) -> list[str]:
    """Blocks importing a package crew does not install, with no ``pip install`` of it just before."""
    lines = markdown.splitlines()
    problems = []
    for block in python_blocks(markdown):
        before = "\n".join(lines[max(0, block.line - 12) : block.line - 1])
        for package in sorted(set(_IMPORTED.findall(block.code)) & set(_EXTRAS)):
            if "pip install" not in before or _EXTRAS[package] not in before:
                problems.append(f"line {block.line}: imports {package}; say `pip install {_EXTRAS[package]}` before it")
    return problems


def run_page(path: Path) -> int:
    """Run every non-fragment block of one page in one namespace; returns how many ran."""
    namespace: dict[str, object] = {"__name__": f"docs_{path.stem}"}
    ran = 0
    for block in python_blocks(path.read_text(encoding="utf-8")):
        code = _compile(block, str(path.relative_to(ROOT)))
        if block.fragment:
            continue
        exec(code, namespace)
        ran += 1
    return ran


@pytest.fixture
def docs_cwd(tmp_path, monkeypatch):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CREW_LLM", raising=False)  # examples/ pick "test" unless told otherwise
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):  # nothing may reach a real provider
        monkeypatch.delenv(key, raising=False)
    return tmp_path


@pytest.mark.parametrize("path", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_python_examples_run(path: Path, docs_cwd: Path):
    blocks = python_blocks(path.read_text(encoding="utf-8"))
    ran = run_page(path)
    assert ran == sum(not b.fragment for b in blocks)


@pytest.mark.parametrize("path", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_blocks_that_need_an_extra_say_how_to_install_it(path: Path):
    assert missing_install_notes(path.read_text(encoding="utf-8")) == []


def test_an_import_of_an_extra_without_its_install_line_is_named():
    page = "Use it:\n\n```python\nimport mcp\n```\n\n"
    page += "`pip install 'crew-agents[mcp]'`, then:\n\n```python\nimport mcp\n```\n"
    assert missing_install_notes(page) == ["line 4: imports mcp; say `pip install crew-agents[mcp]` before it"]


def test_a_block_with_top_level_await_is_refused_as_a_script_would_refuse_it():
    block = python_blocks("```python\nawait something()\n```\n")[0]
    with pytest.raises(SyntaxError):
        _compile(block, "page.md")


def test_every_page_with_python_runs_some_of_it():
    """A page whose every block is a fragment teaches nothing the suite checks."""
    for path in PAGES:
        blocks = python_blocks(path.read_text(encoding="utf-8"))
        assert not blocks or any(not b.fragment for b in blocks), f"{path.name}: every block is a fragment"
    assert sum(len(python_blocks(p.read_text(encoding="utf-8"))) for p in PAGES) > 20


def test_block_extraction_and_fragment_markers():
    page = """Intro.

```python
x = 1
```

```python fragment
needs_a_key()
```

<!-- fragment: needs FastAPI -->

```py
import fastapi
```

```bash
not python
```

1. In a list:

   ```python
   if x:
       y = 2
   ```

````markdown
```python
inside another fence: not a block
```
````
"""
    blocks = python_blocks(page)
    assert [(b.line, b.fragment) for b in blocks] == [(4, False), (8, True), (14, True), (24, False)]
    assert blocks[0].code == "x = 1\n"
    assert blocks[3].code == "if x:\n    y = 2\n"


def test_a_failing_block_points_at_its_markdown_line(tmp_path: Path):
    page = tmp_path / "page.md"
    page.write_text("# Page\n\n```python\nok = 1\nraise ValueError(ok)\n```\n", encoding="utf-8")
    block = python_blocks(page.read_text())[0]
    with pytest.raises(ValueError) as info:
        exec(_compile(block, str(page)), {})
    assert info.traceback[-1].lineno + 1 == 5  # pytest's line numbers are 0-based
