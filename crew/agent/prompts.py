"""Every piece of text crew sends to a model, and the assembly of an agent's first messages.

Prompt wording is behaviour, so it lives here and nowhere else: the loop in
``crew.agent.loop`` only picks which of these texts to send. Order matters for cost:
the system message holds only what is stable for an agent (role, goal, backstory,
tools, protocol) and task text comes after it, so a provider's prompt cache reuses
the prefix across tasks and turns.

Overrides (``Agent.system_template`` / ``prompt_template``) are filled by name:
``{role}``, ``{goal}``, ``{backstory}``, ``{tools}``, ``{tool_names}`` and ``{system}``
(our full default system text) for the system message; ``{description}``,
``{expected_output}``, ``{context}``, ``{sections}`` (what context providers gave: memory,
knowledge), ``{feedback}``, ``{previous_answer}`` and ``{prompt}`` (our full default task text)
for the user message. CrewAI's ``{{ .System }}`` and
``{{ .Prompt }}`` markers mean ``{system}`` and ``{prompt}``. Any other brace is left
alone, so templates may contain JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

# --- the texts -------------------------------------------------------------------------

SYSTEM = "You are {role}. {backstory}\nYour goal: {goal}"

TOOLS_NATIVE = "\n\nTools you can call: {tool_names}."
"""Native function calling sends every tool's description and JSON schema in the ``tools``
parameter, where the model reads them; repeating them here cost ~10 % more bytes per request."""

TOOL_RESULT = "\n{name} returns: {schema}"
"""A result schema is the one part of a tool's manual the ``tools`` parameter cannot carry."""

TOOLS_TEXT = """

Tools you can use:
{tools}

To use a tool, reply exactly:
Thought: <your reasoning>
Action: <tool name, one of: {tool_names}>
Action Input: <the arguments as a JSON object>

You then get an Observation with the result; repeat as needed. When you have the answer, reply:
Thought: I now know the final answer
Final Answer: <your complete answer>"""

TASK = "Task: {description}\n\nExpected output: {expected_output}"

TASK_OPEN = "Task: {description}"
"""For a task with no ``expected_output``: no empty "Expected output:" line for the model to puzzle over."""

SCHEMA = "\n\nYour final answer must be only a JSON object matching this JSON schema:\n{schema}"

CONTEXT = "\n\nContext from earlier tasks:\n{context}"

MEMORY_TITLE = "What you remember (from earlier runs; use what helps, ignore the rest)"
"""The title of the section memory adds to a task prompt (``crew.memory.provider``)."""

MEMORY_FACTS = (
    "Extract the facts worth remembering for future tasks from this output of the task "
    "'{task}': one short, self-contained fact per line, no numbering, no commentary. "
    "Reply with nothing if there is nothing worth keeping.\n\nOutput:\n{output}"
)
"""With ``memory: {analyze: true}``, what the agent's model is asked after a task (one call)."""

FEEDBACK = "\n\nYour previous answer was rejected with this feedback; address it:\n{feedback}"

FEEDBACK_ON_ANSWER = (
    "\n\nYour previous answer was:\n{previous_answer}\n\nIt was rejected with this feedback; address it:\n{feedback}"
)

OBSERVATION = "Observation: {content}"

TOO_MANY_CALLS = (
    "Not run: one reply may ask for at most {cap} tool calls (the agent's max_tool_calls_per_reply), "
    "and this one asked for {count}. Ask for the ones you still need in your next reply."
)

INVALID_TOOL_CALL = "Not run: the arguments of '{tool}' were unreadable ({error}). Send them as a JSON object."

CORRECTION = (
    "Your reply did not follow the format ({reason}). To use a tool, reply with 'Action:' and "
    "'Action Input:' (a JSON object); to finish, reply with 'Final Answer:' and your answer."
)

EMPTY_REPLY = "Your reply was empty. Continue: call a tool if you need one, or give your complete final answer."

EMPTY_REPLY_TEXT = EMPTY_REPLY + " Use 'Action:' with 'Action Input:', or 'Final Answer:'."

FORCE_FINAL = "You have reached your step limit. Give your best final answer now, without using tools."

FORCE_FINAL_TEXT = FORCE_FINAL + " Reply with 'Final Answer:' followed by the answer."

STRUCTURED_RETRY = (
    "Your final answer does not match the required JSON schema:\n{errors}\nReply with only the corrected JSON object."
)

TOOL_CALL_EXTRACTION = (
    "An agent wrote the message below to call one of the given tools. Call that tool with the "
    "arguments the message gives. Do not invent values.\n\nMessage:\n{text}"
)

DELEGATE_WORK = (
    "Delegate a task to one of these coworkers: {coworkers}. They know nothing about your "
    "work: put the whole task and ALL the context they need in the arguments, explained, "
    "not referenced."
)

ASK_QUESTION = (
    "Ask one of these coworkers a question: {coworkers}. They know nothing about your work: "
    "put ALL the context they need in the arguments, explained, not referenced."
)

MANAGER_ROLE = "Crew Manager"

MANAGER_GOAL = (
    "Get every task done well by delegating each piece of work to the coworker best suited "
    "for it, and hand back a complete final answer"
)

MANAGER_BACKSTORY = (
    "You lead a team of specialists. You do not do the work yourself: you break it up, ask the "
    "right coworker, check what comes back and assemble the answer."
)

DELEGATED_EXPECTED_OUTPUT = "A complete answer to the task, usable as is."

QUESTION_EXPECTED_OUTPUT = "A clear, complete answer to the question."

DELEGATED_TASK = "{task}\n\nContext:\n{context}"

# --- assembly --------------------------------------------------------------------------

_FIELD = re.compile(r"\{\{\s*\.(\w+)\s*\}\}|\{(\w+)\}")


def render(template: str, fields: Mapping[str, str]) -> str:
    """Fill ``{name}`` (and CrewAI's ``{{ .Name }}``) fields; leave every other brace as is.

    Not ``str.format``: user templates and task text routinely contain JSON. A template
    is parsed once (``_parse``), so a render is a join, not a regex pass with a Python
    callback per field (about 8x cheaper; renders happen on every turn).
    """
    literals, slots = _parse(template)
    if not slots:
        return template
    parts = [literals[0]]
    for (key, marker), literal in zip(slots, literals[1:], strict=True):
        value = fields.get(key)
        parts.append(marker if value is None else value)
        parts.append(literal)
    return "".join(parts)


@lru_cache(maxsize=512)
def _parse(template: str) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The text between fields, and each field's (lower-cased name, marker as written)."""
    literals: list[str] = []
    slots: list[tuple[str, str]] = []
    position = 0
    for match in _FIELD.finditer(template):
        literals.append(template[position : match.start()])
        slots.append(((match.group(1) or match.group(2)).lower(), match.group(0)))
        position = match.end()
    literals.append(template[position:])
    return tuple(literals), tuple(slots)


def context_text(context: Iterable[tuple[str, str]]) -> str:
    """The outputs a task reads, one ``## <task name>`` section each.

    A plain f-string, not a template: a sequential crew of n tasks renders n²/2 of these
    sections over a run (task N reads all N-1 outputs before it).
    """
    return "\n\n".join(f"## {name}\n{raw}" for name, raw in context)


def system_prompt(
    *,
    role: str,
    goal: str,
    backstory: str,
    tool_descriptions: Sequence[str],
    tool_names: Sequence[str],
    text_mode: bool,
    template: str | None = None,
    tool_results: Sequence[tuple[str, str]] = (),
) -> str:
    """The agent's system message: who it is, its tools and, in text mode, the protocol.

    In text mode the tools' full descriptions are the model's only manual, so they are
    here. With native function calling they travel in the request's ``tools``; the
    system message names the tools (``{tools}`` is that list) plus any result schemas
    (``tool_results``: name and schema text), which ``tools`` cannot carry.
    """
    fields = {"role": role, "goal": goal, "backstory": backstory}
    tools_block = ""
    if tool_descriptions or (tool_names and not text_mode):
        names = ", ".join(tool_names)
        if text_mode:
            tools_text = "\n\n".join(tool_descriptions)
            tools_block = render(TOOLS_TEXT, {"tools": tools_text, "tool_names": names})
        else:
            tools_block = render(TOOLS_NATIVE, {"tool_names": names})
            tools_block += "".join(render(TOOL_RESULT, {"name": n, "schema": schema}) for n, schema in tool_results)
            tools_text = tools_block.strip()
        fields |= {"tools": tools_text, "tool_names": names}
    default = _tidy(render(SYSTEM, fields)) + tools_block
    if template is None:
        return default
    fields.setdefault("tools", "")
    fields.setdefault("tool_names", "")
    out = render(template, fields | {"system": default})
    if tools_block and not _mentions(template, ("system", "tools")):
        # the tools must reach the model in both modes, whatever the template says
        out += tools_block
    return out


def task_prompt(
    *,
    description: str,
    expected_output: str,
    context: Iterable[tuple[str, str]] = (),
    feedback: str | None = None,
    previous_answer: str | None = None,
    schema: dict[str, Any] | None = None,
    template: str | None = None,
    sections: str = "",
) -> str:
    """The user message: the task, what to return, the dependencies' outputs, what context
    providers gave (``sections``, rendered: ``crew.agent.context``), any feedback.

    With feedback, the rejected answer is quoted too: the agent starts a fresh conversation
    and could not otherwise tell what the feedback is about (nor fix only what it names).
    """
    fields = {"description": description, "expected_output": expected_output}
    fields["context"] = context_block = context_text(context)
    fields["feedback"] = feedback or ""
    fields["previous_answer"] = previous_answer or ""
    fields["sections"] = sections
    default = render(TASK if expected_output else TASK_OPEN, fields)
    if schema is not None:
        default += render(SCHEMA, {"schema": json.dumps(schema, separators=(",", ":"))})
    if context_block:
        default += render(CONTEXT, {"context": context_block})
    if sections:
        default += "\n\n" + sections
    if feedback:
        default += render(FEEDBACK_ON_ANSWER if previous_answer else FEEDBACK, fields)
    if template is None:
        return default
    out = render(template, fields | {"prompt": default})
    if sections and not _mentions(template, ("prompt", "sections")):
        out += "\n\n" + sections  # what memory recalled reaches the model whatever the template says
    return out


def agent_system_prompt(agent: Any, tools: Sequence[Any], text_mode: bool) -> str:
    """:func:`system_prompt` for ``agent`` with ``tools`` (described in text mode, else named, with result schemas)."""
    return _kept_system_prompt(
        agent.role,
        agent.goal,
        agent.backstory,
        tuple([t.describe() for t in tools]) if text_mode else (),
        tuple([t.tool_name for t in tools]),
        text_mode,
        agent.system_template,
        () if text_mode else tuple([(t.tool_name, r) for t in tools if (r := t.describe_result())]),
    )


@lru_cache(maxsize=512)
def _kept_system_prompt(
    role: str,
    goal: str,
    backstory: str,
    tool_descriptions: tuple[str, ...],
    tool_names: tuple[str, ...],
    text_mode: bool,
    template: str | None,
    tool_results: tuple[tuple[str, str], ...],
) -> str:
    """:func:`system_prompt` of the same texts, rendered once: a batch's thousands of kickoffs of
    one crew have the same agents, so each would render the same message again."""
    return system_prompt(
        role=role,
        goal=goal,
        backstory=backstory,
        tool_descriptions=tool_descriptions,
        tool_names=tool_names,
        text_mode=text_mode,
        template=template,
        tool_results=tool_results,
    )


def agent_task_prompt(
    task: Any,
    agent: Any,
    context: Sequence[Any],
    feedback: str | None,
    previous_answer: str | None,
    schema: dict[str, Any] | None,
    sections: str,
) -> str:
    """:func:`task_prompt` for ``task`` worked on by ``agent``: the outputs of its done ``context`` tasks included."""
    return task_prompt(
        description=task.description,
        expected_output=task.expected_output,
        context=((out.name, out.raw) for out in context if out.status == "done"),
        feedback=feedback,
        previous_answer=previous_answer,
        schema=schema,
        template=agent.prompt_template,
        sections=sections,
    )


def _tidy(text: str) -> str:
    """No trailing spaces left by an empty field (an agent without backstory)."""
    return _TRAILING.sub("\n", text).strip()


_TRAILING = re.compile(r"[ \t]+\n")


def _mentions(template: str, names: Iterable[str]) -> bool:
    found = {key for key, _ in _parse(template)[1]}
    return any(name in found for name in names)


def estimate_tokens(value: str | Sequence[Mapping[str, Any]] | None) -> int:
    """About four characters per token: close enough to keep prompts honest, and free.

    Accepts a text or a list of chat messages (each message adds a few tokens of framing,
    tool calls count by their JSON).
    """
    if value is None:
        return 0
    if isinstance(value, str):
        return (len(value) + 3) // 4
    total = 0
    for message in value:
        total += 4 + estimate_tokens(message.get("content") or "")
        if message.get("tool_calls"):
            total += estimate_tokens(json.dumps(message["tool_calls"], default=str))
    return total
