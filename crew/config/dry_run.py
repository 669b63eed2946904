"""Dry runs: the test model's tool calls answered by stand-ins, so pointing it at real tools is safe.

``crew kickoff --llm test`` promises no key and no network, yet the test model calls every
tool it is given, with invented arguments: on a crew with real MCP servers that writes
files, changes a memory server, and makes a fetch server reach out. On the command line
its calls are therefore dry unless ``--live-tools`` is given: each tool of an agent that
talks to the test model is replaced by a :class:`StandInTool` with the tool's name,
manual and argument checks, whose result is built from the tool's output schema (or is a
plain marked text). The tool itself never runs. MCP servers still start (their tools must
be listed), but no call reaches them.

A stand-in's text begins with ``STAND_IN`` (``crew.tools.messages``), which is how the
progress view and the run store mark it. Everything else about the call is real: the
executor validates, caches, counts usage limits and asks for approvals as it always does.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any

from pydantic import Field

from crew.testing import TestModel, example_value
from crew.tools.base import BaseTool
from crew.tools.messages import STAND_IN, RunContext

__all__ = ["DryServer", "StandInTool", "offline"]


class StandInTool(BaseTool):
    """A tool's double for a dry run: its name, manual and argument checks; a stand-in for its result."""

    original: Any = Field(exclude=True, repr=False)
    inputs: dict[str, Any] = Field(default_factory=dict, exclude=True, repr=False)

    @classmethod
    def of(cls, tool: BaseTool, inputs: Mapping[str, Any] | None = None) -> StandInTool:
        """The stand-in of ``tool``: what the executor reads of a tool (limits, cache, approval) is the tool's."""
        return cls(
            name=tool.name,
            description=tool.description,
            args_schema=tool.args_schema,
            result_schema=tool.result_schema,
            cache_function=tool.cache_function,
            result_as_answer=tool.result_as_answer,
            max_usage_count=tool.max_usage_count,
            requires_approval=tool.requires_approval,
            handle_validation_error=tool.handle_validation_error,
            tags=list(tool.tags),
            metadata={**tool.metadata, "stand_in": True},
            extras=dict(tool.extras),
            response_format="content_and_artifact",
            original=tool,
            inputs=dict(inputs or {}),
        )

    @classmethod
    def _signature_source(cls, data: dict[str, Any]) -> Any:
        return None  # the arguments are the original's, never this class's own methods'

    # -- the original's manual and checks ----------------------------------------------------

    def parameters(self) -> dict[str, Any]:
        return self.original.parameters()

    def validate_args(self, args: Any) -> dict[str, Any]:
        return self.original.validate_args(args)

    def dropped_args(self, args: dict[str, Any]) -> list[str]:
        return self.original.dropped_args(args)

    def args_hint(self) -> str:
        return self.original.args_hint()

    def describe_result(self) -> str | None:
        return self.original.describe_result()

    @property
    def injected_params(self) -> frozenset[str]:
        return self.original.injected_params

    # -- the stand-in result -----------------------------------------------------------------

    def output_schema(self) -> dict[str, Any] | None:
        """The JSON schema of what the original returns, if it says: an MCP tool's, or ``result_schema``'s."""
        declared = getattr(self.original, "output_schema", None)
        if isinstance(declared, dict):
            return declared
        if self.result_schema is not None:
            return self.result_schema.model_json_schema()
        return None

    def stand_in(self, args: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """``(text, artifact)``: an example of the declared result, or a plain text naming the call."""
        schema = self.output_schema()
        if schema is None:
            shown = json.dumps(_plain(args), ensure_ascii=False, default=str)
            shown = shown if len(shown) <= 200 else shown[:199] + "…"
            return f"{STAND_IN} {self.tool_name}({shown}); `crew kickoff --live-tools` runs it", {"stand_in": True}
        value = example_value(schema, random.Random(self.tool_name), inputs=self.inputs)
        return f"{STAND_IN} {json.dumps(value, ensure_ascii=False)}", {"stand_in": True, "structured": value}

    def _execute_sync(self, validated: dict[str, Any], context: RunContext | None) -> Any:
        return self.stand_in(validated)

    async def _execute(self, validated: dict[str, Any], context: RunContext | None) -> Any:
        return self.stand_in(validated)

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        return self.stand_in(kwargs)

    async def _arun(self, *args: Any, **kwargs: Any) -> Any:
        return self.stand_in(kwargs)


def _plain(args: Mapping[str, Any]) -> dict[str, Any]:
    """Validated arguments (nested models included) as JSON-ready values."""
    return {
        key: value.model_dump(mode="json") if hasattr(value, "model_dump") else value for key, value in args.items()
    }


class DryServer:
    """An MCP server whose tools are stand-ins: it opens (its tools must be listed), and no call reaches it.

    Everything but ``tools`` is the real server's, so opening, closing and naming work as before.
    """

    __crew_mcp_server__ = True

    def __init__(self, server: Any, inputs: Mapping[str, Any]) -> None:
        self.server = server
        self.inputs = dict(inputs)
        self._doubles: dict[int, StandInTool] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.server, name)

    @property
    def tools(self) -> list[StandInTool]:
        """The server's tools as stand-ins, one per tool for the whole run (tasks share them)."""
        return [self._double(tool) for tool in self.server.tools]

    def _double(self, tool: BaseTool) -> StandInTool:
        double = self._doubles.get(id(tool))
        if double is None or double.original is not tool:
            double = self._doubles[id(tool)] = StandInTool.of(tool, self.inputs)
        return double

    def __repr__(self) -> str:
        return f"DryServer({self.server!r})"


class _Doubles:
    """The stand-ins of one crew: one per tool and per server, so agents sharing a tool share its stand-in."""

    def __init__(self, inputs: Mapping[str, Any]) -> None:
        self.inputs = inputs
        self._tools: dict[int, BaseTool] = {}
        self._servers: dict[int, Any] = {}

    def tools(self, tools: list[BaseTool]) -> list[BaseTool]:
        return [self._tool(tool) for tool in tools]

    def _tool(self, tool: BaseTool) -> BaseTool:
        if isinstance(tool, StandInTool):
            return tool
        if id(tool) not in self._tools:
            self._tools[id(tool)] = StandInTool.of(tool, self.inputs)
        return self._tools[id(tool)]

    def servers(self, servers: list[Any]) -> list[Any]:
        return [self._server(server) for server in servers]

    def _server(self, server: Any) -> Any:
        if isinstance(server, DryServer):
            return server
        if id(server) not in self._servers:
            self._servers[id(server)] = DryServer(server, self.inputs)
        return self._servers[id(server)]


def offline(crew: Any, inputs: Mapping[str, Any], *, live_tools: bool = False) -> None:
    """Ready ``crew`` for a command-line run on the test model (a crew on other models is left as it is).

    Each test model (the string ``"test"`` or a ``TestModel``) becomes one that knows the
    run's ``inputs``; unless ``live_tools``, the tools of the agents that talk to it (their
    own, their MCP servers', their tasks') become stand-ins.
    """
    default = _informed(crew.llm, inputs)
    if default is not None:
        crew.llm = default
    manager = _informed(crew.manager_llm, inputs)
    if manager is not None:
        crew.manager_llm = manager
    offline_agents = _offline_agents(crew, inputs, default is not None)
    if not live_tools:
        _dry(crew, offline_agents, inputs, default is not None)


def _offline_agents(crew: Any, inputs: Mapping[str, Any], default_is_test: bool) -> list[Any]:
    """The agents that talk to the test model, each given one that knows ``inputs``."""
    agents = [*crew.all_agents(), *([crew.manager_agent] if crew.manager_agent is not None else [])]
    found: dict[int, Any] = {}
    for agent in agents:
        own = _informed(agent.llm, inputs)
        if own is not None:
            agent.llm = own
        if own is not None or (agent.llm is None and default_is_test):
            found[id(agent)] = agent
    return list(found.values())


def _dry(crew: Any, agents: list[Any], inputs: Mapping[str, Any], default_is_test: bool) -> None:
    doubles = _Doubles(inputs)
    chosen = {id(agent) for agent in agents}
    for agent in agents:
        agent.tools = doubles.tools(list(agent.tools))
        agent.mcp = doubles.servers(list(agent.mcp))
    for task in crew.tasks:
        offline_agent = id(task.agent) in chosen if task.agent is not None else default_is_test
        if task.tools is not None and offline_agent:
            task.tools = doubles.tools(list(task.tools))


def _informed(spec: Any, inputs: Mapping[str, Any]) -> TestModel | None:
    """A test model like ``spec`` that knows the run's inputs; None when ``spec`` is another model."""
    if isinstance(spec, str) and spec.strip().lower() == "test":
        return TestModel(inputs=inputs)
    if isinstance(spec, TestModel):
        return TestModel(
            spec.seed,
            spec.final_answer,
            spec.call_tools,
            model=spec.model,
            inputs={**inputs, **spec.inputs},
            risky_tools=spec.risky_tools,
        )
    return None
