"""``crew memory DIR list | search QUERY | forget ID | reset [--scope S]``: a crew's memory file.

The file is the one a kickoff of ``DIR`` uses: ``memory.db`` beside its run store (``--store``,
``$CREW_STORE``, else ``DIR/.crew/``), or ``--file``. Reading never creates one. A search embeds
the query with the embedder the file records (the offline one by default), so it ranks as the
crew's own recalls do; listing, forgetting and resetting need no embedder. CrewAI's
``reset-memories`` is ``crew memory DIR reset``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from crew.cli import EXIT_FAILED, EXIT_OK, count
from crew.cli.kickoff import store_path
from crew.cli.output import plain


def run(args: argparse.Namespace) -> int:
    from crew.errors import SearchIndexError

    path = _memory_file(args)
    if not path.is_file():
        raise SearchIndexError(f"no memory file at {path}: a crew with `memory: true` writes it when it runs")
    return _ACTIONS[args.action](args, path)


def _memory_file(args: argparse.Namespace) -> Path:
    if args.file:
        return Path(args.file)
    store, _own = store_path(args.store, args.path)
    return store.parent / "memory.db"


def _open(path: Path, *, for_search: bool = False) -> Any:
    from crew.memory.memory import COLLECTION, Memory
    from crew.search import SearchIndex

    recorded = SearchIndex.recorded(path, COLLECTION)
    name = recorded[0] if recorded and recorded[0] else "none"
    return Memory(path, embedder=name if for_search else "none")


def _list(args: argparse.Namespace, path: Path) -> int:
    with _open(path) as memory:
        records = memory.list_records(args.scope)
    if args.json:
        _json([_record(r) for r in records])
        return EXIT_OK
    for record in records:
        print(plain(_line(record)))
    print(f"{count(len(records), 'record')} in {path}", file=sys.stderr)
    return EXIT_OK


def _search(args: argparse.Namespace, path: Path) -> int:
    with _open(path, for_search=True) as memory:
        matches = memory.recall(args.query, limit=max(args.limit, 0), scope=args.scope)
    if args.json:
        _json([{**_record(m.record), "score": m.score} for m in matches])
        return EXIT_OK
    for match in matches:
        print(plain(f"{match.score:.4f}  {_line(match.record)}"))
    if not matches:
        print("no record matches", file=sys.stderr)
    return EXIT_OK


def _forget(args: argparse.Namespace, path: Path) -> int:
    with _open(path) as memory:
        forgotten = memory.forget(args.id)
    if args.json:
        _json({"id": args.id, "forgotten": forgotten})
    elif forgotten:
        print(f"forgot {args.id}", file=sys.stderr)
    else:
        print(f"crew: no record '{args.id}' in {path} (`crew memory DIR list` shows the ids)", file=sys.stderr)
    return EXIT_OK if forgotten else EXIT_FAILED


def _reset(args: argparse.Namespace, path: Path) -> int:
    with _open(path) as memory:
        removed = memory.reset(args.scope)
    if args.json:
        _json({"removed": removed, "scope": args.scope or "/"})
    else:
        where = f" under {args.scope}" if args.scope else ""
        print(f"removed {count(removed, 'record')}{where} from {path}", file=sys.stderr)
    return EXIT_OK


_ACTIONS = {"list": _list, "search": _search, "forget": _forget, "reset": _reset}


def _record(record: Any) -> dict[str, Any]:
    return {
        "id": record.id,
        "content": record.content,
        "scope": record.scope,
        "metadata": dict(record.metadata),
        "created_at": record.created_at,
    }


def _line(record: Any) -> str:
    text = " ".join(record.content.split())
    text = text if len(text) <= 100 else text[:99] + "…"
    return f"{record.id}  {record.scope}  {text}"


def _json(value: Any) -> None:
    json.dump(value, sys.stdout, ensure_ascii=False, indent=2, default=str)
    sys.stdout.write("\n")
