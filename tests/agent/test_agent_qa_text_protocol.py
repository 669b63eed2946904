"""Text-mode replies found in QA: fences right after a marker, two actions in one reply, numbered markers.

Parser checks first, then the same replies through an agent (FunctionModel in text mode), so what
the model sees in its history and which tools really ran are checked too.
"""

import pytest

from crew import Agent, Task, tool
from crew.agent.text_protocol import Action, FinalAnswer, parse_reply
from crew.testing import FunctionModel


def test_a_fence_opened_right_after_the_colon_stays_whole():
    final = parse_reply("Thought: done\nFinal Answer: ```python\nprint(1)\n```")
    assert isinstance(final, FinalAnswer) and final.answer == "```python\nprint(1)\n```"

    action = parse_reply('Action: search\nAction Input: ```json\n{"query": "cats"}\n```')
    assert isinstance(action, Action)
    assert action.args == {"query": "cats"} and action.raw_input == '{"query": "cats"}'

    bare = parse_reply("Action: search\nAction Input: ```\ncats\n```")
    assert isinstance(bare, Action) and bare.raw_input == "cats"


def test_only_the_first_of_two_actions_is_read_and_kept():
    parsed = parse_reply(
        'Thought: both\nAction: search\nAction Input: {"query": "cats"}\n'
        'Action: search\nAction Input: {"query": "dogs"}'
    )
    assert isinstance(parsed, Action) and parsed.args == {"query": "cats"}
    assert parsed.raw_input == '{"query": "cats"}' and "dogs" not in parsed.text


@pytest.mark.parametrize(
    "reply",
    [
        '1. Action: search\n2. Action Input: {"query": "cats"}',
        '1) Thought: look\n2) Action: search\n3) Action Input: {"query": "cats"}',
        '- **Action:** search\n- **Action Input:** {"query": "cats"}',
    ],
)
def test_numbered_and_listed_markers(reply):
    parsed = parse_reply(reply)
    assert isinstance(parsed, Action) and (parsed.tool, parsed.args) == ("search", {"query": "cats"})


ran: list[str] = []


@tool
def search(query: str) -> str:
    """Search the web."""
    ran.append(query)
    return f"results for {query}"


def run_text_agent(replies: list[str]) -> tuple[str, list[list[dict]]]:
    ran.clear()
    script = iter(replies)
    seen: list[list[dict]] = []

    def fn(messages, tools):
        seen.append([dict(m) for m in messages])
        return next(script)

    out = Agent(role="R", goal="G", llm=FunctionModel(fn, function_calling=False), tools=[search]).execute_task(
        Task(description="Cats", expected_output="a sentence")
    )
    return out.raw, seen


def test_two_actions_run_one_and_the_history_shows_only_that_one():
    raw, seen = run_text_agent(
        [
            'Action: search\nAction Input: {"query": "cats"}\nAction: search\nAction Input: {"query": "dogs"}',
            "Final Answer: done",
        ]
    )
    assert raw == "done" and ran == ["cats"]
    said, observation = seen[1][-2:]
    assert said == {"role": "assistant", "content": 'Action: search\nAction Input: {"query": "cats"}'}
    assert observation == {"role": "user", "content": "Observation: results for cats"}


def test_a_fenced_final_answer_reaches_the_output_intact():
    raw, _ = run_text_agent(["Thought: here it is\nFinal Answer: ```python\nprint('cats')\n```"])
    assert raw == "```python\nprint('cats')\n```"
