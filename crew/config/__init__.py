"""Crews declared in YAML: loading, checking and describing ``crew.yaml``.

``load_crew(path)`` gives the same ``Crew`` the equivalent Python code builds;
``load_project(path)`` also returns the default inputs, the placeholders and the
warnings, which is what the ``crew`` command needs. ``crew_json_schema()`` describes
the file format for editors.
"""

from crew.config.project import CrewProject, find_files, load_crew, load_project
from crew.config.schema import crew_json_schema

__all__ = ["CrewProject", "crew_json_schema", "find_files", "load_crew", "load_project"]
