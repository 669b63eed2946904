"""A crew's run, live in a web page: a Starlette app serving ``Crew.astream`` as server-sent events.

Run it:  pip install "crew-agents[web-stream]" uvicorn && uvicorn app:app --app-dir examples/web_stream
then open http://127.0.0.1:8000 and press "Run". ``CREW_LLM`` picks a real model (the default,
"test", runs offline).

``GET /`` is the page; ``GET /events?topic=...`` runs the crew and sends one SSE message per
event (``event: <type>``, ``data: <the event as JSON>``), the last one ``event: output``. When
the browser goes away Starlette cancels the response, which closes the stream, which cancels
the run: nobody pays for tokens nobody reads.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import aclosing
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, StreamingResponse
from starlette.routing import Route

from crew import Agent, Crew, Task
from crew.stream import to_json

PAGE = Path(__file__).with_name("index.html")


def build_crew(llm: Any = None) -> Crew:
    """Two researchers side by side, then a writer: the page shows their text as it arrives.

    ``llm`` is a model name or a model object (a test double, in the tests).
    """
    model = llm or os.environ.get("CREW_LLM", "test")
    facts = Agent(role="Fact finder", goal="Find three facts about {topic}", llm=model)
    angles = Agent(role="Angle finder", goal="Find an unusual angle on {topic}", llm=model)
    writer = Agent(role="Writer", goal="Write a short paragraph about {topic}", llm=model)
    find = Task(name="facts", description="Three facts about {topic}.", expected_output="Three lines.", agent=facts)
    angle = Task(name="angle", description="One unusual angle on {topic}.", expected_output="One line.", agent=angles)
    write = Task(
        name="paragraph",
        description="A paragraph about {topic} from the facts and the angle.",
        expected_output="One paragraph.",
        agent=writer,
        context=[find, angle],
    )
    return Crew(agents=[facts, angles, writer], tasks=[find, angle, write], process="graph", name="web_stream")


async def sse(crew: Crew, inputs: dict[str, str]) -> AsyncIterator[str]:
    """One server-sent event per stream item; closing this generator cancels the run.

    A run that fails ends with ``event: run.error`` (its error type and message), so the page
    can say why; the response has started, so an exception here would only cut the connection.
    (Not ``event: error``: an EventSource reports its own connection errors under that name.)
    """
    try:
        async with aclosing(crew.astream(inputs)) as events:
            async for item in events:
                kind = getattr(item, "type", "output")
                yield f"event: {kind}\ndata: {to_json(item)}\n\n"
    except Exception as exc:  # noqa: BLE001 - the run's failure is the page's to show, not the server's log's
        error = json.dumps({"type": "run.error", "error": type(exc).__name__, "message": str(exc)})
        yield f"event: run.error\ndata: {error}\n\n"


async def page(request: Request) -> HTMLResponse:
    return HTMLResponse(PAGE.read_text(encoding="utf-8"))


async def events(request: Request) -> StreamingResponse:
    topic = request.query_params.get("topic", "").strip()[:200] or "bees"
    crew: Crew = request.app.state.crew
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(sse(crew, {"topic": topic}), media_type="text/event-stream", headers=headers)


def create_app(crew: Crew | None = None) -> Starlette:
    application = Starlette(routes=[Route("/", page), Route("/events", events)])
    application.state.crew = crew or build_crew()
    return application


app = create_app()
