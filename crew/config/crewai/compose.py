"""From a read ``crew.py`` plus ``agents.yaml``/``tasks.yaml`` to the builder's entries.

CrewAI merges each ``Agent(config=self.agents_config['x'], ...)`` call's keywords over
the YAML entry it names (keywords win). The same merge is done here on the YAML trees
themselves: every key keeps the file and line it was written at, so the one builder
that checks ``crew.yaml`` checks these too, and an error in a ``crew.py`` keyword points
at ``crew.py``. Agents and tasks are named after their methods, as CrewAI names them
(``agent: researcher`` and ``context: [research_task]`` in tasks.yaml are method names).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from crew.common.keywords import CREWAI_KEYS, did_you_mean
from crew.config.build import Builder
from crew.config.crewai.objects import MissingPackage, Resolver, Unresolved
from crew.config.crewai.plan import Arg, CrewPlan, MemberPlan, ToolRef
from crew.config.entries import Entry, Resolved, key_path
from crew.config.fields import fields_of
from crew.config.loader import YamlList, YamlMap

_SKIP = object()


@dataclass
class Composed:
    agents: list[Entry]
    tasks: list[Entry]
    crew: YamlMap  # the crew's keyword arguments, each with its line in crew.py


@dataclass
class _Missing:
    module: str
    attr: str
    distribution: str
    via: str = ""  # the project's module that imports the missing package ("" when crew.py does)
    wanted: list[tuple[str, int, str]] = field(default_factory=list)  # (who, line, key path)


class Composer:
    def __init__(self, builder: Builder, plan: CrewPlan, resolver: Resolver) -> None:
        self.builder, self.plan, self.resolver = builder, plan, resolver
        self.problems = builder.problems
        self.tool_keys: dict[tuple[str, bool, str], str | None] = {}
        self.tool_sources: dict[str, ToolRef] = {}  # tool key -> how crew.py made it (for `crew migrate`)
        self.missing: dict[tuple[str, str], _Missing] = {}
        self.methods = {m.method: m for m in plan.agents} | plan.helpers
        self.task_methods = {m.method for m in plan.tasks}

    def compose(self, agents: tuple[Any, str], tasks: tuple[Any, str]) -> Composed:
        plan = self.plan
        for issue in plan.issues:
            self.problems.add(plan.file, issue.line, issue.path, issue.message, issue.level)
        chosen = self._chosen(plan.crew_agents, plan.agents, "agents")
        used = {m.method for m in chosen}
        referenced = self._referenced_agents()
        chosen += [self.methods[name] for name in referenced if name not in used and name in self.methods]
        agent_entries = [self._entry(m, agents, "agent") for m in chosen]
        task_entries = [self._entry(m, tasks, "task") for m in self._chosen(plan.crew_tasks, plan.tasks, "tasks")]
        self._unused(agents, chosen, "agent")
        self._unused(tasks, self._chosen(plan.crew_tasks, plan.tasks, "tasks"), "task")
        crew = self._crew_settings()
        self._report_missing()
        return Composed(agent_entries, [e for e in task_entries if e is not None], crew)  # type: ignore[misc]

    def _crew_settings(self) -> YamlMap:
        """The ``Crew(...)`` keywords of the @crew method, each at its line in crew.py."""
        plan = self.plan
        crew = _map(plan.crew_line or plan.line)
        for key, arg in plan.crew.items():
            if key == "manager_agent" and arg.kind == "agent" and arg.value not in self.methods:
                self.problems.add(
                    plan.file, arg.line, f"crew.{key}", f"`{arg.source}`: no method '{arg.value}' returning an Agent"
                )
                continue
            value = self._value(key, arg, "crew", f"crew.{key}", "the crew")
            if value is not _SKIP:
                _put(crew, key, value, arg.line, plan.file)
        return crew

    # -- members ---------------------------------------------------------------------

    def _chosen(self, names: list[str] | None, members: list[MemberPlan], what: str) -> list[MemberPlan]:
        if names is None:
            return list(members)
        pool = {m.method: m for m in members} | (self.plan.helpers if what == "agents" else {})
        out = []
        for name in names:
            if name in pool:
                out.append(pool[name])
            else:
                kind = "@agent" if what == "agents" else "@task"
                self.problems.add(
                    self.plan.file,
                    self.plan.crew_line,
                    f"crew.{what}",
                    f"self.{name}() is not a {kind} method{did_you_mean(name, pool)}",
                )
        return out

    def _referenced_agents(self) -> list[str]:
        out = []
        for member in self.plan.tasks:
            arg = member.kwargs.get("agent")
            if arg is not None and arg.kind == "agent":
                out.append(arg.value)
        manager = self.plan.crew.get("manager_agent")
        if manager is not None and manager.kind == "agent":
            out.append(manager.value)
        return out

    def _entry(self, member: MemberPlan, document: tuple[Any, str], section: str) -> Entry:
        tree, file = document
        plural = f"{section}s"
        config = self._config(member, tree, file, section)
        data = _map(config.line if config is not None else member.line)
        if config is not None:
            for key, value in config.items():
                _put(data, key, value, config.line_of(key), None)
        elif member.config_key is not None and member.config_key not in (tree if isinstance(tree, YamlMap) else {}):
            self._stand_ins(member, data, section)
        who = f"{section} '{member.method}'"
        for key, arg in member.kwargs.items():
            value = self._value(key, arg, section, key_path(plural, member.config_key or member.method, key), who)
            if value is not _SKIP:
                _put(data, key, value, arg.line, self.plan.file)
        self._yaml_tools(data, who, key_path(plural, member.config_key or member.method))
        if config is not None:
            return Entry(member.method, data, file, config.line, key_path(plural, member.config_key))
        if member.config_key is not None and isinstance(tree, YamlMap) and member.config_key in tree:
            key = member.config_key
            return Entry(member.method, tree[key], file, tree.line_of(key), key_path(plural, key))
        return Entry(member.method, data, self.plan.file, member.line, key_path(plural, member.method))

    def _config(self, member: MemberPlan, tree: Any, file: str, section: str) -> YamlMap | None:
        """The YAML entry a member's ``config=self.x_config['key']`` names; a missing one is reported."""
        key = member.config_key
        if key is None:
            return None
        if isinstance(tree, YamlMap) and key in tree:
            return tree[key] if isinstance(tree[key], YamlMap) else None  # not a mapping: the builder says so
        known = list(tree) if isinstance(tree, YamlMap) else []
        where = file or f"config/{section}s.yaml"
        self.problems.add(
            self.plan.file,
            member.config_line,
            key_path(member.method, "config"),
            f"no {section} '{key}' in {where}{did_you_mean(key, known)}",
        )
        return None

    def _stand_ins(self, member: MemberPlan, data: YamlMap, section: str) -> None:
        """Values for the required keys of a member whose YAML entry is missing: reported once already,
        its required keys would only repeat it."""
        for name, spec in fields_of(section).items():  # type: ignore[arg-type]
            if spec.required and name not in member.kwargs:
                _put(data, name, f"<{member.config_key}: not in {section}s.yaml>", member.config_line, None)
        if section == "task" and "agent" not in member.kwargs and self.methods:
            _put(data, "agent", next(iter(self.methods)), member.config_line, None)  # never runs: an error

    def _unused(self, document: tuple[Any, str], chosen: list[MemberPlan], section: str) -> None:
        tree, file = document
        if not isinstance(tree, YamlMap):
            return
        read = {m.config_key for m in chosen}
        for key in tree:
            if key not in read:
                self.problems.add(
                    file,
                    tree.line_of(key),
                    key_path(f"{section}s", key),
                    f"{section} '{key}' is not used by {self.plan.file} "
                    f"(no @{section} method of the crew reads it) and is ignored",
                    "warning",
                )

    # -- values ----------------------------------------------------------------------

    def _value(self, key: str, arg: Arg, section: str, path: str, who: str) -> Any:
        fields = fields_of(section)  # type: ignore[arg-type]
        if key not in fields and key not in CREWAI_KEYS[section]:  # type: ignore[index]
            # CrewAI's models ignore keywords they do not know; so does crew, saying so
            self.problems.add(
                self.plan.file,
                arg.line,
                path,
                f"'{key}' is not {'an' if section[0] in 'aeiou' else 'a'} {section} setting, in CrewAI either"
                f"{did_you_mean(key, fields)}; ignored",
                "warning",
            )
            return _SKIP
        if arg.kind == "literal":
            # CrewAI's old verbose levels (`verbose=2`): on or off here
            return bool(arg.value) if key == "verbose" and type(arg.value) is int else arg.value
        read = {
            "agent": self._agent_ref,
            "tasks": self._task_refs,
            "tools": self._tool_keys,
            "llm": self._llm,
            "knowledge": self._knowledge,
        }.get(arg.kind)
        return read(arg, path, who) if read is not None else self._unread(key, arg, section, path)

    def _tool_keys(self, arg: Arg, path: str, who: str) -> Any:
        keys = [self._tool(ref, who, key_path(path, i)) for i, ref in enumerate(arg.value)]
        return _list([k for k in keys if k is not None], arg.line) if None not in keys else _SKIP

    def _llm(self, arg: Arg, path: str, who: str) -> Any:
        settings = _map(arg.line)
        for name, value in arg.value.items():
            _put(settings, name, value, arg.line, self.plan.file)
        return settings

    def _knowledge(self, arg: Arg, path: str, who: str) -> Any:
        return _list(list(arg.value), arg.line)

    def _agent_ref(self, arg: Arg, path: str, who: str) -> Any:
        if arg.value in self.methods:
            return arg.value
        self.problems.add(
            self.plan.file,
            arg.line,
            path,
            f"`{arg.source}`: no @agent method '{arg.value}'{did_you_mean(arg.value, self.methods)}",
        )
        return _SKIP

    def _task_refs(self, arg: Arg, path: str, who: str) -> Any:
        bad = [n for n in arg.value if n not in self.task_methods]
        for name in bad:
            self.problems.add(
                self.plan.file,
                arg.line,
                path,
                f"self.{name}() is not a @task method{did_you_mean(name, self.task_methods)}",
            )
        return _SKIP if bad else _list(arg.value, arg.line)

    def _unread(self, key: str, arg: Arg, section: str, path: str) -> Any:
        """A name (an output model, a callback: resolved to its object) or an expression only running could tell."""
        file = self.plan.file
        known = key in fields_of(section)  # type: ignore[arg-type]
        model = key == "llm" or key.endswith("_llm")
        if arg.kind == "object" and known and not model:
            try:
                if not self.builder.import_code:  # checked, and left unset: only importing could build it
                    self.resolver.check(arg.value)
                    return _SKIP
                return Resolved(self.resolver.obj(arg.value), arg.value)
            except Unresolved as exc:
                self.problems.add(file, arg.line, path, f"`{arg.source}`: {exc}")
                return _SKIP
        if not known:
            return None  # a CrewAI-only or unknown key: the builder names it (warning or error)
        self.problems.add(
            file,
            arg.line,
            path,
            f"`{key}={arg.source}` cannot be read without running {file}, and is ignored",
            "warning",
        )
        return _SKIP

    def _tool(self, ref: ToolRef, who: str, path: str) -> str | None:
        signature = (ref.name, ref.called, ref.signature)
        if signature in self.tool_keys:
            missing = self.missing.get((ref.name, signature[2]))
            if missing is not None:
                missing.wanted.append((who, ref.line, path))
            return self.tool_keys[signature]
        key = self.tool_keys[signature] = self._load_tool(ref, who, path)
        return key

    def _load_tool(self, ref: ToolRef, who: str, path: str) -> str | None:
        file = self.plan.file
        try:
            obj = self.resolver.obj(ref.name) if self.builder.import_code else self.resolver.check(ref.name)
        except MissingPackage as exc:
            signature = ref.signature
            entry = self.missing.setdefault(
                (ref.name, signature), _Missing(exc.module, ref.name, exc.distribution, exc.via)
            )
            entry.wanted.append((who, ref.line, path))
            return None
        except Unresolved as exc:
            self.problems.add(file, ref.line, path, f"tool `{ref.source}`: {exc}")
            return None
        tool = self._tool_of(ref, obj, path) if self.builder.import_code else _stand_in(ref)
        if tool is None:
            return None
        from crew.tools.schema import sanitize_tool_name

        key, n = sanitize_tool_name(tool.name), 1
        while key in self.builder.tools:
            n += 1
            key = f"{sanitize_tool_name(tool.name)}_{n}"
        self.builder.tools[key] = tool
        self.builder.tool_names.add(key)
        self.tool_sources[key] = ref
        return key

    def _tool_of(self, ref: ToolRef, obj: Any, path: str) -> Any:
        """The crew tool of the object crew.py names (called with its literal arguments when it is a call)."""
        file = self.plan.file
        if ref.called:
            try:
                obj = obj(*ref.args, **ref.kwargs)
            except Exception as exc:  # noqa: BLE001 - the tool's own constructor refused: report it at its line
                self.problems.add(file, ref.line, path, f"`{ref.source}` failed: {type(exc).__name__}: {exc}")
                return None
        try:
            tool = crew_tool(obj)
        except Exception as exc:  # noqa: BLE001 - a foreign tool whose schema cannot be read: say which
            self.problems.add(file, ref.line, path, f"`{ref.source}`: {exc}")
            return None
        if tool is None:
            self.problems.add(
                file,
                ref.line,
                path,
                f"`{ref.source}` is a {type(obj).__name__}, not a tool (expected a crew, CrewAI or LangChain tool)",
            )
        return tool

    def _yaml_tools(self, data: YamlMap, who: str, path: str) -> None:
        """``tools: [name]`` in agents.yaml names @tool methods of the class (CrewAI's mapping)."""
        names = data.get("tools")
        if data.file_of("tools", "") or not isinstance(names, list):
            return
        keys = YamlList(names)  # a copy: the YAML tree itself stays as read
        keys.line, keys.item_lines = getattr(names, "line", 0), list(getattr(names, "item_lines", []))
        for i, name in enumerate(names):
            ref = self.plan.tool_methods.get(name) if isinstance(name, str) else None
            if ref is not None:
                key = self._tool(ref, who, key_path(path, "tools", i))
                if key is not None:
                    keys[i] = key
        data["tools"] = keys

    def _report_missing(self) -> None:
        reported: set[str] = set()
        for missing in self.missing.values():
            if missing.attr in reported:
                continue
            reported.add(missing.attr)
            missing.wanted = [w for m in self.missing.values() if m.attr == missing.attr for w in m.wanted]
            who = ", ".join(dict.fromkeys(w for w, _, _ in missing.wanted))
            _, line, path = missing.wanted[0]
            source = (
                f"needs the package {missing.distribution} ({missing.via} imports {missing.module})"
                if missing.via
                else f"comes from the package {missing.distribution}"
            )
            self.problems.add(
                self.plan.file,
                line,
                path,
                f"{missing.attr} (wanted by {who}) {source}, which is not "
                f"installed: `pip install {missing.distribution}` (or replace it with a crew tool)",
            )


def crew_tool(obj: Any) -> Any:
    """A crew tool for a crew, CrewAI or LangChain tool object (through the interop adapters); None otherwise."""
    from crew.tools.base import BaseTool

    if isinstance(obj, BaseTool):
        return obj
    try:
        from crew.tools.adapters import adapt_tool  # type: ignore[import-not-found]
    except ImportError:  # pragma: no cover - the adapters arrive with the tools-interop work
        return None
    return adapt_tool(obj)


def _stand_in(ref: ToolRef) -> Any:
    """A tool named after what crew.py names, for ``--no-import``: never imported, so never run."""
    from crew.config.entries import not_imported
    from crew.tools.decorator import tool

    name = ref.name.rsplit(".", 1)[-1]
    return tool(name, not_imported(name))


def _map(line: int) -> YamlMap:
    out = YamlMap()
    out.line, out.key_lines, out.duplicates = line, {}, []
    out.key_files = {}
    return out


def _put(target: YamlMap, key: str, value: Any, line: int, file: str | None) -> None:
    target[key] = value
    target.key_lines[key] = line
    files: dict[str, str] = target.key_files
    if file is None:
        files.pop(key, None)
    else:
        files[key] = file


def _list(items: list[Any], line: int) -> YamlList:
    out = YamlList(items)
    out.line, out.item_lines = line, [line] * len(items)
    return out
