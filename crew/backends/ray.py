"""The Ray backend: kickoffs (``kickoff_for_each``) or the tasks of one graph
(``Crew(backend="ray")``) as Ray tasks, on a local instance or an existing cluster.

The driver (this process) stays in charge: it ships the crew once (``ray.put``), awaits
each Ray task, and records what comes back, so every kickoff and task is recorded once
even when Ray retries a task whose worker died. Ray is imported only here, and only when
a Ray backend is used.

A local instance started here talks to nothing outside loopback (see ``start_local``).
"""

from __future__ import annotations

import asyncio
import atexit
import dataclasses
import logging
import os
import secrets
import shutil
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from crew.backends.remote_events import WHOLE_RUN, collected, replay, wanted
from crew.backends.shipping import check_shippable, register_local_modules
from crew.common.events import Event
from crew.errors import ConfigError, CrewError, CrewRunError
from crew.tasks.output import CrewOutput

INSTALL_HINT = "pip install 'crew-agents[ray]'"

LOOPBACK_ENV = {
    # No usage report, no "disabled" report, no prompt.
    "RAY_USAGE_STATS_ENABLED": "0",
    # Off, Ray takes loopback as this node's address instead of finding the address it
    # would use towards 8.8.8.8 / 2001:4860:4860::8888 (a UDP connect out of the machine).
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
}
"""Environment of a local instance started here (see ``start_local`` for the rest)."""

_BOOTSTRAP = "ray_bootstrap_config.yaml"
_lock = threading.Lock()
_local: dict[str, Any] = {}  # the instance crew started: temp_dir


def load_ray() -> Any:
    """``import ray``, or a ConfigError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ConfigError(f"the Ray backend needs Ray, which is not installed: {INSTALL_HINT}") from None
    return ray


def load_cloudpickle() -> Any:
    """Ray's own cloudpickle: what it will pickle our arguments with."""
    import importlib

    load_ray()
    return importlib.import_module("ray.cloudpickle")


def start_local(num_cpus: int | None = None, *, temp_dir: str | None = None, object_store_mb: int = 200) -> None:
    """Start a Ray instance on this machine whose processes reach nothing outside loopback.

    Besides ``LOOPBACK_ENV``: Ray's API server (started even with ``include_dashboard=False``,
    to run its usage-stats module) asks the cloud metadata services (169.254.169.254 and
    metadata.google.internal) which cloud it is on, *before* it looks whether usage stats
    are enabled, unless ``~/ray_bootstrap_config.yaml`` exists. Ray's processes are
    therefore started with HOME set to a folder of this instance holding an empty one,
    and workers get the real HOME back through the job's runtime environment. Token
    authentication stays on, with a fresh token passed in the environment (not written
    to ~/.ray). ``temp_dir`` (default: a new temporary folder) keeps this instance's
    sockets and logs apart from any other, so a stale /tmp/ray cannot break it.
    """
    imported = "ray" in sys.modules
    with _lock:
        # Ray reads these when it is imported: set them first (and refresh them below if it
        # was imported already).
        os.environ.update(LOOPBACK_ENV)
        if "RAY_AUTH_MODE" not in os.environ:
            os.environ["RAY_AUTH_MODE"] = "token"
            os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))
        ray = load_ray()
        if ray.is_initialized():
            return
        if imported:
            import importlib

            setattr(importlib.import_module("ray._private.ray_constants"), "ENABLE_RAY_CLUSTER", False)  # noqa: B010
            importlib.import_module("ray._raylet").Config.initialize("")  # as Ray does after setting RAY_AUTH_MODE
        folder = temp_dir or tempfile.mkdtemp(prefix="crew-ray-")
        home = Path(folder) / "home"
        home.mkdir(parents=True, exist_ok=True)
        (home / _BOOTSTRAP).write_text("{}\n", encoding="utf-8")
        real_home = os.environ.get("HOME") or str(Path.home())
        os.environ["HOME"] = str(home)
        try:
            ray.init(
                num_cpus=num_cpus,
                include_dashboard=False,
                _temp_dir=folder,
                object_store_memory=object_store_mb * 1024 * 1024,
                log_to_driver=False,
                logging_level=logging.WARNING,
                runtime_env={"env_vars": {"HOME": real_home, **_package_path()}},
            )
        finally:
            os.environ["HOME"] = real_home
        _local["temp_dir"] = None if temp_dir else folder
        if not temp_dir:  # ours: gone with the process, whoever forgets ``shutdown`` (a script's kickoff_for_each)
            atexit.register(_at_exit, folder)


def _package_path() -> dict[str, str]:
    """``PYTHONPATH`` for the workers when crew is not installed in site-packages (an editable install).

    Ray puts the driver's working folder on its workers' path, and such an install is found by
    a finder that only runs after the path: a crew folder named ``crew`` in that working folder
    would then be imported as the package itself. With crew's own folder on the path, the real
    package wins (a package with ``__init__.py`` beats a folder without one). An installed crew
    needs nothing: site-packages is on every worker's path already.
    """
    import sysconfig

    parent = str(Path(__file__).resolve().parents[2])
    installed = {str(Path(sysconfig.get_paths()[key]).resolve()) for key in ("purelib", "platlib")}
    if parent in installed:
        return {}
    return {"PYTHONPATH": os.pathsep.join([parent, "${PYTHONPATH}"])}


def connect(address: str | None = None, num_cpus: int | None = None) -> bool:
    """Use Ray as it is, else connect to ``address`` (or ``$RAY_ADDRESS``), else start a local
    instance; True when this call started one (the caller may ``shutdown`` it)."""
    ray = load_ray()
    if ray.is_initialized():
        return False
    address = address or os.environ.get("RAY_ADDRESS")
    if address:
        ray.init(
            address=address,
            log_to_driver=False,
            logging_level=logging.WARNING,
            runtime_env={"env_vars": _package_path()},
        )
        return False
    start_local(num_cpus)
    return True


def _at_exit(folder: str) -> None:
    """Ray first (its own exit hook, run after this one, would write its session folder again), then the folder."""
    if _local.get("temp_dir") == folder:
        shutdown()
    shutil.rmtree(folder, ignore_errors=True)


def shutdown_started() -> None:
    """Stop the local instance crew started in this process, if it did (a command ending, even on Ctrl-C)."""
    if _local.get("temp_dir"):  # set by start_local, which had imported Ray
        shutdown()


def shutdown() -> None:
    """Stop Ray in this process (and the local instance, when crew started it)."""
    ray = load_ray()
    ray.shutdown()
    folder = _local.pop("temp_dir", None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)


# -- kickoffs as Ray tasks ---------------------------------------------------------------


class Outcome(BaseModel):
    """What a worker sends back: the output, or the error as plain data (exceptions with
    keyword arguments do not survive pickling, and Ray's wrapping hides them)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    output: Any = None
    error: str | None = None
    task: str | None = None
    error_type: str | None = None
    events: list[Event] = Field(default_factory=list)
    """The kickoff's events the driver's recorder consumes (see ``crew.backends.remote_events``)."""

    def result(self) -> Any:
        if self.error is None:
            return self.output
        if self.error_type == "CrewRunError":
            raise CrewRunError(self.error, task=self.task, output=self.output)
        raise CrewError(f"{self.error_type}: {self.error}")


def kickoff_on_worker(crew: Any, inputs: dict[str, Any], run_id: str, types: frozenset[str] = frozenset()) -> Outcome:
    """The body of one kickoff's Ray task; its events of ``types`` go back with the outcome."""
    with collected(run_id, types) as events:
        try:
            output = asyncio.run(crew.kickoff_async(inputs, run_id=run_id))
        except CrewRunError as exc:
            return Outcome(output=exc.output, error=str(exc), task=exc.task, error_type="CrewRunError", events=events)
        except Exception as exc:  # noqa: BLE001 - sent back as data, raised again on the driver
            return Outcome(error=str(exc), error_type=type(exc).__name__, events=events)
        return Outcome(output=output, events=events)


_remote: dict[str, Any] = {}


def remote(fn: Any) -> Any:
    """``ray.remote(fn)``, made once per function."""
    key = f"{fn.__module__}.{fn.__qualname__}"
    if key not in _remote:
        _remote[key] = load_ray().remote(fn)
    return _remote[key]


class RayBackend:
    """Each kickoff is a Ray task; the crew is pickled once and shared through the object store.

    ``address`` (or ``$RAY_ADDRESS``) connects to a cluster; without one a local instance
    with ``num_cpus`` CPUs is started (and left running for later batches: ``shutdown()``).
    ``max_retries``: how often Ray reruns a kickoff whose worker died (its errors are not
    retried: a crew has its own task retries). ``task_options`` go to ``.options()``
    (e.g. ``{"num_cpus": 0.25}`` to run four I/O-bound kickoffs per CPU).
    """

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        *,
        num_cpus: int | None = None,
        max_retries: int = 2,
        task_options: dict[str, Any] | None = None,
    ) -> None:
        if max_retries < 0:
            raise ValueError(f"max_retries must be 0 or more, got {max_retries}")
        self.address = address
        self.num_cpus = num_cpus
        self.max_retries = max_retries
        self.task_options = dict(task_options or {})
        self.started = False
        self._crew_ref: Any = None
        self._task: Any = None

    async def open(self, crew: Any) -> None:
        ray = load_ray()
        cloudpickle = load_cloudpickle()
        shipped = driver_only_removed(crew)
        register_local_modules(shipped, cloudpickle.register_pickle_by_value)
        check_shippable(shipped, cloudpickle.dumps)  # before Ray starts: a crew that cannot travel costs nothing
        self.started = connect(self.address, self.num_cpus) or self.started
        self._crew_ref = ray.put(shipped)
        self._task = remote(kickoff_on_worker).options(
            max_retries=self.max_retries, retry_exceptions=False, **self.task_options
        )

    async def kickoff(self, crew: Any, inputs: dict[str, Any], *, run_id: str) -> CrewOutput:
        """The kickoff runs on a worker; the crew's one kickoff path records it here (with a run store)."""
        return await crew._kickoff_elsewhere(inputs, run_id=run_id, execute=lambda: self._kickoff(inputs, run_id))

    async def _kickoff(self, inputs: dict[str, Any], run_id: str) -> CrewOutput:
        from crew.run.tracing import start_tracing

        stop_tracing = start_tracing(run_id)  # the worker has no tracer: its replayed events make the spans here
        try:
            types = wanted() | (WHOLE_RUN if stop_tracing is not None else frozenset())  # what listens here
            ref = self._task.remote(self._crew_ref, inputs, run_id, types)
            outcome: Outcome = await await_ref(ref, what="kickoff", retries=self.max_retries)
            replay(outcome.events)  # only the attempt that came back: each call is recorded once
            return outcome.result()
        finally:
            if stop_tracing is not None:
                stop_tracing()

    async def close(self) -> None:
        self._crew_ref = None

    def shutdown(self) -> None:
        """Stop the local instance this backend started, if it did."""
        if self.started:
            shutdown()
            self.started = False


def driver_only_removed(crew: Any) -> Any:
    """The crew as workers get it: without what only the driver writes to (a run store:
    the driver records what comes back, so every kickoff is recorded once, in one place), its
    memory pinned to the driver's file by its absolute path (found beside the store, which the
    worker does not get; opened there, not here), its knowledge folder made absolute (a
    worker's working folder may be another)."""
    update: dict[str, Any] = {}
    if getattr(crew, "store", None) is not None:
        update["store"] = None
    settings = getattr(crew, "memory", None)
    if settings is not None and settings.memory is None:
        update["memory"] = dataclasses.replace(settings, path=crew.memory_path().resolve())
    if crew.knowledge_sources or any(agent.knowledge_sources for agent in crew.all_agents()):
        from crew.knowledge.crew_knowledge import knowledge_folder

        update["knowledge_folder"] = str(knowledge_folder(crew).resolve())
    if not update:
        return crew
    shipped = crew.model_copy(update=update)
    shipped._store = None  # the driver's open store (a copy keeps it): the worker gets none
    return shipped


async def await_ref(ref: Any, *, what: str, retries: int) -> Any:
    """Await a Ray task's result; cancelling cancels the Ray task; a lost worker is a CrewError."""
    ray = load_ray()
    try:
        return await ref
    except asyncio.CancelledError:
        ray.cancel(ref)
        raise
    except worker_lost() as exc:
        raise worker_died(what, retries, exc) from None


def worker_lost() -> tuple[type[BaseException], ...]:
    """The Ray errors of a worker (or its node) that died under a task: what ``max_retries`` retries."""
    exceptions = load_ray().exceptions
    return (exceptions.WorkerCrashedError, exceptions.NodeDiedError, exceptions.OwnerDiedError)


def worker_died(what: str, retries: int, exc: BaseException) -> CrewError:
    return CrewError(
        f"the Ray worker running this {what} died {retries + 1} time{'s' if retries else ''} "
        f"(max_retries={retries}): {type(exc).__name__}"
    )
