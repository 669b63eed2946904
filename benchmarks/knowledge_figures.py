"""Knowledge figures: ingest speed (a 10 MB text corpus, a 100-page PDF) and retrieval quality.

Run: python benchmarks/knowledge_figures.py (``main(say)`` prints them through ``say``, for a script that
gathers memory's and knowledge's figures, such as ``benchmarks/memory.py``)

- Ingest: chunks per second through ``KnowledgeBase.ingest`` (read, chunk at CrewAI's 4000/200,
  embed, write), with the offline embedder (WordLlama) and with keywords only.
- Retrieval: recall@5 over the labelled set ``benchmarks/knowledge_questions.json`` (questions
  over crew's own ``docs/*.md``, each with the section that answers it): a question counts when
  one of the 5 passages found overlaps its section. Keywords alone (FTS5 BM25) beside hybrid
  (BM25 + WordLlama vectors, fused by reciprocal rank), on the same chunks (1000/100 characters,
  so a passage is about one section).

Everything runs in a temporary folder; nothing is downloaded.
"""

from __future__ import annotations

import json
import random
import re
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from crew.knowledge import PDFKnowledgeSource, TextFileKnowledgeSource  # noqa: E402
from crew.knowledge.base import KnowledgeBase  # noqa: E402
from crew.testing.pdf import write_pdf  # noqa: E402

QUESTIONS = Path(__file__).with_name("knowledge_questions.json")
INGEST_GOAL = 100.0
"""Chunks per second at least, with the offline embedder (a 10 MB corpus in under 30 s)."""
RECALL_GOAL = 0.8
"""recall@5 of hybrid search at least; and hybrid at least as good as keywords alone."""
RETRIEVAL_CHUNK = (1000, 100)


def corpus(path: Path, size: int) -> Path:
    """``size`` bytes of text made of the docs' own words, in sentences (so BM25 has real statistics)."""
    words = re.findall(r"[A-Za-z]{3,}", " ".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md")))
    rng = random.Random(7)
    with path.open("w", encoding="utf-8") as out:
        written = 0
        while written < size:
            line = " ".join(rng.choices(words, k=rng.randint(8, 24))).capitalize() + ".\n"
            out.write(line)
            written += len(line)
    return path


def timed_ingest(folder: Path, source: object, embedder: str | None) -> tuple[int, float, float]:
    """Chunks written, wall seconds, CPU seconds (of every thread: on a loaded machine the
    wall time grows with the load, the CPU time much less)."""
    with KnowledgeBase(folder / f"k-{embedder}.db", folder=folder, embedder=embedder) as base:
        started, cpu = time.perf_counter(), time.process_time()
        report = base.ingest("/bench", [source])  # type: ignore[list-item]
        return report.chunks, time.perf_counter() - started, time.process_time() - cpu


@dataclass(frozen=True)
class Section:
    file: str
    title: str
    start: int
    end: int


def sections(path: Path, relative: str) -> list[Section]:
    """The headings of a Markdown file (outside code blocks), each with the text span it rules."""
    text = path.read_text(encoding="utf-8")
    found: list[tuple[int, int, str]] = []
    offset, fenced = 0, False
    for line in text.splitlines(keepends=True):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and (match := re.match(r"(#{1,6}) (.*)", line)):
            found.append((offset, len(match[1]), match[2].strip()))
        offset += len(line)
    out = []
    for i, (start, level, title) in enumerate(found):
        end = next((s for s, lv, _ in found[i + 1 :] if lv <= level), len(text))
        out.append(Section(relative, title, start, end))
    return out


def recall_at_5(embedder: str | None, folder: Path) -> tuple[float, int]:
    size, overlap = RETRIEVAL_CHUNK
    docs = sorted((ROOT / "docs").glob("*.md"))
    spans = {f"docs/{p.name}": sections(p, f"docs/{p.name}") for p in docs}
    labelled = json.loads(QUESTIONS.read_text(encoding="utf-8"))["questions"]
    source = TextFileKnowledgeSource(file_paths=[str(p) for p in docs], chunk_size=size, chunk_overlap=overlap)
    with KnowledgeBase(folder / f"docs-{embedder}.db", folder=ROOT, embedder=embedder) as base:
        base.ingest("/docs", [source])
        hits = 0
        for item in labelled:
            [answer] = [s for s in spans[item["file"]] if s.title == item["section"]]
            found = base.search(item["q"], ["/docs"], limit=5)
            hits += any(_overlaps(p, answer, size - overlap, size) for p in found)
    return hits / len(labelled), len(labelled)


def _overlaps(passage: object, answer: Section, step: int, size: int) -> bool:
    source = Path(getattr(passage, "source", ""))
    if f"docs/{source.name}" != answer.file:
        return False
    index = int(str(getattr(passage, "id", "")).rsplit("-", 1)[-1])
    start = index * step
    return start < answer.end and answer.start < start + size


def main(say: Callable[[str], None] = print) -> None:
    say("knowledge (the machine may be loaded: figures move)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        corpus(folder / "corpus.txt", 10 * 1024 * 1024)
        lines = "\n".join(f"Line {i}: the headset battery lasts about two hours of play." for i in range(40))
        pages = [f"Page {n}\n{lines}" for n in range(100)]
        write_pdf(folder / "manual.pdf", pages)
        for embedder, label in ((None, "offline embedder"), ("none", "keywords only")):
            chunks, wall, cpu = timed_ingest(folder, TextFileKnowledgeSource(file_paths="corpus.txt"), embedder)
            goal = f"goal >= {INGEST_GOAL:.0f}/s of CPU" if embedder is None else "no goal"
            say(
                f"  ingest 10 MB text, {label}: {chunks} chunks, {wall:.1f} s wall ({chunks / wall:,.0f}/s), "
                f"{cpu:.1f} s CPU ({chunks / cpu:,.0f}/s; {goal})"
            )
            chunks, wall, cpu = timed_ingest(folder, PDFKnowledgeSource(file_paths="manual.pdf"), embedder)
            say(
                f"  ingest 100-page PDF, {label}: {chunks} chunks, {wall:.1f} s wall ({100 / wall:,.0f} pages/s), "
                f"{cpu:.1f} s CPU ({100 / cpu:,.0f} pages/s)"
            )
        keywords, count = recall_at_5("none", folder)
        hybrid, _ = recall_at_5(None, folder)
        verdict = "ok" if hybrid >= RECALL_GOAL and hybrid >= keywords else "BELOW GOAL"
        say(f"  recall@5 over {count} questions on docs/*.md: keywords {keywords:.2f} | hybrid {hybrid:.2f}")
        say(f"    (goal: hybrid >= {RECALL_GOAL} and >= keywords) {verdict}")


if __name__ == "__main__":
    main()
