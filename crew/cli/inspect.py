"""``crew validate``, ``crew tools`` and ``crew schema``: look at a crew without running it."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from crew.cli import EXIT_FAILED, EXIT_OK, count, llm_option, write_file


def validate(args: argparse.Namespace) -> int:
    """Everything kickoff checks, minus the model and the inputs that may come at kickoff."""
    from crew.cli import load_project
    from crew.config.flow_project import find_flow

    flow = find_flow(args.path)
    if flow is not None:
        from crew.cli.flow_inspect import validate as validate_flow

        return validate_flow(args, flow)

    no_import = getattr(args, "no_import", False)
    llm = getattr(args, "llm", None)
    llm = llm_option(llm)
    project = load_project(args.path, import_code=not no_import, llm=llm)
    for problem in project.warnings:
        print(problem, file=sys.stderr)
    crew = project.crew
    from crew.cli.kickoff import apply_transport

    apply_transport(crew, getattr(args, "transport", None))
    process = getattr(crew.process, "value", crew.process)
    print(f"ok: {', '.join(project.files)}")
    print(
        f"  crew {crew.name}: process {process}, {count(len(crew.agents), 'agent')}, "
        f"{count(len(crew.tasks), 'task')}, {count(len(project.tools), 'tool')}"
    )
    models = _models(crew)
    if models:
        print(f"  models: {', '.join(models)}")
    from crew.agent.modes import protocols_line

    protocols = protocols_line(crew.all_agents(), crew.llm)
    if protocols:
        print(f"  protocol: {protocols}")
    if project.servers:
        print(f"  MCP servers: {', '.join(project.servers)} (configuration checked; nothing started)")
    if project.inputs:
        print(f"  inputs with defaults: {', '.join(sorted(project.inputs))}")
    if no_import:
        print("  --no-import: the folder's modules were not imported; their attributes were not checked")
    for note in project.missing_inputs(project.inputs, level="note") + project.problems.of("note"):
        print(f"  {note}")
    if getattr(args, "check_servers", False) and project.servers:
        from crew.mcp.check import check_servers

        failures = check_servers(list(project.servers.values()))
        for problem in failures.values():
            print(f"crew: {problem}", file=sys.stderr)
        if failures:
            return EXIT_FAILED
        print(f"  MCP servers started and answered: {', '.join(project.servers)}")
    return EXIT_OK


def _models(crew: Any) -> list[str]:
    """Each distinct model of the crew with the transport its calls take (``native``, ``litellm``, ``offline``),
    and for the native one the server it reaches (from the model's ``api_base`` or the environment)."""
    from crew.common.secrets import public_url
    from crew.models.doors import door_of, model_name
    from crew.models.openai_endpoint import endpoint

    specs = [crew.llm, crew.manager_llm]
    for agent in crew.all_agents():
        specs += [agent.llm, agent.function_calling_llm]
    shown: dict[str, None] = {}
    for spec in specs:
        door = door_of(spec)
        if door is None:
            continue
        name = model_name(spec)
        if door == "native":
            base = endpoint(name, getattr(spec, "api_base", None), None).base_url
            door = f"native, {public_url(base)}"
        shown[f"{name} ({door})"] = None
    return list(shown)


def tools(args: argparse.Namespace) -> int:
    """Each tool's name, description and argument schema, as the model will see them."""
    from crew.cli import load_project

    project = load_project(args.path)
    listed = dict(project.tools)
    if project.servers:  # their tools are only known once they run
        from crew.mcp.check import server_tools

        for server_name, server_tools_ in server_tools(list(project.servers.values())).items():
            listed.update({f"{tool.tool_name} (MCP server {server_name})": tool for tool in server_tools_})
    if args.json:
        json.dump([t.to_openai_tool() for t in listed.values()], sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return EXIT_OK
    if not listed:
        print("no tools (declare them under `tools:` or `mcp_servers:` in crew.yaml)")
    for name, tool in listed.items():
        print(_describe(name, tool))
    return EXIT_OK


def _describe(name: str, tool: Any) -> str:
    schema = tool.to_openai_tool()["function"]["parameters"]
    required = set(schema.get("required", ()))
    lines = [name, *(f"  {line}" for line in tool.description.strip().splitlines())]
    properties = schema.get("properties", {})
    lines.append("  arguments:" if properties else "  arguments: none")
    for arg, spec in properties.items():
        kind = _type_of(spec)
        extra = (
            "required"
            if arg in required
            else f"default {json.dumps(spec['default'])}"
            if "default" in spec
            else "optional"
        )
        description = f": {spec['description']}" if spec.get("description") else ""
        lines.append(f"    {arg} ({kind}, {extra}){description}")
    flags = []
    if tool.result_as_answer:
        flags.append("result_as_answer")
    if tool.max_usage_count is not None:
        flags.append(f"max_usage_count={tool.max_usage_count}")
    cache_function = getattr(tool, "cache_function", None)
    if cache_function is not type(tool).model_fields["cache_function"].default:
        flags.append(f"cache_function={getattr(cache_function, '__qualname__', cache_function)}")
    if flags:
        lines.append(f"  {' · '.join(flags)}")
    return "\n".join(lines)


def _type_of(spec: dict[str, Any]) -> str:
    if "enum" in spec:
        return " | ".join(json.dumps(v) for v in spec["enum"])
    if "type" in spec:
        kind = spec["type"]
        if kind == "array" and isinstance(spec.get("items"), dict):
            return f"list of {_type_of(spec['items'])}"
        return kind if isinstance(kind, str) else " or ".join(kind)
    for key in ("anyOf", "oneOf"):
        if key in spec:
            return " or ".join(_type_of(s) for s in spec[key])
    return "any"


def schema(args: argparse.Namespace) -> int:
    """The JSON Schema of crew.yaml, generated from the models."""
    from crew.config import crew_json_schema

    text = json.dumps(crew_json_schema(), indent=2, ensure_ascii=False) + "\n"
    if args.output:
        write_file(args.output, text)
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return EXIT_OK
