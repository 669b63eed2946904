"""A crew folder: finding its files, reading them (``crew.config.documents``), and building the ``Crew`` they declare.

Two layouts load the same way: one ``crew.yaml`` holding everything, or CrewAI's
``agents.yaml`` + ``tasks.yaml`` (beside it or under ``config/``), optionally with a
``crew.yaml`` for the crew settings and the tools.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from crew.common.keywords import did_you_mean
from crew.config.build import Builder
from crew.config.documents import _empty, _inputs, _overlay, _read, _sections, _unique
from crew.config.entries import Entry, Placeholder
from crew.config.knowledge import knowledge_folder, knowledge_list
from crew.config.loader import YamlMap
from crew.config.problems import Problem, Problems, display_path
from crew.config.servers import build_servers
from crew.config.tasks import build_tasks
from crew.errors import ConfigError

_NAMES = {
    "crew": ("crew.yaml", "crew.yml"),
    "agents": ("agents.yaml", "agents.yml"),
    "tasks": ("tasks.yaml", "tasks.yml"),
}


@dataclass
class CrewProject:
    """A loaded crew folder: the crew, its default inputs, and what the loader noticed."""

    folder: Path
    files: list[str]
    crew: Any
    inputs: dict[str, Any]
    tools: dict[str, Any]
    placeholders: list[Placeholder]
    servers: dict[str, Any] = field(default_factory=dict)
    """MCP servers by their ``mcp_servers:`` name (not started: ``crew tools`` and kickoff open them)."""
    problems: Problems = field(default_factory=Problems)
    crewai: Any = None  # the CrewAI side (a ``CrewAIProject``) when the folder has a crew.py
    env_note: Problem | None = None
    """What a CrewAI project's ``.env`` gave (names only), for kickoff to say; None without one."""

    @property
    def warnings(self) -> list[Problem]:
        return self.problems.of("warning")

    def missing_inputs(self, inputs: Mapping[str, Any], level: str = "error") -> list[Problem]:
        """One problem per placeholder that ``inputs`` leaves unfilled, at its first use."""
        uses: dict[str, list[Placeholder]] = {}
        for ph in self.placeholders:
            if ph.name not in inputs:
                uses.setdefault(ph.name, []).append(ph)
        out = []
        for name, places in uses.items():
            first = places[0]
            more = f", used {len(places)} times" if len(places) > 1 else ""
            what, when = ("has no value", "") if level == "error" else ("has no default", " at kickoff")
            hint = f"pass -i {name}=...{when}, or give it a default under `inputs:` in crew.yaml"
            out.append(Problem(first.file, first.line, first.path, f"input '{name}' {what}{more} ({hint})", level))  # type: ignore[arg-type]
        return out


def find_files(path: Path) -> dict[str, Path]:
    """The crew's YAML files by role ("crew", "agents", "tasks"); ConfigError when there are none."""
    folder, found = _given(path)
    # CrewAI's own project layout keeps them in src/<project>/config/ (when there is one project).
    crewai = list(folder.glob("src/*/config"))
    crewai = crewai if len(crewai) == 1 else []
    for role, names in _NAMES.items():
        places = [folder, *(c.parent for c in crewai)] if role == "crew" else [folder, folder / "config", *crewai]
        hit = next((place / n for place in places for n in names if (place / n).is_file()), None)
        if role not in found and hit is not None:
            found[role] = hit
    if "crew" not in found and not ("agents" in found and "tasks" in found):
        _no_crew(folder)
    return found


def _given(path: Path) -> tuple[Path, dict[str, Path]]:
    """The folder to look in, and the file the user named (by the role its name says)."""
    if path.is_file():
        if path.suffix.lower() not in (".yaml", ".yml"):
            raise ConfigError(f"{display_path(path)}: expected a crew folder or a .yaml file")
        role = next((r for r, names in _NAMES.items() if path.name in names and r != "crew"), "crew")
        return path.parent, {role: path}
    if path.is_dir():
        return path, {}
    raise ConfigError(f"{display_path(path)}: no such file or folder")


def _no_crew(folder: Path) -> NoReturn:
    """Why a folder holds no crew: scripts that compose theirs in Python, a flow project, or nothing at all."""
    from crew.config.crewai import flow_crews, script_refusals

    where = display_path(folder)
    refused = script_refusals(folder)
    if refused:
        raise ConfigError("\n".join(refused), errors=refused)
    crews = flow_crews(folder)
    if crews:
        listed = ", ".join(display_path(c) for c in crews)
        raise ConfigError(
            f"{where} is a CrewAI flow project: `crew kickoff`, `validate`, `plot` and `migrate` take it as "
            f"a flow (one kickoff at a time); for this, point at one of its crews: {listed}"
        )
    raise ConfigError(
        f"no crew in {folder.resolve() if where == '.' else where}: expected crew.yaml, or agents.yaml "
        "and tasks.yaml (beside it, under config/ or under src/<project>/config/); "
        "`crew create NAME` makes a new crew folder"
    )


def crew_folder(path: str | Path) -> Path:
    """The folder a crew at ``path`` lives in, found without reading or running anything: a CrewAI
    project's is ``src/<project>``; its run store, output files and modules are relative to it."""
    return _folder_of(find_files(Path(path)))


def _folder_of(files: dict[str, Path]) -> Path:
    if files.get("crew") is not None:
        return files["crew"].parent
    folder = files["agents"].parent
    return folder.parent if folder.name == "config" else folder


def load_project(
    path: str | Path = ".",
    *,
    llm: str | None = None,
    out_dir: str | Path | None = None,
    require_model: bool = False,
    import_code: bool = True,
) -> CrewProject:
    """Load and check a crew folder; raise ``ConfigError`` listing every error found.

    ``llm`` overrides every model of the crew. ``require_model`` (kickoff) makes a
    missing model an error; ``validate`` leaves it off, since it needs no model.
    Loading imports the folder's modules (``tools.py``): that runs their code.
    ``import_code=False`` checks everything else and the import paths' syntax and
    modules, without running any of it (``crew validate --no-import``).
    """
    files = find_files(Path(path))
    folder = _folder_of(files)
    from crew.config.crewai import locate

    crewai = locate(folder) if files.get("crew") is None or _crewbase_beside(folder) else None
    if crewai is not None:
        files.update(crewai.config_files())
    problems = Problems()
    env_note = _crewai_env(crewai, problems) if crewai is not None else None
    trees: dict[str, Any] = {}
    unreadable: set[str] = set()
    for role, file in files.items():
        before = len(problems.items)
        trees[role] = _read(file, problems)
        if trees[role] is None and len(problems.items) > before:
            unreadable.add(role)
    builder = Builder(
        folder,
        problems,
        llm=llm,
        out_dir=Path(out_dir) if out_dir else None,
        require_model=require_model,
        import_code=import_code,
    )
    if crewai is not None:
        from crew.config.crewai.dotenv import model

        builder.env_model = model()
    project = _build(builder, files, trees, unreadable, crewai)
    project.crewai, project.env_note = crewai, env_note
    if crewai is not None and crewai.crew_file is not None:
        project.files.append(display_path(crewai.crew_file))
    problems.raise_errors()
    return project


def _crewai_env(crewai: Any, problems: Problems) -> Problem | None:
    """A CrewAI project's ``.env``, read into the environment as CrewAI reads it; the note saying so
    names the file and the variables, never a value."""
    from crew.config.crewai.dotenv import load

    found = load(crewai.folder)
    if found is None:
        return None
    taken = f"took {', '.join(found.set)}" if found.set else "took nothing"
    kept = f"; {', '.join(found.kept)} already set in the environment, kept" if found.kept else ""
    note = Problem(display_path(found.path), 1, "", f"{taken} from this file, as CrewAI does{kept}", "note")
    problems.items.append(note)
    return note


def load_crew(path: str | Path = ".", *, llm: str | None = None, out_dir: str | Path | None = None) -> Any:
    """The ``Crew`` declared in a folder (``crew.yaml`` or CrewAI's agents.yaml + tasks.yaml).

    Inside a flow run by ``crew kickoff`` (``crew_maker``), a call without ``llm`` gets the
    crew as that run builds it: the run's ``--llm``, dry tools on the test model.
    """
    if _CREW_MAKERS and llm is None and out_dir is None:
        return _CREW_MAKERS[-1](Path(path))
    return load_project(path, llm=llm, out_dir=out_dir).crew


_CREW_MAKERS: list[Callable[[Path], Any]] = []
"""Process-wide, not a context variable: a flow's sync steps run in worker threads, which a context
variable does not reach when they are started by ``run_in_executor``."""


@contextmanager
def crew_maker(make: Callable[[Path], Any]) -> Iterator[None]:
    """``load_crew`` builds through ``make`` in this block: how a flow's steps get the crews of the run
    that ``crew kickoff`` started (set only while it runs a flow)."""
    _CREW_MAKERS.append(make)
    try:
        yield
    finally:
        _CREW_MAKERS.remove(make)


# -- building ----------------------------------------------------------------------------


def _build(
    builder: Builder, files: dict[str, Path], trees: dict[str, Any], unreadable: set[str], crewai: Any = None
) -> CrewProject:
    """The crew of the parsed files; ``unreadable`` files were reported already (say nothing of them).

    ``crewai`` (a ``CrewAIProject``) adds what a CrewAI ``crew.py`` declares: it then
    decides which agents.yaml and tasks.yaml entries make the crew, and in which order.
    """
    composed = _compose_crewai(builder, files, trees, crewai)
    settings, fields = _settings(builder, files, trees, composed)
    sections = _sections(builder, settings, files, trees, composed)
    if not sections.tasks and not unreadable:
        _no_tasks(builder, settings, files)
    _unique(builder.problems, sections.agents, "agent")
    _unique(builder.problems, sections.tasks, "task")
    inputs = {**(crewai.inputs if crewai is not None else {}), **_inputs(builder, settings)}

    builder.build_tools(sections.tools)
    builder.server_names = {e.name for e in sections.servers}
    builder.servers = build_servers(builder, sections.servers)
    agents = builder.build_agents(sections.agents)
    kwargs = _crew_kwargs(builder, settings, fields, agents, {e.name for e in sections.agents})
    process = kwargs.get("process", _default("process"))
    _manager_needs_a_model(builder, settings, kwargs, process)
    tasks = build_tasks(builder, sections.tasks, agents, {e.name for e in sections.agents}, process)
    if builder.unmodelled:
        _no_model(builder, settings, "error" if builder.require_model else "note")

    project = CrewProject(
        folder=builder.folder,
        files=[display_path(p) for p in files.values()],
        crew=None,
        inputs=inputs,
        tools=builder.tools,
        servers=builder.servers,
        placeholders=builder.placeholders,
        problems=builder.problems,
    )
    if not builder.problems.errors:
        crew_entry = Entry("crew", settings.data, settings.file or project.files[0], 1, "")
        project.crew = _make_crew(builder, crew_entry, agents, tasks, kwargs, sections.tasks)
    return project


def _compose_crewai(builder: Builder, files: dict[str, Path], trees: dict[str, Any], crewai: Any) -> Any:
    """What a CrewAI ``crew.py`` adds (None without one); a refused script stops here with its errors."""
    if crewai is None:
        return None
    documents = [(trees.get(r), display_path(files[r]) if r in files else "") for r in ("agents", "tasks")]
    composed = crewai.compose(builder, documents[0], documents[1])
    if crewai.refused:  # the script wires the agents; checking the YAML as a crew would only add noise
        builder.problems.raise_errors()
    return composed


def _settings(
    builder: Builder, files: dict[str, Path], trees: dict[str, Any], composed: Any
) -> tuple[Entry, dict[str, Any]]:
    """The crew settings (crew.yaml, with crew.py's ``Crew(...)`` keywords under it) and their accepted keys.

    The crew's own model is settled here: every agent without one falls back on it.
    """
    crew_tree = trees.get("crew") if composed is None else _overlay(trees.get("crew"), composed.crew)
    settings = Entry("crew", crew_tree, display_path(files["crew"]) if "crew" in files else "", 1, "")
    fields = (builder.check_keys(settings, "crew") if crew_tree is not None else None) or {}
    if not isinstance(settings.data, YamlMap):
        settings.data = _empty()
    _, crew_llm = builder.model_value(settings, "llm", settings.data.get("llm"))
    builder.crew_llm = builder.crew_model(crew_llm)
    return settings, fields


def _no_tasks(builder: Builder, settings: Entry, files: dict[str, Path]) -> None:
    """A crew without a task, said at the tasks' file (unless ``tasks:`` is already wrong in itself)."""
    if not isinstance(settings.data.get("tasks"), (YamlMap, type(None))):
        return
    where = (display_path(files["tasks"]), 1) if "tasks" in files else (settings.file, settings.line_of("tasks"))
    builder.problems.add(*where, "tasks", "no tasks: a crew needs at least one (task name -> description, agent ...)")


def _crew_kwargs(
    builder: Builder, settings: Entry, fields: dict[str, Any], agents: dict[str, Any], agent_names: set[str]
) -> dict[str, Any]:
    """The Crew's keyword arguments from its settings; a setting that fails is reported and left out."""
    kwargs: dict[str, Any] = {"llm": builder.crew_llm, "name": builder.folder.resolve().name}
    for key, spec in fields.items():
        if spec.kind == "section" or key == "llm":
            continue
        value = settings.data[key]
        if spec.kind == "knowledge":
            good, sources = knowledge_list(builder, settings, key, value)
            if good:
                kwargs["knowledge_sources"] = [*kwargs.get("knowledge_sources", []), *(sources or [])]
            continue
        if spec.kind == "agent":
            if not isinstance(value, str) or value not in agent_names:
                builder.error(settings, key, f"unknown agent {value!r}{did_you_mean(value, agent_names)}")
            elif value in agents:
                kwargs[key] = agents[value]
            continue
        good, resolved = builder.value_of(settings, key, spec, value)
        if good and (spec.kind != "value" or builder.field_ok(settings, "crew", key, resolved)):
            kwargs[key] = resolved
    if builder.llm_override:
        kwargs.update({k: builder.llm_override for k, spec in fields.items() if spec.kind == "model"})
    if kwargs.get("knowledge_sources") or any(getattr(a, "knowledge_sources", None) for a in agents.values()):
        kwargs["knowledge_folder"] = knowledge_folder(builder.folder)  # relative paths resolve there
    return kwargs


def _manager_needs_a_model(builder: Builder, settings: Entry, kwargs: dict[str, Any], process: Any) -> None:
    """A hierarchical crew's manager is one more agent without a model when nothing gives it one."""
    hierarchical = str(getattr(process, "value", process)) == "hierarchical"
    modelled = kwargs.get("manager_agent") is not None or kwargs.get("manager_llm") is not None
    if hierarchical and not modelled and builder.crew_llm is None:
        builder.unmodelled.append(Entry("manager", settings.data, settings.file, settings.line, "manager_llm"))


def _make_crew(
    builder: Builder,
    entry: Entry,
    agents: dict[str, Any],
    tasks: list[Any],
    kwargs: dict[str, Any],
    task_entries: list[Entry],
) -> Any:
    """The Crew itself, once every entry is sound (the manager agent is not one of the workers)."""
    from crew.crew import Crew

    manager = kwargs.get("manager_agent")
    workers = [agent for agent in agents.values() if agent is not manager]
    # Only a kickoff needs litellm: validate, plot and tools must not pay for its import.
    return _construct_crew(
        builder,
        entry,
        Crew,
        {"agents": workers, "tasks": tasks, **kwargs},
        task_entries,
        context={"prewarm": builder.require_model},
    )


def _construct_crew(
    builder: Builder, entry: Entry, cls: type, kwargs: dict[str, Any], tasks: list[Entry], *, context: dict[str, Any]
) -> Any:
    """Build the Crew; its graph errors name tasks, which are mapped back to their lines."""
    import re

    from crew.errors import GraphError

    try:
        return builder.construct(entry, cls, kwargs, passthrough=(GraphError,), context=context)
    except GraphError as exc:
        by_name = {e.name: e for e in tasks}
        for message in exc.errors:
            named = re.search(r"task '([^']+)'", message)
            where = by_name.get(named.group(1)) if named else None
            target = where or entry
            builder.problems.add(target.file, target.line, target.path or "tasks", message)
    return None


def _crewbase_beside(folder: Path) -> bool:
    """A crew.yaml folder is native (its scripts are the user's business) unless a @CrewBase crew.py sits there too."""
    from crew.config.crewai.reader import defines_crewbase

    return any(defines_crewbase(p) for p in sorted(folder.glob("*.py")))


def _default(field_name: str) -> Any:
    from crew.config.fields import fields_of

    spec = fields_of("crew").get(field_name)
    return spec.default if spec is not None else None


def _no_model(builder: Builder, settings: Entry, level: str) -> None:
    """One message for every agent without a model: the fix is usually one crew-level line."""
    names = ", ".join(f"'{e.name}'" for e in builder.unmodelled)
    first = builder.unmodelled[0]
    file, line, path = (
        (settings.file, settings.line_of("llm"), "llm") if settings.file else (first.file, first.line, first.path)
    )
    builder.problems.add(
        file,
        line,
        path,
        f"no model for {names}: set `llm:` in crew.yaml (or per agent), set CREW_LLM, or pass --llm MODEL "
        "(--llm test runs offline with no key; e.g. --llm openai/gpt-4o-mini needs OPENAI_API_KEY)",
        level,  # type: ignore[arg-type]
    )
