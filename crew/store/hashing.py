"""Fingerprints of task definitions: what a stored output depends on.

A stored output may be reused (resume, replay) only while its task still means the
same thing: the same filled-in description and expected output, the same agent
(role, goal, backstory, tools), the same tasks read as context and the same output
schema. Models are settings, not definitions (a resume may switch them), so they are
left out, and so is ``output_file`` (where a result is written, not what it is).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from crew.tasks.graph import task_names
from crew.tasks.inputs import fill_inputs


def task_hashes(crew: Any, inputs: Mapping[str, Any]) -> dict[str, str]:
    """Each task's fingerprint by name, for ``crew`` kicked off with ``inputs``."""
    names = task_names(crew.tasks)
    agents, tasks = fill_inputs(crew.all_agents(with_manager=True), crew.tasks, inputs, names)
    graph = crew.validate_graph()
    out: dict[str, str] = {}
    for declared, name in zip(crew.tasks, names, strict=True):
        task = tasks[name]
        agent = agents.get(id(declared.agent)) if declared.agent is not None else None
        tools = task.tools if task.tools is not None else (agent.tools if agent is not None else [])
        schema = task.output_pydantic or task.output_json
        definition = {
            "name": name,
            "description": task.description,
            "expected_output": task.expected_output,
            "agent": None if agent is None else [agent.role, agent.goal, agent.backstory],
            "tools": sorted(t.tool_name for t in tools),
            "context": list(graph.context[name]),
            "output": None if schema is None else [schema.__name__, _schema(schema)],
            "output_kind": "pydantic" if task.output_pydantic else "json" if task.output_json else None,
        }
        out[name] = _digest(definition)
    return out


def crew_hash(hashes: Mapping[str, str], process: str) -> str:
    return _digest({"process": process, "tasks": list(hashes.items())})


def _schema(model: Any) -> Any:
    try:
        return model.model_json_schema()
    except Exception:  # noqa: BLE001 - a schema pydantic cannot draw: its name stands for it
        return None


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
