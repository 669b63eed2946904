"""``crew kickoff`` of a flow folder: a CrewAI flow project or a crew-native ``flow.py``.

Everything that can be known before the first step is checked first, and the run is
refused (exit 2, nothing run) when it fails: the ``crewai`` names the project imports that
crew does not serve, the packages and environment variables its own modules need, and every
crew folder it holds, loaded as ``crew kickoff`` would load it (the run's model, tools' keys).
Then the flow runs as its authors meant: a CrewAI project's from its root folder (its steps
open files relative to it, as under ``crewai flow kickoff``), with its ``.env`` read and its
``crewai`` imports served by ``crew/config/crewai/flow_compat.py`` for the run only; each
``SomeCrew().crew()`` of a step is that crew's folder, built here: on ``--llm test`` with dry
tools, as for a crew's kickoff.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from crew.cli import EXIT_FAILED, EXIT_OK, EXIT_PAUSED, llm_option

Prepare = Callable[[Any, dict[str, Any]], None]
"""What ``crew kickoff`` does to a crew before it runs (its ``--transport``, dry tools on the test model)."""


class FlowCrews:
    """Builds the crews of a flow's folders for the run: its model, its dry tools; warnings said once."""

    def __init__(self, llm: str | None, out: str | None, prepare: Prepare | None = None) -> None:
        self.llm, self.out, self.prepare = llm, out, prepare
        self._said: set[Path] = set()

    def project(self, folder: Path) -> Any:
        from crew.cli import load_project

        project = load_project(folder, llm=self.llm, out_dir=self.out, require_model=True)
        if folder not in self._said:
            self._said.add(folder)
            for warning in project.warnings:
                print(warning, file=sys.stderr)
        return project

    def __call__(self, folder: Path, inputs: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """The crew of ``folder`` ready to run on ``inputs`` (its defaults under them), and those inputs."""
        from crew.cli.verbose import route_verbose
        from crew.store.scrub import scrubber_for

        project = self.project(folder)
        merged = {**project.inputs, **(inputs or {})}
        scrubber_for(project.crew)
        route_verbose(project.crew, None, quiet=True)  # the flow's view says each task of its crews
        if self.prepare is not None:
            self.prepare(project.crew, merged)
        return project.crew, merged


def preflight(flow: Any, crews: FlowCrews) -> None:
    """Refuse, naming file and line, a flow that cannot run to its end here; raise ConfigError with every reason."""
    from crew.cli import preflight as crew_checks
    from crew.config.flow_project import check_flow
    from crew.config.problems import Problems
    from crew.errors import ConfigError

    problems = check_flow(flow, Problems())
    lines = [str(p) for p in problems.errors]
    for folder in flow.crew_folders:
        try:
            lines += crew_checks.crew_problems(crews.project(folder).crew)
        except ConfigError as exc:
            lines += list(exc.errors) or [str(exc)]
    if lines:
        raise ConfigError("\n".join(lines), errors=lines)


@contextlib.contextmanager
def flow_session(flow: Any, crews: FlowCrews) -> Iterator[type]:
    """The flow's class, imported with its modules' folder on ``sys.path`` (and, for a CrewAI project, its
    ``crewai`` served and its root the current folder); all put back afterwards."""
    from crew.config.crewai.flow_compat import flow_namespace
    from crew.config.project import crew_maker

    for name in [n for n in list(sys.modules) if n.split(".")[0] == flow.package]:
        del sys.modules[name]  # a package of that name loaded from elsewhere would serve its own modules
    before = set(sys.modules)
    sys.path.insert(0, str(flow.root.resolve()))
    cwd = os.getcwd()
    try:
        with contextlib.ExitStack() as stack:
            if flow.kind == "crewai":
                stack.enter_context(flow_namespace(lambda f, i: _crew_of(crews, f, i), flow.crew_files))
                os.chdir(flow.folder)
            stack.enter_context(crew_maker(lambda folder: crews(Path(folder))[0]))
            yield _flow_class(flow)
    finally:
        os.chdir(cwd)
        sys.path.remove(str(flow.root.resolve()))
        for name in set(sys.modules) - before:
            if name.split(".")[0] == flow.package or name.startswith("_crew_flow_"):
                del sys.modules[name]


@contextlib.contextmanager
def resumed_flow(
    args: argparse.Namespace, stored: Any, prepare: Prepare
) -> Iterator[tuple[type | None, dict[str, Any]]]:
    """The class of a flow run that ``crew kickoff`` of a flow folder recorded, imported as that kickoff
    imported it (a CrewAI project's ``crewai`` served, its crews on the run's ``--llm``, or on the one
    given now), and the settings the continuing run keeps for the next; (None, {}) for a run of
    another flow (``crew.flow.locate`` finds that one)."""
    from crew.config.flow_project import find_flow

    settings = stored.settings or {}
    cli: dict[str, Any] = settings.get("cli") or {}
    recorded = (settings.get("flow") or {}).get("qualname")
    where = getattr(args, "path", None) or cli.get("path")
    flow = find_flow(where, recorded) if cli and where and Path(where).exists() else None
    if flow is None:
        yield None, {}
        return
    llm = llm_option(getattr(args, "llm", None)) or cli.get("llm")
    out = getattr(args, "out", None) or cli.get("out")
    if flow.kind == "crewai":
        from crew.config.crewai.dotenv import load

        load(flow.folder)
    path = str(flow.folder if flow.kind == "crewai" else flow.file)
    with flow_session(flow, FlowCrews(llm, out, prepare)) as cls:
        yield cls, cli_settings(path, llm, out, bool(cli.get("live_tools")))


def _flow_class(flow: Any) -> type:
    """The flow's class, its module imported; an error while importing it names the file (exit 2)."""
    from crew.config.problems import display_path
    from crew.errors import ConfigError, CrewError

    try:
        module = importlib.import_module(flow.module) if flow.kind == "crewai" else _native_module(flow)
    except CrewError:
        raise
    except Exception as exc:  # the project's own code: whatever it raises is a problem of the project
        where = display_path(flow.file)
        raise ConfigError(f"{where}: importing the flow failed: {type(exc).__name__}: {exc}") from exc
    return getattr(module, flow.class_name)


def _native_module(flow: Any) -> Any:
    """A native flow file, imported by its path: its name (``flow``) may be taken by another module already."""
    import importlib.util

    name = flow.module if flow.module not in sys.modules else f"_crew_flow_{abs(hash(str(flow.file.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, flow.file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before it runs: pydantic and dataclasses look their module up
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _crew_of(crews: FlowCrews, folder: Path, inputs: dict[str, Any] | None) -> Any:
    crew, merged = crews(folder, inputs)
    return _Bound(crew, merged)


class _Bound:
    """A crew with its folder's default inputs under those of each kickoff."""

    def __init__(self, crew: Any, defaults: dict[str, Any]) -> None:
        self.crew, self.defaults = crew, defaults

    def kickoff(self, inputs: dict[str, Any] | None = None) -> Any:
        return self.crew.kickoff({**self.defaults, **(inputs or {})})

    async def kickoff_async(self, inputs: dict[str, Any] | None = None) -> Any:
        return await self.crew.kickoff_async({**self.defaults, **(inputs or {})})

    def __getattr__(self, name: str) -> Any:
        return getattr(self.crew, name)


def run(args: argparse.Namespace, flow: Any, inputs: dict[str, Any], prepare: Prepare, store: Any = None) -> int:
    """Check, then run the flow; print its result (the last step's output) or one JSON document.

    Exit 0 done, 1 a step failed (or the flow looped past ``max_steps``, or its crews spent its
    ``--max-tokens``/``--max-cost``), 3 paused on a question to a person, 2 refused before
    anything ran, 130/143 interrupted (Ctrl-C/SIGTERM). With ``store`` the run is recorded there
    (its steps, their state, its crews as child runs), with the flow's folder.
    """
    from crew.cli.budgets import apply_budgets
    from crew.cli.flow_progress import progress_for

    budgets = argparse.Namespace()
    apply_budgets(budgets, args)  # checked before anything loads; the flow's crews spend them together
    out = str(Path(args.out).absolute()) if args.out else None  # a CrewAI flow runs from its own root
    crews = FlowCrews(llm_option(args.llm), out, prepare)
    if flow.kind == "crewai":  # the project's .env, read as CrewAI reads it, before anything is checked
        from crew.config.crewai.dotenv import load

        load(flow.folder)
    preflight(flow, crews)
    outcome = _Outcome()
    from crew.cli.output import tool_output_to_stderr

    with flow_session(flow, crews) as cls, progress_for(args) as progress:
        outcome.flow = cls()
        outcome.flow.store = store
        for name, value in vars(budgets).items():
            setattr(outcome.flow, name, value)
        # what a resume in another process needs to build the crews as this run did
        path = str(flow.folder if flow.kind == "crewai" else flow.file)
        outcome.flow.run_settings = cli_settings(path, crews.llm, out, bool(args.live_tools))
        with tool_output_to_stderr():  # the steps' prints: stdout carries the result only
            outcome.run(inputs, str(flow.folder))
        outcome.progress = progress.summary()
    _print(args, outcome)
    return outcome.code


def cli_settings(path: str, llm: str | None, out: str | None, live_tools: bool) -> dict[str, Any]:
    """What a flow run keeps for ``crew resume``/``replay`` in another process (its folder, ``--llm`` ...)."""
    return {"cli": {"path": path, "llm": llm, "out": out, "live_tools": live_tools}}


def run_command(work: Any) -> Any:
    """Run a flow command's coroutine as ``crew kickoff`` runs a crew's: Ctrl-C, and SIGTERM (even with
    Ctrl-C ignored), cancel it and end as ``KeyboardInterrupt``. Nothing waits for a sync step still
    in its worker thread: the steps' threads, and the loop's default executor, never hold it."""
    import asyncio

    from crew.cli import interruptible
    from crew.common.daemon_pool import DaemonPool

    async def main() -> Any:
        asyncio.get_running_loop().set_default_executor(DaemonPool(thread_name_prefix="crew-worker"))
        return await interruptible(work)

    return asyncio.run(main())


def say_interrupted(run_id: str | None, summary: str, stored: bool) -> str:
    """The interrupt's lines on stderr (a crew's, its steps for its tasks); returns its word."""
    from crew.cli import interrupt_word

    word = interrupt_word()
    print(f"crew: {word}; {summary}", file=sys.stderr, flush=True)
    if stored and run_id:
        print(f"  resume with: crew resume {run_id[:12]}", file=sys.stderr, flush=True)
    return word


class _Outcome:
    """A flow kickoff's result: the output, or the error that stopped it (and so the exit code)."""

    def __init__(self) -> None:
        self.flow: Any = None
        self.result: Any = None
        self.error: Any = None
        self.interrupted = False
        self.progress = ""

    def run(self, inputs: dict[str, Any], folder: str) -> None:
        from crew.errors import FlowError

        try:
            self.result = run_command(self.flow.kickoff_async(inputs=inputs, folder=folder))
        except FlowError as exc:  # a step's failure (or a pause) is the run's result, said with the step
            self.error = exc
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the run is stored as interrupted, resumable
            self.interrupted = True

    @property
    def status(self) -> str:
        if self.interrupted:
            from crew.cli import interrupt_word

            return interrupt_word()
        if self.error is None:
            return "done"
        return "paused" if type(self.error).__name__ == "FlowPaused" else "failed"

    @property
    def code(self) -> int:
        if self.interrupted:
            from crew.cli import interrupt_code

            return interrupt_code()
        return {"done": EXIT_OK, "paused": EXIT_PAUSED}.get(self.status, EXIT_FAILED)

    def document(self) -> dict[str, Any]:
        flow = self.flow
        error = f"{self.status}; {self.progress}" if self.interrupted else self.error
        return {
            "flow": getattr(flow, "flow_name", None),
            "run_id": getattr(self.error, "run_id", None) or _run_id(flow),
            "status": self.status,
            "error": None if error is None else str(error),
            "step": getattr(self.error, "step", None),
            "output": _plain(self.result),
            "state": _plain(getattr(flow, "state", None)),
            "method_outputs": [_plain(o) for o in getattr(flow, "method_outputs", [])],
        }


def _run_id(flow: Any) -> str | None:
    run = getattr(flow, "_run", None)
    return getattr(run, "run_id", None)


def _print(args: argparse.Namespace, outcome: _Outcome) -> None:
    """stdout: the last step's output, or one JSON document (the last line of a ``--stream --json``)."""
    stream = getattr(args, "stream", False)
    if outcome.interrupted:
        say_interrupted(_run_id(outcome.flow), outcome.progress, getattr(outcome.flow, "store", None) is not None)
    if args.json:
        document = outcome.document()
        if stream:
            sys.stdout.write(json.dumps({"type": "output", **document}, ensure_ascii=False, default=str) + "\n")
        else:
            json.dump(document, sys.stdout, ensure_ascii=False, indent=2, default=str)
            sys.stdout.write("\n")
    elif outcome.status == "paused":
        paused = outcome.error
        run = (getattr(paused, "run_id", None) or "")[:12]
        print(f"paused: step '{paused.step}' asks: {getattr(paused, 'question', '')}", file=sys.stderr)
        answer = f'crew approve {run} {getattr(paused, "call_id", "")} --args \'{{"answer": "..."}}\''
        print(f"  answer with: {answer}", file=sys.stderr)
        print(f"  then: crew resume {run}", file=sys.stderr)
    elif outcome.error is not None and not outcome.interrupted:
        print(f"crew: {outcome.error}", file=sys.stderr)
    elif outcome.result is not None:
        sys.stdout.write(str(outcome.result).rstrip("\n") + "\n")
    sys.stdout.flush()


def _plain(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return value


__all__ = ["FlowCrews", "cli_settings", "flow_session", "preflight", "run", "run_command", "say_interrupted"]
