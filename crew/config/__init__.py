"""Crews declared in YAML: loading, checking and describing ``crew.yaml``.

``load_crew(path)`` gives the same ``Crew`` the equivalent Python code builds;
``load_project(path)`` also returns the default inputs, the placeholders and the
warnings, which is what the ``crew`` command needs. ``crew_json_schema()`` describes
the file format for editors.
"""

from typing import Any

from crew.config.project import CrewProject, find_files, load_crew, load_project

__all__ = ["CrewProject", "crew_json_schema", "find_files", "load_crew", "load_project"]


def __getattr__(name: str) -> Any:
    # The schema is for `crew schema` and editors only: no need to load it with every crew.
    if name == "crew_json_schema":
        from crew.config.schema import crew_json_schema

        return crew_json_schema
    raise AttributeError(f"module 'crew.config' has no attribute {name!r}")
