"""A small HTTP API for web apps (Starlette): start a kickoff, follow it, decide its approvals.

| request | answer |
| --- | --- |
| ``GET /crews`` | the served crews: name, description, input and output schemas |
| ``POST /crews/{name}/kickoffs`` ``{"inputs": {...}}`` | 202 ``{"run_id", "status": "running", "events", "run"}`` |
| ``GET /runs/{id}`` | ``{"run_id", "crew", "status", "output", "error", "pending_approvals"}`` |
| ``GET /runs/{id}/events`` | server-sent events, from the first; the last is ``output`` or ``run.error`` |
| ``POST /runs/{id}/approvals`` ``{"call_id", "approve", "reason"}`` | 200: the waiting call goes on (or is denied) |
| ``DELETE /runs/{id}`` | 202: the run is cancelled (recorded as interrupted) |

A run belongs to the server, not to a connection: a page that closes its event stream can
come back to it (``GET /runs/{id}/events`` starts again from the first event). A tool call
that needs approval waits, with an ``approval.requested`` event, until a person posts the
decision. Errors are ``{"error": message}`` with 400 (a body that is not JSON), 404 (no such
crew, run or waiting call), 413 (a body over the cap) or 422 (inputs the crew's schema
refuses), never a traceback. Runs finished long ago are read from the run store.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from crew.common.secrets import scrub, scrub_data
from crew.errors import CrewRunError, ServeInputError
from crew.serve.guard import MAX_BODY_BYTES
from crew.serve.kickoffs import Kickoffs
from crew.serve.served import ServedCrew
from crew.stream.events import ApprovalRequested, StreamEvent

__all__ = ["HttpApi", "LiveRun"]

MAX_EVENTS = 20_000
"""Events a live run keeps for late readers; past it, its model text deltas are no longer kept (the rest is)."""
KEEP_FINISHED = 256
"""Finished runs kept in memory (older ones are read from the run store)."""


@dataclass
class LiveRun:
    """One kickoff the server started: its events as JSON, its outcome, the calls that wait for a person."""

    run_id: str
    crew: str
    status: str = "running"
    events: list[tuple[str, str]] = field(default_factory=list)
    """(event type, JSON) in the order they happened."""
    output: Any = None
    error: str | None = None
    waiting: dict[str, asyncio.Future[Any]] = field(default_factory=dict)
    requests: dict[str, Any] = field(default_factory=dict)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[Any] | None = None
    finished_at: float | None = None

    def add(self, kind: str, data: str) -> None:
        if len(self.events) < MAX_EVENTS or kind != "text.delta":  # past the cap, model text is left out
            self.events.append((kind, data))
        self._wake()

    def _wake(self) -> None:
        self.changed.set()
        self.changed = asyncio.Event()

    def end(self, status: str, kind: str, data: str) -> None:
        self.status, self.finished_at = status, time.time()
        self.add(kind, data)

    def summary(self) -> dict[str, Any]:
        pending = [scrub_data(r.model_dump(mode="json")) for r in self.requests.values()]
        return {
            "run_id": self.run_id,
            "crew": self.crew,
            "status": self.status,
            "output": self.output,
            "error": self.error,
            "pending_approvals": pending,
        }


class HttpApi:
    """The API over ``served`` crews (see the module docstring); ``app`` is the ASGI app."""

    def __init__(self, served: list[ServedCrew], kickoffs: Kickoffs, *, max_body: int = MAX_BODY_BYTES) -> None:
        self.served = {one.name: one for one in served}
        self.kickoffs = kickoffs
        self.max_body = max_body
        self.runs: OrderedDict[str, LiveRun] = OrderedDict()
        self.app = Starlette(
            routes=[
                Route("/crews", self._crews, methods=["GET"]),
                Route("/crews/{name}/kickoffs", self._kickoff, methods=["POST"]),
                Route("/runs/{run_id}", self._run, methods=["GET"]),
                Route("/runs/{run_id}", self._cancel, methods=["DELETE"]),
                Route("/runs/{run_id}/events", self._events, methods=["GET"]),
                Route("/runs/{run_id}/approvals", self._approve, methods=["POST"]),
            ]
        )

    # -- what a web app calls ------------------------------------------------------------

    def start(self, name: str, given: Any) -> LiveRun:
        """Start a kickoff of crew ``name`` (``KeyError`` unknown; ``ServeInputError`` bad inputs)."""
        import uuid

        served = self.served[name]
        inputs = served.check_inputs(given)
        run = LiveRun(run_id=uuid.uuid4().hex, crew=name)
        self.runs[run.run_id] = run
        self._forget_old()
        run.task = asyncio.ensure_future(self._drive(served, run, inputs))
        return run

    def event_stream(self, run: LiveRun, *, cancel_on_close: bool = False) -> StreamingResponse:
        """The run's events as a server-sent event response, from its first event.

        ``cancel_on_close``: the reader leaving (a closed page) cancels the run, for an app whose
        one request both starts a run and follows it.
        """
        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        events = _sse(run, on_close=(lambda: self.cancel(run)) if cancel_on_close else None)
        return StreamingResponse(events, media_type="text/event-stream", headers=headers)

    def cancel(self, run: LiveRun) -> None:
        if run.task is not None and not run.task.done():
            run.task.cancel()

    # -- the run, in the background --------------------------------------------------------

    async def _drive(self, served: ServedCrew, run: LiveRun, inputs: Mapping[str, Any]) -> None:
        async def on_event(event: StreamEvent) -> None:
            run.add(event.type, scrub(event.model_dump_json()))

        try:
            output = await self.kickoffs.run(
                served, inputs, run_id=run.run_id, on_event=on_event, approver=self._approver(run)
            )
        except asyncio.CancelledError:
            run.error = "interrupted"
            run.end("interrupted", "run.error", _error_event("Interrupted", "the run was cancelled"))
            return
        except CrewRunError as exc:
            run.error = scrub(str(exc))
            run.end("failed", "run.error", _error_event(type(exc).__name__, run.error))
            return
        except Exception as exc:  # noqa: BLE001 - the run's failure is the client's to read, not a crash of the server
            run.error = scrub(f"{type(exc).__name__}: {exc}")
            run.end("failed", "run.error", _error_event(type(exc).__name__, run.error))
            return
        from crew.stream.events import to_json

        failed = [t for t in output.tasks_output if t.status == "failed"]
        run.output = scrub_data(output.model_dump(mode="json"))
        run.error = "; ".join(f"task '{t.name}' failed: {t.error}" for t in failed) or None
        status = "failed" if failed else output.status
        run.end(status, "output", scrub(to_json(output)))

    def _approver(self, run: LiveRun) -> Any:
        from crew.tools.approval import ApprovalRequest

        async def wait_for_a_person(request: ApprovalRequest) -> Any:
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            run.waiting[request.call_id], run.requests[request.call_id] = future, request
            asked = ApprovalRequested(
                run_id=run.run_id,
                time=time.time(),
                task=request.task,
                agent=request.agent,
                tool=request.tool,
                call_id=request.call_id,
                args=request.args,
            )
            run.add(asked.type, scrub(asked.model_dump_json()))  # the page learns a decision is wanted
            try:
                return await future
            finally:
                run.waiting.pop(request.call_id, None)
                run.requests.pop(request.call_id, None)

        return wait_for_a_person

    def _forget_old(self) -> None:
        finished = [key for key, run in self.runs.items() if run.status != "running"]
        for key in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            del self.runs[key]

    # -- the routes ----------------------------------------------------------------------

    async def _crews(self, request: Request) -> Response:
        listed = [
            {
                "name": one.name,
                "description": one.description,
                "input_schema": one.input_schema,
                "output_schema": one.output_schema,
            }
            for one in self.served.values()
        ]
        return JSONResponse({"crews": listed})

    async def _kickoff(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in self.served:
            return _fail(404, f"no crew '{name}' here (served: {', '.join(self.served) or 'none'})")
        body = await self._body(request)
        if isinstance(body, Response):
            return body
        if not isinstance(body, dict) or not set(body) <= {"inputs"}:
            return _fail(400, 'the body must be a JSON object {"inputs": {...}}')
        try:
            run = self.start(name, body.get("inputs"))
        except ServeInputError as exc:
            return _fail(422, str(exc), problems=exc.problems)
        links = {"run": f"/runs/{run.run_id}", "events": f"/runs/{run.run_id}/events"}
        return JSONResponse({"run_id": run.run_id, "status": run.status, **links}, status_code=202)

    async def _run(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        run = self.runs.get(run_id)
        if run is not None:
            return JSONResponse(run.summary())
        stored = self._stored(run_id)
        return JSONResponse(stored) if stored is not None else _fail(404, f"no run '{run_id}' here")

    async def _events(self, request: Request) -> Response:
        run = self.runs.get(request.path_params["run_id"])
        if run is None:
            return _fail(404, f"no live run '{request.path_params['run_id']}' here (GET /runs/ID reads stored runs)")
        return self.event_stream(run)

    async def _cancel(self, request: Request) -> Response:
        run = self.runs.get(request.path_params["run_id"])
        if run is None:
            return _fail(404, f"no live run '{request.path_params['run_id']}' here")
        self.cancel(run)
        return JSONResponse({"run_id": run.run_id, "status": "cancelling"}, status_code=202)

    async def _approve(self, request: Request) -> Response:
        from crew.tools.approval import Approval

        run = self.runs.get(request.path_params["run_id"])
        if run is None:
            return _fail(404, f"no live run '{request.path_params['run_id']}' here")
        body = await self._body(request)
        if isinstance(body, Response):
            return body
        if not isinstance(body, dict) or not isinstance(body.get("call_id"), str):
            return _fail(400, 'the body must be a JSON object {"call_id": ..., "approve": true|false, "reason": ...}')
        if not isinstance(body.get("approve"), bool):
            return _fail(400, "'approve' must be true or false")
        future = run.waiting.get(body["call_id"])
        if future is None or future.done():
            waiting = ", ".join(run.waiting) or "none"
            return _fail(404, f"no call '{body['call_id']}' waits in run {run.run_id[:12]} (waiting: {waiting})")
        reason = str(body.get("reason") or "denied through the HTTP API")
        future.set_result(Approval.approve() if body["approve"] else Approval.deny(reason))
        return JSONResponse({"run_id": run.run_id, "call_id": body["call_id"], "approved": body["approve"]})

    async def _body(self, request: Request) -> Any:
        """The JSON body, read up to the cap; a ready error response otherwise."""
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > self.max_body:
                return _fail(413, f"the request body is over the limit of {self.max_body:,} bytes")
            chunks.append(chunk)
        raw = b"".join(chunks)
        if not raw.strip():
            return {}
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):
            return _fail(400, "the body is not JSON")

    def _stored(self, run_id: str) -> dict[str, Any] | None:
        from crew.errors import StoreError

        for one in self.served.values():
            if one.store is None:
                continue
            try:
                stored = one.store.run(run_id)
            except (StoreError, KeyError, LookupError):
                continue
            if stored.id != run_id:  # the store takes a prefix; an API takes the whole id
                continue
            outputs = one.store.outputs(stored.id)
            last = list(outputs.values())[-1].raw if outputs else None
            return {
                "run_id": stored.id,
                "crew": stored.crew,
                "status": stored.status,
                "output": {"raw": scrub(last)} if last is not None else None,
                "error": scrub(stored.error) if stored.error else None,
                "pending_approvals": [],
            }
        return None


async def _sse(run: LiveRun, on_close: Any = None) -> AsyncIterator[str]:
    sent = 0
    try:
        while True:
            changed = run.changed
            while sent < len(run.events):
                kind, data = run.events[sent]
                sent += 1
                yield f"event: {kind}\ndata: {data}\n\n"
            if run.status != "running":
                return
            await changed.wait()
    finally:
        if on_close is not None and run.status == "running":
            on_close()


def _error_event(kind: str, message: str) -> str:
    return json.dumps({"type": "run.error", "error": kind, "message": message}, ensure_ascii=False)


def _fail(status: int, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": scrub(message), **extra}, status_code=status)
