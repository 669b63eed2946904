"""Crews declared in YAML: loading, checking and describing ``crew.yaml``.

``load_crew(path)`` gives the same ``Crew`` the equivalent Python code builds;
``load_project(path)`` also returns the default inputs, the placeholders and the
warnings, which is what the ``crew`` command needs. ``crew_json_schema()`` describes
the file format for editors. Flow folders (a CrewAI flow project, or ``flow.py`` beside crew
folders) are found and checked in ``flow_project`` and ``flow_check``; a CrewAI project's
``crewai`` imports are served by ``crewai/flow_compat``. ``dry_run`` readies a loaded project's
crew for a command-line run on the test model (``crew kickoff``, ``crew serve``): its tool calls
answered by stand-ins unless ``--live-tools``.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

__all__ = ["CrewProject", "crew_json_schema", "find_files", "load_crew", "load_project"]

# Loaded on first access: the models import ``crew.config.fields`` (which keys exist), and
# that must not pull in the YAML loader; nor need the schema load with every crew.
_HOME = {
    "CrewProject": "project",
    "find_files": "project",
    "load_crew": "project",
    "load_project": "project",
    "crew_json_schema": "schema",
}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'crew.config' has no attribute {name!r}")
    return getattr(import_module(f"crew.config.{_HOME[name]}"), name)


if TYPE_CHECKING:
    from crew.config.project import CrewProject, find_files, load_crew, load_project
    from crew.config.schema import crew_json_schema
