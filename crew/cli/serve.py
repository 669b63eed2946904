"""``crew serve DIR... --mcp [--http HOST:PORT]`` (an MCP server) or ``--http HOST:PORT`` alone (an HTTP API).

Everything a user can get wrong is checked before anything listens: the folders load (the
loader's file/line/key errors), the mode and the address parse, a non-loopback address
has a token. Each folder's runs are recorded in its own store (``--store``, else
``$CREW_STORE``, else ``DIR/.crew/runs.db``), as ``crew kickoff`` records them, so
``crew runs``, ``crew show``, ``crew approve`` and ``crew resume`` work on served runs too.
The MCP SDK, Starlette and uvicorn are imported only here, when the command runs.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from crew.cli import UsageError, llm_option


def run(args: argparse.Namespace) -> int:
    from crew.serve.guard import parse_bind, server_token

    if args.a2a is not None and (args.mcp or args.http is not None):
        raise UsageError("--a2a is a mode of its own: serve MCP or the HTTP API from another `crew serve`")
    if not args.mcp and args.http is None and args.a2a is None:
        raise UsageError(
            "crew serve needs a mode: --mcp (MCP on stdio, or streamable HTTP with --http HOST:PORT), "
            "--http HOST:PORT alone (an HTTP API for web apps), or --a2a HOST:PORT (an A2A agent)"
        )
    if args.max_concurrency < 1:
        raise UsageError(f"--max-concurrency must be at least 1, got {args.max_concurrency}")
    bind, option = None, "--a2a" if args.a2a is not None else "--http"
    address: str | None = args.a2a if args.a2a is not None else args.http
    if address is not None:
        try:
            bind = parse_bind(address, option)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    token = server_token(args.token)
    if bind is not None and not bind.loopback and token is None:
        raise UsageError(
            f"{option} {bind}: listening beyond this machine needs a token: pass --token TOKEN or set "
            "CREW_SERVE_TOKEN (clients then send 'Authorization: Bearer TOKEN'), or bind 127.0.0.1"
        )
    served = _load(args)
    return _serve(args, served, bind, token)


def _load(args: argparse.Namespace) -> list[Any]:
    from crew.cli.kickoff import apply_budgets, open_store, store_path
    from crew.cli.output import tool_output_to_stderr
    from crew.serve.served import load_served, unique_names

    llm = llm_option(args.llm)
    served = []
    stores: dict[str, Any] = {}  # one connection per store file, whichever crews share it
    with tool_output_to_stderr():  # a tools.py that prints while it loads must not reach stdout (stdio: the wire)
        for path in args.paths:
            one = load_served(path, llm=llm, live_tools=args.live_tools)
            apply_budgets(one.crew, args)  # --max-tokens / --max-cost: for each run of the crew
            for warning in one.warnings:
                print(warning, file=sys.stderr)
            if not args.no_store and one.folder is not None:
                folder = one.folder
                path = str(store_path(args.store, folder)[0].resolve())
                one.store = stores.get(path) or stores.setdefault(path, open_store(args.store, folder))
            served.append(one)
    unique_names(served)
    return served


def _serve(args: argparse.Namespace, served: list[Any], bind: Any, token: str | None) -> int:
    from crew.serve.hosting import serve_asgi, serve_stdio
    from crew.serve.kickoffs import Kickoffs
    from crew.serve.mcp_server import build_mcp_server

    kickoffs = Kickoffs(args.max_concurrency)
    names = ", ".join(one.name for one in served)
    if args.a2a is not None:
        import os

        # The a2a-sdk wraps every call of its server in an OpenTelemetry span: a cost on each request,
        # off unless the user turns it on (OTEL_INSTRUMENTATION_A2A_SDK_ENABLED=true).
        os.environ.setdefault("OTEL_INSTRUMENTATION_A2A_SDK_ENABLED", "false")
        from crew.serve.a2a_agent import build_a2a_app
        from crew.serve.guard import guarded

        url = f"http://{bind}/"
        app = build_a2a_app(served, kickoffs, url, token=token is not None)
        announce = f"crew serve: A2A agent at {url} (card: {url}.well-known/agent-card.json; skills: {names})"
        asyncio.run(serve_asgi(guarded(app, token), bind, kickoffs, announce=announce))
        return 0
    if not args.mcp:
        from crew.serve.guard import guarded
        from crew.serve.http_api import HttpApi

        api = HttpApi(served, kickoffs)
        announce = f"crew serve: HTTP API on http://{bind}/crews (crews: {names})"
        asyncio.run(serve_asgi(guarded(api.app, token), bind, kickoffs, announce=announce))
        return 0
    server = build_mcp_server(served, kickoffs)
    if bind is None:
        print(f"crew serve: MCP on stdio (tools: {names})", file=sys.stderr, flush=True)
        asyncio.run(serve_stdio(server.run_stdio_async, kickoffs))
        return 0
    from crew.serve.guard import guarded

    app = server.streamable_http_app(host=bind.host)
    announce = f"crew serve: MCP on http://{bind}/mcp (tools: {names})"
    asyncio.run(serve_asgi(guarded(app, token), bind, kickoffs, announce=announce))
    return 0
