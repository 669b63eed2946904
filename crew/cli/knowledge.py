"""``crew knowledge PATH index | search QUERY``: a crew's knowledge sources from the command line.

``index`` indexes the crew's and its agents' sources as a kickoff would before its run (new
or changed files only) and says what it did; ``search`` shows what a task asking QUERY would
be given, best first, each passage with its source (and page). Both take ``--json``. The
knowledge file is the one kickoff uses: ``knowledge.db`` beside the run store (``--store``,
``$CREW_STORE``, else ``PATH/.crew/``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from crew.cli import EXIT_OK, UsageError, count
from crew.cli.output import plain


def run(args: argparse.Namespace) -> int:
    from crew.cli import load_project
    from crew.cli.kickoff import store_path
    from crew.knowledge.crew_knowledge import CrewKnowledge, has_knowledge

    project = load_project(args.path)
    crew = project.crew
    if not has_knowledge(crew):
        raise UsageError(
            f"{args.path}: the crew has no knowledge sources (`knowledge:` in crew.yaml, per crew or agent)"
        )
    store, _ = store_path(args.store, Path(args.path))
    prepared = CrewKnowledge.prepare(crew, store=store, embedder=crew.embedder)
    assert prepared is not None  # has_knowledge said so
    try:
        if args.action == "index":
            return _show_index(prepared, args.json)
        if not args.query:
            raise UsageError("crew knowledge PATH search QUERY: give the words to search for")
        return _show_search(prepared, args, crew)
    finally:
        prepared.close()


def _show_index(prepared: Any, as_json: bool) -> int:
    units = prepared.base.units()
    if as_json:
        print(json.dumps({"file": str(prepared.base.path), "sources": units}, indent=2))
        return EXIT_OK
    for unit in units:
        print(f"{plain(unit['source'])}: {count(unit['chunks'], 'chunk')}  ({unit['scope']})")
    print(f"indexed in {prepared.base.path}: {count(len(units), 'source')}")
    return EXIT_OK


def _show_search(prepared: Any, args: argparse.Namespace, crew: Any) -> int:
    agent = _agent(crew, args.agent)
    passages = prepared.passages(agent, args.query, args.limit)
    if args.json:
        rows = [{"id": p.id, "source": p.source, "page": p.page, "score": p.score, "text": p.text} for p in passages]
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    if not passages:
        print("nothing found")
    for i, passage in enumerate(passages, start=1):
        text = " ".join(passage.text.split())
        print(f"{i}. {plain(passage.label)}  (score {passage.score:.4f})\n   {plain(text[:300])}")
    return EXIT_OK


def _agent(crew: Any, name: str | None) -> Any:
    if name is None:
        return None
    agents = {a.name: a for a in crew.all_agents()}
    if name not in agents:
        from crew.common.keywords import did_you_mean

        raise UsageError(f"--agent {name!r}: no such agent{did_you_mean(name, agents)} (agents: {', '.join(agents)})")
    return agents[name]
