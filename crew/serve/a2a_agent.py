"""Served crews as one A2A agent (the official ``a2a-sdk``): a skill per crew, a task per kickoff.

The agent card (at the SDK's well-known path) lists a skill per served crew, with the crew's
name and description and its inputs spelled out (A2A skills carry no schema). A message
names its skill in its metadata or the request's (``{"skill": "trip_planner"}``) or in a data part
(``{"skill": ..., "inputs": {...}}``); with one crew served it may name none. Its inputs are
the data part's ``inputs`` (or the data part itself), and a text part fills the crew's one
input without a default (or its only input). ``message/send`` and ``message/stream`` both
run a kickoff whose run id is the task id; states map from the run:

| run | A2A task |
| --- | --- |
| started, running | working (each task's start as a status message) |
| a task finished | an artifact: the task's text, and its structured output as a data part |
| done | completed |
| paused for an approval | input-required, the message saying how to answer (a follow-up message, or ``crew approve``) |
| failed, refused inputs | failed |
| cancelled (``tasks/cancel``, a server stop) | canceled (the run store: interrupted, resumable) |

A follow-up message on an input-required task answers it (``crew.serve.decisions``: "approve",
"deny REASON", or a data part with the decision): the waiting calls are decided and the run
continues (``crew resume``'s path, a new run continuing the paused one, in the same A2A task)
until it completes, fails or pauses again. An answer that decides nothing leaves the task
input-required, saying how to answer.

``tasks/get`` and ``tasks/cancel`` read the SDK's task records, kept in memory, and fall back
on the run store: a task the server ran before a restart is rebuilt from its run (state and
artifacts), so it survives the restart.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Mapping
from typing import Any

from a2a.helpers.proto_helpers import get_data_parts, get_text_parts, new_data_part, new_task, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue
from a2a.server.tasks import InMemoryTaskStore, TaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Artifact,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Part,
    Task,
    TaskState,
)

from crew.common.secrets import scrub, scrub_data
from crew.errors import CrewRunError, ServeInputError
from crew.serve.decisions import HOW_TO_ANSWER, parse_answer
from crew.serve.kickoffs import Kickoffs
from crew.serve.served import ServedCrew
from crew.stream.events import StreamEvent, TaskFailed, TaskFinished, TaskStarted

__all__ = ["CrewExecutor", "RunStoreTasks", "agent_card", "build_a2a_app"]

_STATES = {
    "running": TaskState.TASK_STATE_WORKING,
    "done": TaskState.TASK_STATE_COMPLETED,
    "paused": TaskState.TASK_STATE_INPUT_REQUIRED,
    "failed": TaskState.TASK_STATE_FAILED,
    "interrupted": TaskState.TASK_STATE_CANCELED,
}
"""A stored run's status as an A2A task state."""


class CrewExecutor(AgentExecutor):
    """Runs the kickoff a message asks for, publishing its task's states and artifacts."""

    def __init__(self, served: list[ServedCrew], kickoffs: Kickoffs) -> None:
        self.served = {one.name: one for one in served}
        self.kickoffs = kickoffs
        self.crews: dict[str, str] = {}
        """Task id -> the served crew's name, for the tasks this server started."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = context.task_id or "", context.context_id or ""
        updater = TaskUpdater(event_queue, task_id, context_id)
        current = context.current_task
        if current is None:  # the task comes first, then its updates
            self.crews.setdefault(task_id, "")  # the SDK's records hold it from now on, never the run store
            history = [context.message] if context.message is not None else []
            await event_queue.enqueue_event(
                new_task(task_id, context_id, TaskState.TASK_STATE_SUBMITTED, history=history)
            )
        elif current.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            await self._answered(context, task_id, updater)
            return
        try:
            one, inputs = self._chosen(context)
        except ServeInputError as exc:
            await updater.failed(_say(updater, str(exc)))
            return
        await updater.start_work(_say(updater, f"running the crew '{one.name}'"))
        self.crews[task_id] = one.name
        await self._run(one, inputs, task_id, updater)

    async def _answered(self, context: RequestContext, task_id: str, updater: TaskUpdater) -> None:
        """A follow-up on a paused task: its answer decides the waiting calls, and the run goes on."""
        from crew.errors import StoreError
        from crew.store.approvals import pending

        found = self._paused(task_id)
        if found is None:
            await updater.failed(_say(updater, "this task's run is not in this server's run store: it cannot go on"))
            return
        one, run_id = found
        parts = list(context.message.parts) if context.message is not None else []
        try:
            answer = parse_answer(list(get_text_parts(parts)), list(get_data_parts(parts)), crew=one.name)
            approvals = answer.approvals(pending(one.store, run_id), crew=one.name)
            await updater.start_work(_say(updater, f"continuing the run {run_id[:12]} of crew '{one.name}'"))
            await self._run(one, {}, uuid.uuid4().hex, updater, resume=run_id, approvals=approvals)
        except (ServeInputError, StoreError) as exc:
            await updater.requires_input(_say(updater, scrub(str(exc))))

    def _paused(self, task_id: str) -> tuple[ServedCrew, str] | None:
        """The served crew of a task and its newest run (a continued run's continuation, and so on)."""
        from crew.errors import StoreError
        from crew.store.approvals import continued_by

        named = self.served.get(self.crews.get(task_id, ""))
        candidates = [named] if named is not None else list(self.served.values())
        for one in candidates:
            if one.store is None:
                continue
            try:
                run = one.store.run(task_id)
            except StoreError:
                continue
            if named is None and run.crew not in (one.name, one.crew.name):
                continue
            while (later := continued_by(one.store, run.id)) is not None:
                run = later
            return one, run.id
        return None

    async def _run(
        self,
        one: ServedCrew,
        inputs: dict[str, Any],
        run_id: str,
        updater: TaskUpdater,
        *,
        resume: str | None = None,
        approvals: dict[Any, Any] | None = None,
    ) -> None:
        async def on_event(event: StreamEvent) -> None:
            await _publish(one, event, updater)

        try:
            output = await self.kickoffs.run(
                one, inputs, run_id=run_id, on_event=on_event, resume=resume, approvals=approvals
            )
        except asyncio.CancelledError:
            await asyncio.shield(updater.cancel(_say(updater, "the run was cancelled (recorded as interrupted)")))
            raise
        except CrewRunError as exc:
            await updater.failed(_say(updater, scrub(str(exc))))
            return
        if output.status == "paused":
            from crew.serve.mcp_server import paused_text

            await updater.requires_input(_say(updater, f"{paused_text(one, output)}\n{HOW_TO_ANSWER}"))
            return
        failed = [t for t in output.tasks_output if t.status == "failed"]
        if failed:
            why = "; ".join(f"task '{t.name}' failed: {t.error}" for t in failed)
            await updater.failed(_say(updater, scrub(why)))
            return
        await updater.complete(_say(updater, scrub(output.raw)))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """The SDK cancels ``execute``'s task first (which cancels the run); this says so to the client."""
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await updater.cancel(_say(updater, "cancelled"))

    def _chosen(self, context: RequestContext) -> tuple[ServedCrew, dict[str, Any]]:
        message = context.message
        parts = list(message.parts) if message is not None else []
        data = [d for d in get_data_parts(parts) if isinstance(d, dict)]
        texts = [t for t in get_text_parts(parts) if t.strip()]
        given = data[0] if data else {}
        from google.protobuf.json_format import MessageToDict

        meta = {**(MessageToDict(message.metadata) if message is not None else {}), **context.metadata}
        name = meta.get("skill") or given.get("skill")
        if name is None and len(self.served) == 1:
            name = next(iter(self.served))
        if name not in self.served:
            known = ", ".join(self.served)
            raise ServeInputError(
                f'name a skill ({known}) in the message\'s metadata ({{"skill": NAME}}) or in a data part',
                crew=str(name),
            )
        one = self.served[str(name)]
        inputs = given.get("inputs", {k: v for k, v in given.items() if k != "skill"})
        if texts and isinstance(inputs, dict):
            target = _text_input(one)
            if target is not None and target not in inputs:
                inputs = {**inputs, target: "\n".join(texts)}
        return one, one.check_inputs(_whole_numbers(one, inputs))


async def _publish(one: ServedCrew, event: StreamEvent, updater: TaskUpdater) -> None:
    if isinstance(event, TaskStarted):
        who = f" ({event.agent})" if event.agent else ""
        await updater.start_work(_say(updater, scrub(f"task.started {event.task}{who}")))
    elif isinstance(event, TaskFinished):
        await updater.add_artifact(_artifact_parts(one, event.output), name=event.task)
    elif isinstance(event, TaskFailed):
        await updater.start_work(_say(updater, scrub(f"task.failed {event.task}: {event.error}")))


def _artifact_parts(one: ServedCrew, output: Any) -> list[Part]:
    parts = [new_text_part(scrub(str(output.raw)), media_type="text/plain")]
    structured = output.pydantic.model_dump(mode="json") if output.pydantic is not None else output.json_dict
    if structured is not None:
        parts.append(new_data_part(scrub_data(structured), media_type="application/json"))
    return parts


def _say(updater: TaskUpdater, text: str) -> Message:
    return updater.new_agent_message([new_text_part(text)])


def _text_input(one: ServedCrew) -> str | None:
    """The input a text part fills: the one without a default, else the only one."""
    properties = one.input_schema.get("properties", {})
    required = one.input_schema.get("required", [])
    if len(required) == 1:
        return required[0]
    return next(iter(properties)) if len(properties) == 1 else None


def _whole_numbers(one: ServedCrew, inputs: Any) -> Any:
    """A2A data parts carry every number as a double: ``2.0`` back to ``2`` where the input is an integer."""
    if not isinstance(inputs, dict):
        return inputs
    properties = one.input_schema.get("properties", {})
    return {
        key: int(value)
        if isinstance(value, float) and value.is_integer() and properties.get(key, {}).get("type") == "integer"
        else value
        for key, value in inputs.items()
    }


class RunStoreTasks(TaskStore):
    """The SDK's task records in memory, rebuilt from the run store for a task this process never saw."""

    def __init__(self, served: list[ServedCrew], started: Mapping[str, str] | None = None) -> None:
        self.memory = InMemoryTaskStore()
        self.served = served
        self.started = started if started is not None else {}
        """The tasks this process started (``CrewExecutor.crews``): their runs are not rebuilt from the store,
        whose run appears before the SDK has recorded the task."""

    async def save(self, task: Task, context: ServerCallContext) -> None:
        await self.memory.save(task, context)

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        task = await self.memory.get(task_id, context)
        if task is not None or task_id in self.started:
            return task
        return self._stored(task_id)

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        return await self.memory.list(params, context)

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        await self.memory.delete(task_id, context)

    def _stored(self, task_id: str) -> Task | None:
        from crew.errors import StoreError

        stores = {id(one.store): one.store for one in self.served if one.store is not None}
        for store in stores.values():
            try:
                run = store.run(task_id)
            except StoreError:
                continue
            if run.id != task_id:
                continue
            artifacts = [
                Artifact(artifact_id=f"{task_id}-{name}", name=name, parts=[new_text_part(scrub(str(out.raw)))])
                for name, out in store.outputs(run.id).items()
            ]
            state = _STATES.get(run.status, TaskState.TASK_STATE_FAILED)
            return new_task(task_id, task_id, state, artifacts=artifacts)
        return None


def agent_card(served: list[ServedCrew], url: str, *, token: bool) -> AgentCard:
    """The agent's card: a skill per crew, the JSON-RPC interface at ``url``; no secret in it."""
    from crew import __version__

    skills = [
        AgentSkill(
            id=one.name,
            name=one.name,
            description=f"{one.description} {_inputs_line(one)}",
            tags=["crew"],
            input_modes=["application/json", "text/plain"],
            output_modes=["application/json", "text/plain"] if one.output_schema else ["text/plain"],
        )
        for one in served
    ]
    names = ", ".join(one.name for one in served)
    card = AgentCard(
        name="crew",
        description=f"Crews of LLM agents served by crew: {names}. Each skill runs a crew and returns its output.",
        version=__version__,
        supported_interfaces=[AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["application/json", "text/plain"],
        default_output_modes=["text/plain", "application/json"],
        skills=skills,
    )
    if token:
        from a2a.types.a2a_pb2 import HTTPAuthSecurityScheme, SecurityRequirement, SecurityScheme, StringList

        card.security_schemes["bearer"].CopyFrom(
            SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="bearer"))
        )
        card.security_requirements.append(SecurityRequirement(schemes={"bearer": StringList(list=[])}))
    return card


def _inputs_line(one: ServedCrew) -> str:
    properties: dict[str, Any] = one.input_schema.get("properties", {})
    if not properties:
        return "It takes no inputs."
    required = set(one.input_schema.get("required", []))
    described = []
    for name, spec in properties.items():
        default = "" if name in required else f", default {json.dumps(spec.get('default'), ensure_ascii=False)}"
        described.append(f"{name} ({spec.get('type', 'string')}{default})")
    return (
        f'Inputs, as a data part {{"skill": "{one.name}", "inputs": {{...}}}}: '
        + ", ".join(described)
        + ("; required: " + ", ".join(sorted(required)) if required else "")
        + "."
    )


def build_a2a_app(served: list[ServedCrew], kickoffs: Kickoffs, url: str, *, token: bool) -> Any:
    """The Starlette app: the agent card at the well-known path and the JSON-RPC endpoint at ``/``."""
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes.agent_card_routes import create_agent_card_routes
    from a2a.server.routes.jsonrpc_routes import create_jsonrpc_routes
    from starlette.applications import Starlette

    card = agent_card(served, url, token=token)
    executor = CrewExecutor(served, kickoffs)
    handler = DefaultRequestHandler(
        agent_executor=executor, task_store=RunStoreTasks(served, executor.crews), agent_card=card
    )
    routes = create_agent_card_routes(card) + create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True)
    return Starlette(routes=routes)
