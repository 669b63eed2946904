"""The ``mcp_servers:`` section of crew.yaml: each entry becomes an ``MCPServer`` (nothing is started).

```yaml
mcp_servers:
  time: {command: mcp-server-time, args: [--local-timezone, UTC], env: {TZ: UTC}}
  docs: {url: "http://127.0.0.1:3001/mcp", headers: {Authorization: "Bearer ${DOCS_TOKEN}"}, prefix: docs}
  legacy: {url: "http://127.0.0.1:3002/sse", transport: sse, call_timeout: 600}
```

``${VAR}`` works in every string (the loader fills it, and reports an unset one with its
line). A ``command`` that does not exist or is not executable is reported here, so
``crew validate`` catches it without starting anything.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from crew.common.keywords import did_you_mean
from crew.config.loader import YamlMap

if TYPE_CHECKING:
    from crew.config.build import Builder
    from crew.config.entries import Entry

# key -> (what it takes, a check of the value)
_KEYS: dict[str, str] = {
    "command": "the program that runs a stdio server",
    "args": "its command-line arguments (a list of strings)",
    "env": "environment variables added for the server (a mapping)",
    "cwd": "the folder the server runs in (relative to the crew folder)",
    "url": "the URL of a streamable HTTP or SSE server",
    "headers": "HTTP headers sent to the server (a mapping)",
    "transport": "http (streamable HTTP, the default for url) or sse",
    "tool_filter": "the server's tool names to keep (a list)",
    "prefix": "prefix for the tool names (prefix_name)",
    "timeout": "seconds allowed for start-up and the handshake",
    "call_timeout": "seconds one tool call may take (300 by default)",
    "approve_destructive": "true: the tools the server marks destructiveHint wait for a person's approval",
}


def build_servers(builder: Builder, entries: list[Entry]) -> dict[str, Any]:
    """An ``MCPServer`` per valid entry, named by its key; every problem located in the file."""
    servers: dict[str, Any] = {}
    for entry in entries:
        server = _server(builder, entry)
        if server is not None:
            servers[entry.name] = server
    return servers


_NEEDS = "an MCP server needs `command:` (a stdio server) or `url:` (an HTTP server)"


def _server(builder: Builder, entry: Entry) -> Any:
    data = entry.data
    if data is None or (isinstance(data, YamlMap) and not data):
        builder.error(entry, "", _NEEDS)
        return None
    if not isinstance(data, YamlMap):
        builder.error(entry, "", "expected a mapping with `command:` or `url:` (and args, env, prefix ...)")
        return None
    unknown = [key for key in data if key not in _KEYS]
    for key in unknown:
        builder.error(entry, key, f"unknown key '{key}'{did_you_mean(str(key), list(_KEYS))}")
    values, wrong = _checked(builder, entry, data)
    if "command" in data and "url" in data:
        builder.error(entry, "url", "give `command:` (stdio) or `url:` (HTTP), not both")
        return None
    if "command" not in data and "url" not in data:
        builder.error(entry, "", _NEEDS)
        return None
    misplaced = _misplaced(builder, entry, data)
    if unknown or wrong or misplaced:
        return None
    return _make(builder, entry, values)


def _checked(builder: Builder, entry: Entry, data: YamlMap) -> tuple[dict[str, Any], bool]:
    """The known keys' values as plain data, and whether any was reported wrong."""
    values: dict[str, Any] = {}
    wrong = False
    for key, check in _CHECKS.items():
        if key not in data:
            continue
        problem = check(data[key])
        if problem is not None:
            builder.error(entry, key, problem)
            wrong = True
        else:
            values[key] = _plain(data[key])
    return values, wrong


def _misplaced(builder: Builder, entry: Entry, data: YamlMap) -> bool:
    """Keys of the other kind of server (``headers`` on a stdio one ...), each reported."""
    stdio = "command" in data
    misplaced = [k for k in (("headers", "transport") if stdio else ("args", "env", "cwd")) if k in data]
    for key in misplaced:
        builder.error(entry, key, f"`{key}` applies to {'HTTP' if stdio else 'stdio'} servers only")
    return bool(misplaced)


def _make(builder: Builder, entry: Entry, values: dict[str, Any]) -> Any:
    from crew.mcp.server import DEFAULT_CALL_TIMEOUT, MCPServer

    common = {
        "name": entry.name,
        "tool_filter": values.get("tool_filter"),
        "prefix": values.get("prefix"),
        "timeout": float(values.get("timeout", 30)),
        "call_timeout": float(values.get("call_timeout", DEFAULT_CALL_TIMEOUT)),
        "approve_destructive": values.get("approve_destructive", False),
    }
    if "command" in values:
        cwd = values.get("cwd")
        if cwd is not None:
            cwd = str((builder.folder / cwd).resolve())
        command = values["command"]
        if ("/" in command) and not command.startswith("/"):  # ./server.py: relative to the crew folder
            command = str((builder.folder / command).resolve())
        server = MCPServer.stdio(
            command, args=[str(a) for a in values.get("args", [])], env=values.get("env"), cwd=cwd, **common
        )
        problem = server.command_problem()
        if problem is not None:
            builder.error(entry, "command", problem)
            return None
        return server
    headers = values.get("headers")
    if values.get("transport", "http") == "sse":
        return MCPServer.sse(values["url"], headers=headers, **common)
    return MCPServer.http(values["url"], headers=headers, **common)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _text(value: Any) -> str | None:
    return None if isinstance(value, str) and value.strip() else "expected a non-empty string"


def _strings(value: Any) -> str | None:
    if not isinstance(value, list) or not all(
        isinstance(v, str | int | float) and not isinstance(v, bool) for v in value
    ):
        return "expected a list of strings"
    return None


def _mapping(value: Any) -> str | None:
    if not isinstance(value, dict) or not all(isinstance(v, str | int | float) for v in value.values()):
        return "expected a mapping of names to strings"
    return None


def _positive(value: Any) -> str | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 0
    return None if ok else "expected a positive number of seconds"


def _flag(value: Any) -> str | None:
    return None if isinstance(value, bool) else f"expected true or false, got {value!r}"


def _transport(value: Any) -> str | None:
    return None if value in ("http", "sse") else f"expected http or sse, got {value!r}"


# key -> the check of its value (None when good, else what is wrong)
_CHECKS: dict[str, Callable[[Any], str | None]] = {
    "command": _text,
    "url": _text,
    "cwd": _text,
    "prefix": _text,
    "args": _strings,
    "tool_filter": _strings,
    "env": _mapping,
    "headers": _mapping,
    "timeout": _positive,
    "call_timeout": _positive,
    "transport": _transport,
    "approve_destructive": _flag,
}
