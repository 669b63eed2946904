"""``crew migrate``: a CrewAI project written out as a native crew folder.

The folder holds ``crew.yaml`` (agents, tasks, tools by import path, process, inputs)
and ``tools.py``, which imports the project's own tools and output models (with the
project's source folder on the path, and CrewAI's stand-in while they import) and
carries the output models that were defined inside ``crew.py``. It is made from the
same reading ``crew kickoff`` uses, so the migrated crew runs the same tasks with the
same agents; settings crew does not support are left out and listed at the top.
"""

from __future__ import annotations

import ast
import keyword
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from crew.config.entries import Resolved, plain
from crew.config.fields import fields_of
from crew.errors import ConfigError


@dataclass
class Migration:
    folder: Path
    written: list[Path] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # "file:line: key" of each setting left out
    dated: list[str] = field(default_factory=list)  # inputs a date expression made: written as today's value


def migrate(path: str | Path, out: str | Path | None = None) -> Migration:
    """Write the CrewAI project at ``path`` as a crew folder (default: ``<project>/crew_native``)."""
    from crew.config.project import load_project

    project = load_project(path)
    crewai = project.crewai
    if crewai is None or crewai.composed is None:
        raise ConfigError(
            f"{path}: no CrewAI crew.py (a @CrewBase class) to migrate; this folder already loads as it is"
        )
    _read_inside(crewai)
    module = _module_name(crewai)
    target = _target(crewai, out, module)
    writer = _Writer(crewai, project.inputs, target.resolve(), module)
    document = writer.document()
    if "name" not in document and getattr(project.crew, "name", None):
        # the project's name, not the output folder's (which a crew without `name:` would take)
        document = {"name": project.crew.name, **document}
    target.mkdir(parents=True, exist_ok=True)
    from crew.config.crewai.scripts import DATED

    dated = [issue.path for _, issue in crewai.script_issues if issue.message.endswith(DATED)]
    migration = Migration(target, dropped=writer.dropped, dated=dated)
    header = "".join(f"# not carried over (crew does not support it): {d}\n" for d in writer.dropped)
    header += "".join(f"# {key}: today's value; the CrewAI project computed it at each run\n" for key in dated)
    crew_yaml = target / "crew.yaml"
    crew_yaml.write_text(
        f"# Migrated from the CrewAI project {crewai.folder.name} by `crew migrate`.\n{header}" + _dump(document),
        encoding="utf-8",
    )
    tools_py = target / f"{module}.py"
    tools_py.write_text(writer.tools_module(), encoding="utf-8")
    migration.written = [crew_yaml, tools_py]
    return migration


def _target(crewai: Any, out: str | Path | None, module: str) -> Path:
    """The folder to write, checked: the default one stays inside the project, and nothing is written
    through a symbolic link (a project could plant ``crew_native -> ~/.ssh`` to have a file written there)."""
    root = _project_root(crewai.folder)
    target = Path(out) if out is not None else root / "crew_native"
    if out is None and (target.is_symlink() or not target.resolve().is_relative_to(root.resolve())):
        raise ConfigError(f"{target} is a symbolic link out of the project; choose the folder with -o DIR")
    if target.exists() and not target.is_dir():
        raise ConfigError(f"{target}: not a folder")
    files = [target / "crew.yaml", target / f"{module}.py"]
    linked = [f for f in files if f.is_symlink()]
    if linked:
        raise ConfigError(f"{linked[0]} is a symbolic link; crew migrate does not write through one")
    if any(f.exists() for f in files):
        raise ConfigError(f"{target} already holds crew.yaml or {module}.py; choose another folder with -o DIR")
    return target


def _read_inside(crewai: Any) -> None:
    """The crew file is copied from (its classes go to tools.py): it must be the project's own, not a
    link to a file elsewhere."""
    root = _project_root(crewai.folder).resolve()
    crew_file = Path(crewai.crew_file)
    if not crew_file.resolve().is_relative_to(root):
        raise ConfigError(
            f"{crew_file} is a symbolic link out of the project ({root}); crew migrate does not follow it"
        )


def _module_name(crewai: Any) -> str:
    """``tools``, unless the project has a top-level ``tools`` of its own (flat layouts): one name, one module."""
    from crew.config.crewai.objects import Project

    taken = Project(crewai.source_root, crewai.package).top_names()
    return next(name for name in ("tools", "crew_tools", "migrated_tools") if name not in taken)


def _project_root(folder: Path) -> Path:
    for candidate in (folder, *folder.parents):
        if (candidate / "pyproject.toml").is_file():
            return candidate
    return folder


class _Writer:
    def __init__(self, crewai: Any, inputs: dict[str, Any], target: Path, module: str) -> None:
        self.crewai = crewai
        self.module = module
        self.plan = crewai.plan
        self.composer = crewai.composer
        self.inputs = inputs
        self.target = target
        self.dropped: list[str] = []
        self.names: set[str] = set()  # crew.py names tools.py must define (imports and classes)
        self.tool_vars: dict[str, str] = {}  # tool key -> variable in tools.py

    # -- crew.yaml -------------------------------------------------------------------

    def document(self) -> dict[str, Any]:
        composed = self.crewai.composed
        out: dict[str, Any] = {}
        crew_fields = fields_of("crew")
        for key, value in composed.crew.items():
            if key in crew_fields and key not in ("agents", "tasks", "tools", "inputs"):
                out[key] = self._value(value)
            else:
                self._drop(composed.crew, key, self.plan.file)
        if self.inputs:
            out["inputs"] = dict(self.inputs)
        out["agents"] = {e.name: self._entry(e, "agent") for e in composed.agents}
        out["tasks"] = {e.name: self._entry(e, "task") for e in composed.tasks}
        tools = {key: f"{self.module}:{self._tool_var(key)}" for key in self._used_tools(out)}
        if tools:
            out["tools"] = tools
        return out

    def _entry(self, entry: Any, section: str) -> dict[str, Any]:
        fields = fields_of(section)  # type: ignore[arg-type]
        out: dict[str, Any] = {}
        for key, value in entry.data.items():
            if key in fields and value is not None:
                out[key] = self._value(value)
            elif key not in fields:
                self._drop(entry.data, key, entry.file)
        return out

    def _value(self, value: Any) -> Any:
        if isinstance(value, Resolved):
            self.names.add(value.origin.split(".")[0])
            return f"{self.module}:{value.origin}"
        value = plain(value)
        return value.strip() if isinstance(value, str) else value

    def _drop(self, data: Any, key: str, default_file: str) -> None:
        file = data.file_of(key, default_file) if hasattr(data, "file_of") else default_file
        self.dropped.append(f"{file}:{data.line_of(key)}: {key}")

    def _used_tools(self, document: dict[str, Any]) -> list[str]:
        used: list[str] = []
        for section in ("agents", "tasks"):
            for spec in document[section].values():
                used += [t for t in spec.get("tools", []) or [] if t not in used]
        return used

    def _tool_var(self, key: str) -> str:
        ref = self.composer.tool_sources.get(key)
        if ref is not None and not ref.called and ref.name in self.plan.imports:
            self.tool_vars[key] = ref.name  # an imported tool object: tools.py re-exports it as it is
        if key not in self.tool_vars:
            base = "".join(c if c.isalnum() else "_" for c in key.lower()).strip("_") or "tool"
            base = f"_{base}" if base[0].isdigit() or keyword.iskeyword(base) else base
            name, n = base, 1
            taken = set(self.tool_vars.values()) | set(self.plan.imports) | set(self.plan.definitions)
            while name in taken:
                n += 1
                name = f"{base}_{n}"
            self.tool_vars[key] = name
        return self.tool_vars[key]

    # -- tools.py --------------------------------------------------------------------

    def tools_module(self) -> str:
        refs = {key: self.composer.tool_sources[key] for key in self.tool_vars if key in self.composer.tool_sources}
        for ref in refs.values():
            self.names.add(ref.name.split(".")[0])
        classes = self.composer.resolver._closure(self.names & set(self.plan.definitions))
        for name in classes:
            self.names |= {n.id for n in ast.walk(self.plan.definitions[name]) if isinstance(n, ast.Name)}
        lines = [*self._header(), *self._import_lines(), *self._definition_lines(classes), *self._tool_lines(refs)]
        return "\n".join(lines).rstrip() + "\n"

    def _header(self) -> list[str]:
        """The docstring, and the project's source folder put on ``sys.path``."""
        # relative to this file, wherever -o put it: the two folders move (or are shared) together
        relative = os.path.relpath(Path(self.crewai.source_root).resolve(), self.target)
        where = f"(Path(__file__).resolve().parent / {relative!r}).resolve()"
        return [
            f'"""Tools and output models of the CrewAI project {self.crewai.folder.name}, written by `crew migrate`.',
            "",
            "The project's own modules are imported from its source folder; while they import, crew stands in",
            "for `crewai` if it is not installed (a real crewai is used when it is).",
            '"""',
            "",
            "import sys",
            "from pathlib import Path",
            "",
            "from crew.config.crewai import crewai_alias",
            "",
            f"sys.path.insert(0, str({where}))",
            "",
        ]

    def _import_lines(self) -> list[str]:
        """crew.py's imports of the names carried over, grouped by module, under CrewAI's stand-in."""
        imports = sorted(n for n in self.names if n in self.plan.imports)
        if not imports:
            return []
        grouped: dict[str, list[str]] = {}
        for name in imports:
            module, what = self._import_parts(name)
            grouped.setdefault(module, []).append(what)
        lines = ["with crewai_alias():"]
        for module, names in sorted(grouped.items()):
            lines += [f"    {n}" for n in names if n.startswith("import ")]
            froms = [n for n in names if not n.startswith("import ")]
            if froms:
                lines.append(f"    from {module} import {', '.join(froms)}")
        return [*lines, ""]

    def _definition_lines(self, classes: set[str]) -> list[str]:
        """The constants and the classes of crew.py the carried names need, copied as written."""
        source = self.crewai.crew_file.read_text(encoding="utf-8")
        source_lines = source.splitlines()
        lines = []
        carried = [self.plan.definitions[name] for name in classes]
        for name in self.composer.resolver.constants(_names(carried)):
            value = self.plan.assigns[name]
            lines.append(f"{name} = {ast.get_source_segment(source, value) or ast.unparse(value)}")
        for name, node in self.plan.definitions.items():
            if name in classes:
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                lines += ["", "\n".join(source_lines[first - 1 : node.end_lineno]), ""]
        return lines

    def _tool_lines(self, refs: dict[str, Any]) -> list[str]:
        """``var = Tool(args)`` for each tool crew.py builds in place (an imported one is re-exported as it is)."""
        lines = []
        for key, var in self.tool_vars.items():
            ref = refs.get(key)
            if ref is None or var == ref.name:
                continue
            args = ", ".join([*(repr(v) for v in ref.args), *(f"{k}={v!r}" for k, v in ref.kwargs.items())])
            lines.append(f"{var} = {ref.name}({args})" if ref.called else f"{var} = {ref.name}")
        return lines

    def _import_parts(self, name: str) -> tuple[str, str]:
        """(module, what to import): ``import m as n`` whole, or the ``attr [as name]`` of a from-import."""
        imp = self.plan.imports[name]
        module = self.composer.resolver.project.absolute(imp)
        if imp.attr is None:
            return module, f"import {module} as {name}" if module != name else f"import {module}"
        return module, imp.attr + (f" as {name}" if name != imp.attr else "")


def _names(nodes: list[Any]) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)}


class _Dumper(yaml.SafeDumper):
    pass


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def _dump(document: dict[str, Any]) -> str:
    return yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
