"""A crew's run, live in a web page, on crew's built-in HTTP API (``crew.serve.http_api``).

Run it:  pip install "crew-agents[serve]" && uvicorn app:app --app-dir examples/web_stream
then open http://127.0.0.1:8000 and press "Run". ``CREW_LLM`` picks a real model (the default,
"test", runs offline).

The API does the work: ``POST /crews/web_stream/kickoffs`` starts a run, ``GET /runs/ID/events``
streams its events as server-sent events (``event: <type>``, ``data: <the event as JSON>``, the
last one ``event: output``, or ``event: run.error`` when it failed), ``GET /runs/ID`` reads its
status and output, ``POST /runs/ID/approvals`` decides a tool call that waits for a person (see
docs/serving.md). This app adds the page, and ``GET /events?topic=...``, which starts a run and
follows it in one request: when the browser goes away the response is cancelled, and the run
with it, so nobody pays for tokens nobody reads.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, StreamingResponse
from starlette.routing import Route

from crew import Agent, Crew, Task
from crew.serve.http_api import HttpApi
from crew.serve.kickoffs import Kickoffs
from crew.serve.served import serve_crew

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


async def page(request: Request) -> HTMLResponse:
    return HTMLResponse(PAGE.read_text(encoding="utf-8"))


async def events(request: Request) -> StreamingResponse:
    """Start a run of the topic and stream its events; the page closing cancels the run."""
    topic = request.query_params.get("topic", "").strip()[:200] or "bees"
    api: HttpApi = request.app.state.api
    run = api.start("web_stream", {"topic": topic})
    return api.event_stream(run, cancel_on_close=True)


def create_app(crew: Crew | None = None) -> Starlette:
    """The API over the crew (``/crews``, ``/runs/...``), with the page and its one-request ``/events``."""
    api = HttpApi([serve_crew(crew or build_crew(), name="web_stream")], Kickoffs(max_concurrency=4))
    application = api.app
    application.router.routes.extend([Route("/", page), Route("/events", events)])
    application.state.api = api
    return application


app = create_app()
