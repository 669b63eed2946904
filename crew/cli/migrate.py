"""``crew migrate``: a CrewAI project as a native crew folder, checked before it is written."""

from __future__ import annotations

import argparse
import sys

from crew.cli import EXIT_OK


def run(args: argparse.Namespace) -> int:
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
