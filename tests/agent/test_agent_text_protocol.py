"""The text protocol parser, lenient JSON, structured-output checks and prompt assembly (no model)."""

import pytest
from pydantic import BaseModel

from crew.agent import prompts
from crew.agent.structured import OutputProblem, parse_output
from crew.agent.text_protocol import (
    NO_JSON,
    Action,
    FinalAnswer,
    Unparseable,
    clean_tool_name,
    parse_json_lenient,
    parse_reply,
)


def test_plain_action_and_final_answer():
    parsed = parse_reply('Thought: I need data\nAction: search\nAction Input: {"query": "cats"}')
    assert isinstance(parsed, Action)
    assert (parsed.tool, parsed.args, parsed.thought) == ("search", {"query": "cats"}, "I need data")

    final = parse_reply("Thought: I now know the final answer\nFinal Answer: Cats sleep 15 hours.\nMore lines.")
    assert isinstance(final, FinalAnswer)
    assert final.answer == "Cats sleep 15 hours.\nMore lines." and final.thought == "I now know the final answer"


def test_markdown_fences_single_quotes_and_trailing_prose():
    reply = (
        "**Thought:** let me look\n**Action:** `Search_Web`\n**Action Input:**\n```json\n"
        "{'query': 'cats', 'safe': true, 'limit': None}\n```\nI hope this works!"
    )
    parsed = parse_reply(reply)
    assert isinstance(parsed, Action)
    assert parsed.tool == "Search_Web"
    assert parsed.args == {"query": "cats", "safe": True, "limit": None}
    assert parsed.thought == "let me look"


def test_action_first_wins_and_invented_observation_is_cut():
    reply = (
        'Action: search\nAction Input: {"query": "x"} because I want it\n'
        "Observation: 42 results\nThought: done\nFinal Answer: invented"
    )
    parsed = parse_reply(reply)
    assert isinstance(parsed, Action) and parsed.args == {"query": "x"}
    assert "Observation" not in parsed.text and parsed.text.endswith("because I want it")

    final_first = parse_reply("Final Answer: 7\nAction: search\nAction Input: {}")
    assert isinstance(final_first, FinalAnswer) and final_first.answer.startswith("7")

    no_action = parse_reply("Thought: done\nAction: None\nFinal Answer: 42")
    assert isinstance(no_action, FinalAnswer) and no_action.answer == "42"


def test_one_line_action_and_input():
    parsed = parse_reply('Action: lookup Action Input: {"id": 3}')
    assert isinstance(parsed, Action) and (parsed.tool, parsed.args) == ("lookup", {"id": 3})


def test_unusable_replies_say_why():
    neither = parse_reply("I am not sure what to do.")
    assert isinstance(neither, Unparseable) and not neither.has_marker

    no_input = parse_reply("Thought: hm\nAction: search")
    assert isinstance(no_input, Unparseable) and no_input.has_marker and "Action Input" in no_input.reason

    bare = parse_reply("Action: search\nAction Input: cats in Paris")
    assert isinstance(bare, Action) and bare.args is None and bare.raw_input == "cats in Paris"

    empty = parse_reply("Action: now\nAction Input: None")
    assert isinstance(empty, Action) and empty.args == {}


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("**`Search Web`**", "Search Web"),
        ("[search_web]", "search_web"),
        ("search_web()", "search_web"),
        ("'lookup'.", "lookup"),
        ("search(query)", "search"),
    ],
)
def test_tool_names_are_cleaned(written, meant):
    assert clean_tool_name(written) == meant


def test_lenient_json():
    assert parse_json_lenient('Here you go: {"a": [1, {"b": "}"}]} thanks') == {"a": [1, {"b": "}"}]}
    assert parse_json_lenient("```\n[1, 2]\n```") == [1, 2]
    assert parse_json_lenient("{'a': 'it\\'s', 'ok': false, 'n': null}") == {"a": "it's", "ok": False, "n": None}
    assert parse_json_lenient("no json here") is NO_JSON
    assert parse_json_lenient("{broken") is NO_JSON


class Trip(BaseModel):
    city: str
    days: int


def test_structured_output_parse_and_problems():
    assert parse_output('Sure!\n```json\n{"city": "Oslo", "days": "3"}\n```', Trip) == Trip(city="Oslo", days=3)
    with pytest.raises(OutputProblem) as info:
        parse_output('{"city": "Oslo", "days": "many"}', Trip)
    assert "- days:" in str(info.value) and "integer" in str(info.value)
    with pytest.raises(OutputProblem, match="no JSON"):
        parse_output("Oslo for three days", Trip)


def test_render_leaves_unknown_braces_alone():
    text = prompts.render('{role} says {"json": true} and {{ .System }} {unknown}', {"role": "R", "system": "S"})
    assert text == 'R says {"json": true} and S {unknown}'
    # templates are parsed once and reused: repeats, case, spacing, adjacent fields, no fields
    fields = {"a": "1", "b": "2"}
    assert prompts.render("{a}{b}{A}{{.B}}{{  .a  }}", fields) == "12121"
    assert prompts.render("{a}{b}{A}{{.B}}{{  .a  }}", {"a": "x"}) == "x{b}x{{.B}}x"
    assert prompts.render("plain {}", fields) == "plain {}" and prompts.render("", fields) == ""
    assert prompts.render("{a}", {"a": "{b}"}) == "{b}"  # values are never rendered again


def test_context_sections_in_the_task_prompt():
    assert prompts.context_text([("a", "x"), ("b", "{y}")]) == "## a\nx\n\n## b\n{y}"
    text = prompts.task_prompt(
        description="d", expected_output="e", context=iter([("a", "x")]), template="{prompt}|{context}"
    )
    assert text == "Task: d\n\nExpected output: e\n\nContext from earlier tasks:\n## a\nx|## a\nx"


def test_system_prompt_static_and_tools_in_both_modes():
    common = dict(
        role="Analyst", goal="Find facts", backstory="", tool_descriptions=["Tool Name: search"], tool_names=["search"]
    )
    native = prompts.system_prompt(text_mode=False, **common)
    text = prompts.system_prompt(text_mode=True, **common)
    assert native.startswith("You are Analyst.\nYour goal: Find facts")  # no trailing space without backstory
    # native: names only (the manual travels in `tools`); text: the full descriptions and the protocol
    assert "Tools you can call: search." in native and "Tool Name" not in native and "Action Input" not in native
    assert "Tool Name: search" in text and "Action: <tool name, one of: search>" in text
    # a template without {system} or {tools} still gets the tools
    custom = prompts.system_prompt(text_mode=True, template="<<{role}>>", **common)
    assert custom.startswith("<<Analyst>>") and "Tool Name: search" in custom
    crewai = prompts.system_prompt(text_mode=False, template="[SYS]{{ .System }}[/SYS]", **common)
    assert crewai == f"[SYS]{native}[/SYS]"
    typed = prompts.system_prompt(text_mode=False, tool_results=[("search", '{"type":"array"}')], **common)
    assert typed.endswith('Tools you can call: search.\nsearch returns: {"type":"array"}')  # what `tools` cannot say


def test_task_prompt_parts_and_token_estimate():
    text = prompts.task_prompt(
        description="Summarise",
        expected_output="3 bullets",
        context=[("research", "Cats sleep.")],
        feedback="too long",
        schema={"type": "object"},
    )
    assert text.index("Task: Summarise") < text.index("Expected output: 3 bullets") < text.index("JSON schema")
    assert "## research\nCats sleep." in text and text.endswith("too long")
    assert prompts.task_prompt(description="d", expected_output="e", template="{{ .Prompt }}!") == (
        "Task: d\n\nExpected output: e!"
    )
    assert prompts.estimate_tokens("x" * 400) == 100
    assert prompts.estimate_tokens([{"role": "user", "content": "x" * 40}]) == 14


def test_feedback_quotes_the_rejected_answer_and_an_empty_expected_output_is_left_out():
    text = prompts.task_prompt(description="d", expected_output="", feedback="shorter", previous_answer="a {long} one")
    assert text == (
        "Task: d\n\nYour previous answer was:\na {long} one\n\nIt was rejected with this feedback; address it:\nshorter"
    )
    # without the answer (a direct call with feedback only) the feedback stands alone
    assert prompts.task_prompt(description="d", expected_output="e", feedback="f").endswith(
        "Expected output: e\n\nYour previous answer was rejected with this feedback; address it:\nf"
    )
    templated = prompts.task_prompt(
        description="d", expected_output="e", feedback="f", previous_answer="p", template="{previous_answer}|{feedback}"
    )
    assert templated == "p|f"
