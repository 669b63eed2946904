"""A text-mode task paused for an approval goes on, after a resume, from where it stopped."""

from crew import Agent, Crew, Task, tool
from crew.testing import FunctionModel

WIPED: list[str] = []


@tool(requires_approval=True)
def wipe(path: str) -> str:
    """Wipe a path."""
    WIPED.append(path)
    return f"wiped {path}"


def scripted(*replies: str) -> FunctionModel:
    queue = list(replies)
    seen: list[list[dict]] = []

    def fn(messages: list[dict], tools: object) -> str:
        seen.append(list(messages))
        return queue.pop(0)

    model = FunctionModel(fn, function_calling=False)
    model.seen = seen  # type: ignore[attr-defined]
    return model


async def test_a_text_mode_run_paused_after_a_correction_keeps_the_correction_when_resumed():
    model = scripted(
        "I shall wipe it now.",  # neither marker: corrected
        'Thought: wipe it\nAction: wipe\nAction Input: {"path": "/tmp/x"}',  # waits for a person
        "Final Answer: /tmp/x is wiped",
    )
    agent = Agent(role="Ops", goal="Tidy", llm=model, tools=[wipe])
    crew = Crew(agents=[agent], tasks=[Task(name="tidy", description="Tidy", expected_output="done", agent=agent)])
    paused = await crew.kickoff_async()
    assert paused.status == "paused" and WIPED == []
    checkpoint = paused.checkpoints["tidy"]
    assert checkpoint.corrected  # the paused turn followed a correction
    restored = type(checkpoint).model_validate_json(checkpoint.model_dump_json())  # as a run store keeps it

    out = await crew.kickoff_async(
        checkpoints={"tidy": restored}, approvals={paused.pending_approvals[0].call_id: True}
    )
    assert (out.status, out.raw, WIPED) == ("done", "/tmp/x is wiped", ["/tmp/x"])
    last = model.seen[-1]  # type: ignore[attr-defined]
    assert [m["role"] for m in last] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert "Observation: wiped /tmp/x" in last[-1]["content"]
