"""Context providers: asked once before each task, shown in its prompt, told of its output, recorded."""

from __future__ import annotations

from crew import Agent, Crew, Task
from crew.agent.context import ContextItem, ContextProvider, ContextRequest, PromptSection
from crew.common.events import bus
from crew.testing import FunctionModel


class Notes:
    """A provider that gives each task one note, and keeps the outputs it is told of."""

    name = "notes"

    def __init__(self) -> None:
        self.asked: list[ContextRequest] = []
        self.done: list[tuple[str, str]] = []

    async def provide(self, request: ContextRequest) -> PromptSection | None:
        self.asked.append(request)
        if request.task == "quiet":
            return None
        item = ContextItem(f"note for {request.task}", source="run r0, task earlier", id="n1", score=0.5)
        return PromptSection(self.name, "Notes you kept", (item,))

    async def task_done(self, request: ContextRequest, output) -> None:
        self.done.append((request.task, output.raw))


def test_each_task_prompt_shows_what_its_providers_gave_and_they_hear_of_the_output():
    prompts: list[str] = []

    def reply(messages, tools):
        prompts.append(messages[1]["content"])
        return "answer " + str(len(prompts))

    agent = Agent(role="Writer", goal="write", llm=FunctionModel(reply))
    notes = Notes()
    assert isinstance(notes, ContextProvider)
    crew = Crew(
        name="team",
        agents=[agent],
        tasks=[
            Task(name="draft", description="Draft it", expected_output="a draft", agent=agent),
            Task(name="quiet", description="Say nothing", expected_output="text", agent=agent),
        ],
        context_providers=[notes],
    )
    events = []
    unsubscribe = bus.subscribe(lambda e: events.append(e) if e.type == "task.context" else None)
    try:
        crew.kickoff()
    finally:
        unsubscribe()
    assert prompts[0].endswith("Notes you kept:\n- note for draft (run r0, task earlier)")
    assert "Notes you kept" not in prompts[1]
    assert [(r.task, r.crew, r.agent_role, r.query) for r in notes.asked] == [
        ("draft", "team", "Writer", "Draft it\na draft"),
        ("quiet", "team", "Writer", "Say nothing\ntext"),
    ]
    assert notes.done == [("draft", "answer 1"), ("quiet", "answer 2")]
    (event,) = events
    assert event.data["task"] == "draft" and event.data["replayed"] is False
    assert event.data["sections"][0]["items"] == [
        {"id": "n1", "score": 0.5, "source": "run r0, task earlier", "text": "note for draft"}
    ]


def test_a_prompt_template_without_the_field_still_gets_the_sections():
    from crew.agent import prompts

    out = prompts.task_prompt(description="d", expected_output="e", template="Do: {description}", sections="S:\n- x")
    assert out == "Do: d\n\nS:\n- x"
    out = prompts.task_prompt(description="d", expected_output="e", template="{sections}|{description}", sections="S")
    assert out == "S|d"
