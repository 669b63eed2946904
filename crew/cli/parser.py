"""The ``crew`` command line: one function per command, each holding every flag of its command.

A new flag is one line in its command's function; a new command is one function, named in
``COMMANDS``. Each command names its handler as ``module:function`` so that ``crew --help``
imports none of them (argparse, not click or typer: the help must answer in well under 0.3 s).
Options several commands share are the ``_..._options`` helpers at the end.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

Command = Callable[[str, str], argparse.ArgumentParser]
"""``command(name, help)``: a new subcommand's parser, with the options every command takes."""

PATH_HELP = (
    "crew folder (crew.yaml, or agents.yaml + tasks.yaml), or a CrewAI project (its root, package folder, "
    "a flow's crew folder or config folder); default: the current folder"
)
RUN_HELP = "a run id or its first characters (`crew runs` lists them)"


def build_parser() -> argparse.ArgumentParser:
    from crew import __version__

    common = _common_options()
    parser = argparse.ArgumentParser(
        prog="crew",
        description="Run and inspect crews of LLM agents declared in YAML.",
        epilog="Try it offline: crew kickoff examples/trip_planner --llm test",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"crew {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, description=help, parents=[common])

    for add in COMMANDS:
        add(command)
    return parser


def _common_options() -> argparse.ArgumentParser:
    """Options every command takes, before or after its name (SUPPRESS: a default never undoes a flag)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show the traceback of errors")
    common.add_argument(
        "--log-level",
        metavar="LEVEL",
        default=argparse.SUPPRESS,
        help="log crew's events at LEVEL (debug, info, warning, error) on stderr",
    )
    common.add_argument(
        "--log-json", action="store_true", default=argparse.SUPPRESS, help="log events as JSON lines (level: info)"
    )
    return common


def kickoff(command: Command) -> None:
    p = command("kickoff", "run a crew and show its progress")
    p.add_argument("path", nargs="?", default=".", metavar="PATH", help=PATH_HELP)
    _input_option(p, "an input for {placeholders} (repeatable); VALUE is read as JSON when it parses, else text")
    p.add_argument("--inputs-file", metavar="FILE", help="inputs from a .json, .yaml or .yml file")
    p.add_argument("--llm", metavar="MODEL", help="use this model for every agent (e.g. test, openai/gpt-4o-mini)")
    _transport_option(p)
    p.add_argument(
        "--live-tools",
        action="store_true",
        help="let the test model really call the tools (default: they do not run; each call gets a stand-in result)",
    )
    p.add_argument("--json", action="store_true", help="print the whole result as one JSON document")
    _stream_option(p)
    p.add_argument("--out", metavar="DIR", help="folder for relative output_file paths (default: current folder)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress display")
    _for_each_options(p)
    _run_options(p)
    p.set_defaults(handler="crew.cli.kickoff:run")


def _for_each_options(p: argparse.ArgumentParser) -> None:
    batch = p.add_argument_group("many kickoffs (--for-each)")
    batch.add_argument(
        "--for-each", metavar="FILE", help="one kickoff per line of FILE (JSON Lines, an object of inputs)"
    )
    batch.add_argument("-o", "--output", metavar="FILE", help="write the JSON Lines results to FILE (default: stdout)")
    batch.add_argument("--ordered", action="store_true", help="write results in input order (default: as they finish)")
    batch.add_argument(
        "--on-error", choices=["continue", "stop"], default="continue", help="after a failed input (default: continue)"
    )
    batch.add_argument("--max-concurrency", type=int, default=4, metavar="N", help="kickoffs at once (default: 4)")
    batch.add_argument("--backend", choices=["local", "ray"], help="where kickoffs run (default: local)")
    batch.add_argument(
        "--address", metavar="ADDR", help="Ray cluster to connect to (default: $RAY_ADDRESS, else start one here)"
    )
    batch.add_argument("--num-cpus", type=int, metavar="N", help="CPUs of a Ray instance started here")


def runs(command: Command) -> None:
    p = command("runs", "list the recorded runs of a crew folder, newest first")
    p.add_argument("path", nargs="?", default=None, metavar="PATH", help=PATH_HELP)
    p.add_argument("--store", metavar="FILE", help="the run store (default: PATH/.crew/runs.db)")
    p.add_argument("-n", "--limit", type=int, default=20, metavar="N", help="show the N newest runs (default 20)")
    p.add_argument("--json", action="store_true", help="print the runs as JSON")
    p.set_defaults(handler="crew.cli.runs:list_runs")


def show(command: Command) -> None:
    p = command("show", "show one run: every task, its output, usage, model and tool calls")
    p.add_argument("run", nargs="?", default=None, metavar="RUN", help=RUN_HELP + "; default: the latest run")
    _store_options(p)
    p.add_argument("--json", action="store_true", help="print everything recorded about the run as JSON")
    p.add_argument("-o", "--output", metavar="FILE.html", help="write the run's timeline as a self-contained page")
    p.set_defaults(handler="crew.cli.runs:show")


def replay(command: Command) -> None:
    p = command("replay", "rerun a task of a recorded run and everything downstream of it")
    p.add_argument("run", default=None, metavar="RUN", help=RUN_HELP)
    p.add_argument("--from", dest="from_task", required=True, metavar="TASK", help="the task to rerun first")
    _continuation_options(p)
    p.set_defaults(handler="crew.cli.runs:replay")


def resume(command: Command) -> None:
    p = command("resume", "continue an interrupted, failed or paused run, running only the unfinished tasks")
    p.add_argument(
        "run", nargs="?", default=None, metavar="RUN", help=RUN_HELP + "; default: the latest unfinished run"
    )
    _continuation_options(p)
    p.set_defaults(handler="crew.cli.runs:resume")


def _continuation_options(p: argparse.ArgumentParser) -> None:
    """What ``replay`` and ``resume`` both take: the store, changed inputs, the model, the output."""
    _store_options(p)
    _input_option(p, "change an input of the run (repeatable)")
    p.add_argument("--llm", metavar="MODEL", help="use this model for every agent (default: the run's)")
    p.add_argument("--json", action="store_true", help="print the whole result as one JSON document")
    _stream_option(p)
    p.add_argument("--out", metavar="DIR", help="folder for relative output_file paths (default: the run's)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress display")
    _budget_options(p)


def approve(command: Command) -> None:
    p = command("approve", "decide the tool calls a paused run waits on (then `crew resume RUN` continues it)")
    p.add_argument("run", metavar="RUN", help=RUN_HELP)
    p.add_argument(
        "call_id",
        nargs="?",
        default=None,
        metavar="CALL_ID",
        help="the waiting call's id (the paused kickoff printed it)",
    )
    p.add_argument("--all", action="store_true", help="decide every call of the run not decided yet (no --args)")
    p.add_argument(
        "--task", metavar="TASK", help="the call's task, when calls of several tasks share its id (the kickoff says so)"
    )
    p.add_argument("--deny", metavar="REASON", help="deny the call; the model reads 'denied by a person: REASON'")
    p.add_argument("--args", metavar="JSON", help="approve it with these arguments instead of the model's")
    _store_options(p)
    p.set_defaults(handler="crew.cli.runs:approve")


def validate(command: Command) -> None:
    p = command("validate", "check a crew without running it (no model or key needed)")
    p.epilog = (
        "validate imports the crew's own modules (tools.py and any import path in crew.yaml), which runs "
        "their code, as kickoff, plot and tools do. For a folder you do not trust, use --no-import."
    )
    p.add_argument("path", nargs="?", default=".", metavar="PATH", help=PATH_HELP)
    p.add_argument(
        "--no-import",
        action="store_true",
        help="run none of the folder's code: check the YAML, names and import paths (syntax, modules) only",
    )
    p.add_argument(
        "--check-servers", action="store_true", help="also start each MCP server and report start-up failures"
    )
    _input_option(p, "a flow's input (repeatable): its state model is built from them, as kickoff builds it")
    p.add_argument(
        "--llm", metavar="MODEL", help="check with this model for every agent, as `kickoff --llm MODEL` would run"
    )
    _transport_option(p)
    p.set_defaults(handler="crew.cli.inspect:validate")


def plot(command: Command) -> None:
    p = command("plot", "draw the task graph, or a flow's steps and routes (Mermaid on stdout by default)")
    p.add_argument("path", nargs="?", default=".", metavar="PATH", help=PATH_HELP)
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write to FILE: .mmd/.mermaid/.md (Mermaid), .dot/.gv (Graphviz), .html (a page)",
    )
    p.set_defaults(handler="crew.cli.plot:run")


def tools(command: Command) -> None:
    p = command("tools", "list each tool with its description and arguments")
    p.add_argument("path", nargs="?", default=".", metavar="PATH", help=PATH_HELP)
    p.add_argument("--json", action="store_true", help="print the tools as JSON (OpenAI function format)")
    p.set_defaults(handler="crew.cli.inspect:tools")


def knowledge(command: Command) -> None:
    p = command("knowledge", "index a crew's knowledge sources, or search them as a task would")
    p.add_argument("path", metavar="PATH", help=PATH_HELP)
    p.add_argument("action", choices=("index", "search"), help="index: index new or changed sources; search: QUERY")
    p.add_argument("query", nargs="?", metavar="QUERY", help="what to search for (search)")
    p.add_argument("--agent", metavar="NAME", help="search as this agent (its own sources too)")
    p.add_argument("--limit", type=int, default=5, metavar="N", help="passages to show (default 5)")
    p.add_argument("--store", metavar="FILE", help="the run store beside which knowledge.db lives")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler="crew.cli.knowledge:run")


def create(command: Command) -> None:
    p = command("create", "make a new crew folder that runs at once (offline with the test model)")
    p.add_argument("name", metavar="NAME", help="name of the folder to create")
    p.set_defaults(handler="crew.cli.scaffold:run")


def migrate(command: Command) -> None:
    p = command("migrate", "write a CrewAI project as a native crew folder (crew.yaml + tools.py)")
    p.add_argument(
        "path", nargs="?", default=".", metavar="PATH", help="the CrewAI project; default: the current folder"
    )
    p.add_argument("-o", "--output", metavar="DIR", help="folder to write (default: crew_native/ in the project)")
    p.set_defaults(handler="crew.cli.migrate:run")


def serve(command: Command) -> None:
    p = command("serve", "serve crews to other programs: an MCP server, an HTTP API or an A2A agent")
    p.add_argument("paths", nargs="+", metavar="PATH", help="crew folders to serve (one tool each)")
    p.add_argument("--mcp", action="store_true", help="an MCP server (on stdio, or streamable HTTP with --http)")
    p.add_argument(
        "--http", metavar="HOST:PORT", help="listen on HOST:PORT (default host 127.0.0.1); without --mcp: the HTTP API"
    )
    p.add_argument("--a2a", metavar="HOST:PORT", help="an A2A agent on HOST:PORT, a skill per crew folder")
    p.add_argument(
        "--token",
        metavar="TOKEN",
        help="HTTP requests must send 'Authorization: Bearer TOKEN' "
        "(default: $CREW_SERVE_TOKEN; required beyond 127.0.0.1)",
    )
    p.add_argument("--max-concurrency", type=int, default=4, metavar="N", help="kickoffs at once (default: 4)")
    p.add_argument("--llm", metavar="MODEL", help="use this model for every agent (e.g. test)")
    p.add_argument("--live-tools", action="store_true", help="let the test model really call the tools")
    _run_options(p)
    p.set_defaults(handler="crew.cli.serve:run")


def schema(command: Command) -> None:
    p = command("schema", "print the JSON Schema of crew.yaml (for editors)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(handler="crew.cli.inspect:schema")


def memory(command: Command) -> None:
    p = command("memory", "list, search, forget or reset what a crew remembers (its memory file)")
    p.add_argument("path", metavar="DIR", help="the crew folder")
    p.add_argument(
        "--file", metavar="FILE", help="the memory file (default: memory.db beside the run store, DIR/.crew/)"
    )
    p.add_argument("--store", metavar="FILE", help="the run store whose folder holds memory.db")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="every record (oldest first)")
    listing.add_argument("--scope", metavar="S", help="only records under the scope S (a path: /crew/NAME)")
    search = actions.add_parser("search", help="the records that best match QUERY, best first")
    search.add_argument("query", metavar="QUERY")
    search.add_argument("--scope", metavar="S", help="search only under the scope S")
    search.add_argument("-n", "--limit", type=int, default=5, metavar="N", help="at most N records (default 5)")
    forget = actions.add_parser("forget", help="remove the record ID")
    forget.add_argument("id", metavar="ID")
    reset = actions.add_parser("reset", help="remove every record (or those under --scope)")
    reset.add_argument("--scope", metavar="S", help="only records under the scope S")
    for sub in (listing, search, forget, reset):
        sub.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print the result as JSON")
    p.set_defaults(handler="crew.cli.memory:run")


COMMANDS: tuple[Callable[[Command], None], ...] = (
    kickoff,
    runs,
    show,
    replay,
    resume,
    approve,
    validate,
    plot,
    tools,
    knowledge,
    create,
    migrate,
    serve,
    schema,
    memory,
)
"""Every command, in the order ``crew --help`` lists them."""


def _run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--store", metavar="FILE", help="record the run in FILE (default: $CREW_STORE, else PATH/.crew/runs.db)"
    )
    p.add_argument("--no-store", action="store_true", help="do not record the run")
    _budget_options(p)


def _input_option(p: argparse.ArgumentParser, help: str) -> None:
    p.add_argument("-i", "--input", dest="inputs", action="append", default=[], metavar="KEY=VALUE", help=help)


def _budget_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-tokens",
        type=int,
        metavar="N",
        help="budget: stop before a model call once the run spent N tokens (--for-each: the whole batch)",
    )
    p.add_argument(
        "--max-cost",
        type=float,
        metavar="USD",
        help="budget: stop before a model call once the run cost USD (--for-each: the whole batch)",
    )


def _transport_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--transport",
        choices=["native", "litellm"],
        help="the door every model call takes: native (OpenAI protocol over aiohttp) or litellm (default: per model)",
    )


def _stream_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--stream",
        action="store_true",
        help="print the models' text as it arrives (with --json: one JSON event per line, JSON Lines)",
    )


def _store_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--path", default=None, metavar="PATH", help="the crew folder (default: the run's, or .)")
    p.add_argument("--store", metavar="FILE", help="the run store (default: PATH/.crew/runs.db)")
