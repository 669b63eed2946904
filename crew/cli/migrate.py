"""``crew migrate``: a CrewAI project as a native crew folder, checked before it is written."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from crew.cli import EXIT_OK


def run(args: argparse.Namespace) -> int:
    from crew.config.flow_project import find_flow

    flow = find_flow(args.path)
    if flow is not None:
        return _flow(flow, args.output)
    from crew.cli.output import tool_output_to_stderr
    from crew.config.crewai.migrate import migrate
    from crew.config.problems import display_path

    with tool_output_to_stderr():  # checking the result loads the project: its modules' prints are not output
        migration = migrate(args.path, args.output)
    for path in migration.written:
        print(f"wrote {display_path(path)}", file=sys.stderr)
    for dropped in migration.dropped:
        print(f"  left out (not supported): {dropped}", file=sys.stderr)
    for key in migration.dated:
        name = key.split(".", 1)[-1]
        print(f"  {key}: written as today's value, which stays (pass -i {name}=... to change it)", file=sys.stderr)
    print(f"next: crew validate {display_path(migration.folder)}", file=sys.stderr)
    return EXIT_OK


def _flow(flow: Any, output: str | None) -> int:
    """A CrewAI flow project as a crew-native flow folder (a crew-native one is refused: it is one already)."""
    from crew.cli.output import tool_output_to_stderr
    from crew.config.crewai.migrate_flow import migrate_flow
    from crew.config.problems import display_path
    from crew.errors import ConfigError

    if flow.kind != "crewai":
        raise ConfigError(f"{display_path(flow.file)}: already a crew flow (it imports crew.flow); nothing to migrate")
    with tool_output_to_stderr():
        migration = migrate_flow(flow, output)
    for path in migration.written:
        print(f"wrote {display_path(path)}", file=sys.stderr)
    for crew in migration.crews:
        for dropped in crew.dropped:
            print(f"  left out (not supported): {dropped}", file=sys.stderr)
    print(f"next: crew validate {display_path(migration.folder)}", file=sys.stderr)
    return EXIT_OK
