"""The Python examples of docs/mcp.md and of the "Foreign tools" section of docs/tools.md run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp extra is in the dev extra")
pytest.importorskip("langchain_core", reason="langchain-core is in the dev extra")

DOCS = Path(__file__).resolve().parents[2] / "docs"


def blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.S)


def runnable(path: str, section: str | None = None) -> list[str]:
    text = (DOCS / path).read_text(encoding="utf-8")
    if section is not None:
        text = text.split(section, 1)[1].split("\n## ", 1)[0]
    return blocks(text)


@pytest.mark.parametrize("code", runnable("mcp.md"), ids=lambda c: c.splitlines()[0][:40])
def test_mcp_doc_examples_run(code: str) -> None:
    exec(compile(code, "docs/mcp.md", "exec"), {"__name__": "docs_example"})


def test_foreign_tools_doc_example_runs() -> None:
    (code,) = runnable("tools.md", "## Foreign tools")
    exec(compile(code, "docs/tools.md", "exec"), {"__name__": "docs_example"})
