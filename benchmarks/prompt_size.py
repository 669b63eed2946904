"""Bytes and tokens crew sends per request, beside what CrewAI sends for the same crews.

Run: python benchmarks/prompt_size.py

Three crews like CrewAI's examples: one agent with one tool on one task; a three-task
sequential crew whose tasks read the earlier outputs (context); a hierarchical crew (a
manager with two coworkers, two tasks). crew's figures are measured: each crew runs
through the native transport against the local OpenAI-compatible server, and the first
request of every task is weighed as it arrived (model, messages, tools). CrewAI is not
installed here, so its figures come from rebuilding the same first requests from its
prompt templates (``translations/en.json``: ``role_playing``, ``tools``, ``no_tools``,
``task``, ``expected_output``, ``task_with_context``; tool text ``Tool Name / Tool
Arguments / Tool Description``; its ReAct text protocol with ``stop``), which is what
CrewAI's agent executor sends a model. Task outputs (the context) are the same text on
both sides. Tokens: tiktoken's cl100k_base (the encoding file litellm bundles, read
offline) over every message's text and the tools' JSON; the 4-characters estimate when
tiktoken is missing.

What the model is told stays whole: every tool's name, purpose and argument schema (in
``tools`` with native function calling, in the prompt in text mode), role, goal,
backstory, task, expected output, context. Goal: crew ≤ 0.8x CrewAI's bytes.

For reference, the issue measured crew at ~1.10x CrewAI's bytes on the one-tool task
before tool schemas stopped being repeated in the system prompt.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from crew import Agent, Crew, Process, Task, tool
from crew.models import LLM
from crew.testing import OpenAIServer, Reply

OUTPUT = (
    "Findings: remote work raises measured productivity by 3-5 % in four of six field studies; "
    "attrition falls by a third; collaboration across teams drops unless there are office days."
)

# -- the crews (crew side) -------------------------------------------------------------


@tool
def search_internet(query: str, max_results: int = 5) -> list[str]:
    """Search the internet for a query and return the most relevant results.

    Args:
        query: what to search for
        max_results: how many results to return
    """
    return [f"result {i} for {query}" for i in range(max_results)]


def researcher(llm: Any, tools: Sequence[Any] = ()) -> Agent:
    return Agent(
        role="Senior Research Analyst",
        goal="Uncover cutting-edge developments in remote work",
        backstory="You work at a leading think tank. Your expertise lies in identifying emerging trends.",
        llm=llm,
        tools=list(tools),
    )


def analyst(llm: Any) -> Agent:
    return Agent(
        role="Data Analyst",
        goal="Weigh the evidence on remote work and quantify what it says",
        backstory="You distrust single studies and like effect sizes.",
        llm=llm,
    )


def writer(llm: Any) -> Agent:
    return Agent(
        role="Tech Content Strategist",
        goal="Craft compelling content on remote work",
        backstory="You are a renowned Content Strategist, known for insightful and engaging articles.",
        llm=llm,
    )


RESEARCH = (
    "Conduct a comprehensive analysis of the latest research on remote work. "
    "Identify key trends, breakthrough findings and their impact."
)
RESEARCH_OUT = "Full analysis report in bullet points"
ANALYSIS = "Quantify the effects the research found: productivity, attrition, collaboration."
ANALYSIS_OUT = "A table of effects with their sizes and sources"
WRITING = "Using the insights provided, develop an engaging blog post about remote work for a leadership team."
WRITING_OUT = "Full blog post of at least 4 paragraphs"


def one_tool(llm: Any) -> Crew:
    agent = researcher(llm, [search_internet])
    return Crew(agents=[agent], tasks=[Task(description=RESEARCH, expected_output=RESEARCH_OUT, agent=agent)])


def sequential(llm: Any) -> Crew:
    r, a, w = researcher(llm, [search_internet]), analyst(llm), writer(llm)
    t1 = Task(name="research", description=RESEARCH, expected_output=RESEARCH_OUT, agent=r)
    t2 = Task(name="analysis", description=ANALYSIS, expected_output=ANALYSIS_OUT, agent=a, context=[t1])
    t3 = Task(name="writing", description=WRITING, expected_output=WRITING_OUT, agent=w, context=[t1, t2])
    return Crew(agents=[r, a, w], tasks=[t1, t2, t3], process=Process.sequential)


def hierarchical(llm: Any) -> Crew:
    r, w = researcher(llm), writer(llm)
    t1 = Task(name="research", description=RESEARCH, expected_output=RESEARCH_OUT)
    t2 = Task(name="writing", description=WRITING, expected_output=WRITING_OUT, context=[t1])
    return Crew(agents=[r, w], tasks=[t1, t2], process=Process.hierarchical, manager_llm=llm)


# -- CrewAI's first request of a task, from its templates ---------------------------------

ROLE_PLAYING = "You are {role}. {backstory}\nYour personal goal is: {goal}"
TOOLS = (
    "\nYou ONLY have access to the following tools, and should NEVER make up tools that are not listed here:"
    "\n\n{tools}\n\nIMPORTANT: Use the following format in your response:\n\n```\nThought: you should always think "
    "about what to do\nAction: the action to take, only one name of [{tool_names}], just the name, exactly as it's "
    'written.\nAction Input: the input to the action, just a simple JSON object, enclosed in curly braces, using " to '
    "wrap keys and values.\nObservation: the result of the action\n```\n\nOnce all necessary information is gathered, "
    "return the following format:\n\n```\nThought: I now know the final answer\nFinal Answer: the final answer to the "
    "original input question\n```"
)
NO_TOOLS = (
    "\nTo give my best complete final answer to the task respond using the exact following format:\n\nThought: I now "
    "can give a great answer\nFinal Answer: Your final answer must be the great and the most complete as possible, it "
    "must be outcome described.\n\nI MUST use these formats, my job depends on it!"
)
TASK = (
    "\nCurrent Task: {input}\n\nBegin! This is VERY important to you, use the tools available and give your best "
    "Final Answer, your job depends on it!\n\nThought:"
)
EXPECTED = (
    "\nThis is the expected criteria for your final answer: {expected_output}\nyou MUST return the actual complete "
    "content as the final answer, not a summary."
)
WITH_CONTEXT = "{task}\n\nThis is the context you're working with:\n{context}"
MANAGER = {
    "role": "Crew Manager",
    "goal": "Manage the team to complete the task in the best way possible.",
    "backstory": (
        "You are a seasoned manager with a knack for getting the best out of your team.\nYou are also known for your "
        "ability to delegate work to the right people, and to ask the right questions to get the best out of your "
        "team.\nEven though you don't perform tasks by yourself, you have a lot of experience in the field, which "
        "allows you to properly evaluate the work of your team members."
    ),
}
DELEGATE = (
    "Delegate a specific task to one of the following coworkers: {coworkers}\nThe input to this tool should be the "
    "coworker, the task you want them to do, and ALL necessary context to execute the task, they know nothing about "
    "the task, so share absolute everything you know, don't reference things but instead explain them."
)
ASK = (
    "Ask a specific question to one of the following coworkers: {coworkers}\nThe input to this tool should be the "
    "coworker, the question you have for them, and ALL necessary context to ask the question properly, they know "
    "nothing about the question, so share absolute everything you know, don't reference things but instead explain "
    "them."
)


def crewai_tool_text(name: str, args: dict[str, tuple[str, str]], description: str) -> str:
    """CrewAI's ``BaseTool`` description: its args are a Python dict of each field's description and type."""
    shown = {arg: {"description": text, "type": kind} for arg, (text, kind) in args.items()}
    return f"Tool Name: {name}\nTool Arguments: {shown}\nTool Description: {description}"


SEARCH_TOOL = crewai_tool_text(
    "search_internet",
    {"query": ("what to search for", "str"), "max_results": ("how many results to return", "int")},
    "Search the internet for a query and return the most relevant results.",
)


def crewai_request(
    agent: dict[str, str], tools: Sequence[tuple[str, str]], task: str, expected: str, context: Sequence[str]
) -> dict[str, Any]:
    system = ROLE_PLAYING.format(**agent)
    if tools:
        system += TOOLS.format(tools="\n".join(text for _, text in tools), tool_names=", ".join(n for n, _ in tools))
    else:
        system += NO_TOOLS
    prompt = task + EXPECTED.format(expected_output=expected)
    if context:
        prompt = WITH_CONTEXT.format(task=prompt, context="\n\n----------\n\n".join(context))
    messages = [{"role": "system", "content": system}, {"role": "user", "content": TASK.format(input=prompt)}]
    return {"model": "gpt-4o-mini", "messages": messages, "stop": ["\nObservation:"]}


RESEARCHER = {
    "role": "Senior Research Analyst",
    "goal": "Uncover cutting-edge developments in remote work",
    "backstory": "You work at a leading think tank. Your expertise lies in identifying emerging trends.",
}
ANALYST = {
    "role": "Data Analyst",
    "goal": "Weigh the evidence on remote work and quantify what it says",
    "backstory": "You distrust single studies and like effect sizes.",
}
WRITER = {
    "role": "Tech Content Strategist",
    "goal": "Craft compelling content on remote work",
    "backstory": "You are a renowned Content Strategist, known for insightful and engaging articles.",
}


def manager_tools() -> list[tuple[str, str]]:
    coworkers = "[Senior Research Analyst, Tech Content Strategist]"
    delegate = crewai_tool_text(
        "Delegate work to coworker",
        {
            "task": ("The task to delegate", "str"),
            "context": ("The context for the task", "str"),
            "coworker": ("The role/name of the coworker to delegate to", "str"),
        },
        DELEGATE.format(coworkers=coworkers),
    )
    ask = crewai_tool_text(
        "Ask question to coworker",
        {
            "question": ("The question to ask", "str"),
            "context": ("The context for the question", "str"),
            "coworker": ("The role/name of the coworker to ask", "str"),
        },
        ASK.format(coworkers=coworkers),
    )
    return [("Delegate work to coworker", delegate), ("Ask question to coworker", ask)]


CREWAI: dict[str, Callable[[], list[dict[str, Any]]]] = {
    "one tool, one task": lambda: [
        crewai_request(RESEARCHER, [("search_internet", SEARCH_TOOL)], RESEARCH, RESEARCH_OUT, [])
    ],
    "3 tasks, sequential, context": lambda: [
        crewai_request(RESEARCHER, [("search_internet", SEARCH_TOOL)], RESEARCH, RESEARCH_OUT, []),
        crewai_request(ANALYST, [], ANALYSIS, ANALYSIS_OUT, [OUTPUT]),
        crewai_request(WRITER, [], WRITING, WRITING_OUT, [OUTPUT, OUTPUT]),
    ],
    "hierarchical, 2 coworkers": lambda: [
        crewai_request(MANAGER, manager_tools(), RESEARCH, RESEARCH_OUT, []),
        crewai_request(MANAGER, manager_tools(), WRITING, WRITING_OUT, [OUTPUT]),
    ],
}

CREW: dict[str, Callable[[Any], Crew]] = {
    "one tool, one task": one_tool,
    "3 tasks, sequential, context": sequential,
    "hierarchical, 2 coworkers": hierarchical,
}

# -- weighing ------------------------------------------------------------------------------


def _tokenizer() -> Callable[[str], int]:
    try:
        spec = importlib.util.find_spec("litellm")  # its bundled encoding files: no download
        if spec is not None and spec.submodule_search_locations:
            bundled = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
            os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(bundled))
        import tiktoken

        encoding = tiktoken.get_encoding("cl100k_base")
        return lambda text: len(encoding.encode(text, disallowed_special=()))
    except Exception:  # noqa: BLE001 - no tiktoken or no encoding file: the estimate is the fallback
        from crew.agent.prompts import estimate_tokens

        return estimate_tokens


count_tokens = _tokenizer()


def weigh(body: dict[str, Any]) -> tuple[int, int]:
    """(bytes of the JSON body, tokens of the messages' text and the tools' JSON)."""
    wire = {k: body[k] for k in ("model", "messages", "tools", "stop") if k in body}
    size = len(json.dumps(wire, separators=(",", ":"), ensure_ascii=False).encode())
    tokens = sum(count_tokens(m.get("content") or "") for m in body["messages"])
    if body.get("tools"):
        tokens += count_tokens(json.dumps(body["tools"], separators=(",", ":")))
    return size, tokens


def crew_first_requests(build: Callable[[Any], Crew]) -> list[dict[str, Any]]:
    """Run the crew natively against the local server; the first request of every task, as it arrived."""
    with OpenAIServer(handler=lambda request: Reply.text(OUTPUT)) as server:
        llm = LLM("openai/gpt-4o-mini", api_base=server.url, api_key="sk-bench", transport="native")
        build(llm).kickoff()
        seen: list[dict[str, Any]] = []
        for request in server.requests:
            if len(request.messages) == 2:  # system + the task: a task's first turn
                seen.append(request.body)
        return seen


def main() -> None:
    print(f"{'crew':<30} {'requests':>8} {'crew bytes':>11} {'CrewAI bytes':>13} {'ratio':>6}   goal")
    print(f"{'':<30} {'':>8} {'(tokens)':>11} {'(tokens)':>13}")
    for label, build in CREW.items():
        ours = [weigh(body) for body in crew_first_requests(build)]
        theirs = [weigh(body) for body in CREWAI[label]()]
        ours_bytes, theirs_bytes = sum(b for b, _ in ours), sum(b for b, _ in theirs)
        ratio = ours_bytes / theirs_bytes
        verdict = "ok" if ratio <= 0.8 else "MISSED"
        print(
            f"{label:<30} {len(ours):>8} {ours_bytes:>11,} {theirs_bytes:>13,} {ratio:>6.2f}   <= 0.80 {verdict}\n"
            f"{'':<30} {'':>8} {sum(t for _, t in ours):>11,} {sum(t for _, t in theirs):>13,} "
            f"{sum(t for _, t in ours) / sum(t for _, t in theirs):>6.2f}"
        )
        if label == "one tool, one task":
            before = (
                ours_bytes
                + _json_len(OLD_NATIVE_TOOLS + search_internet.describe())
                - _json_len("\n\nTools you can call: search_internet.")
            )
            noted = before / 1.10  # the note: crew sent ~1.10x CrewAI's bytes on this task
            print(
                f"{'':<30} crew before this change (schemas repeated in the prompt): {before:,} bytes; CrewAI per the "
                f"issue's note (1/1.10 of that): {noted:,.0f} bytes -> ratio {ours_bytes / noted:.2f}"
            )


OLD_NATIVE_TOOLS = "\n\nTools you can call:\n"


def _json_len(text: str) -> int:
    return len(json.dumps(text, ensure_ascii=False).encode()) - 2


if __name__ == "__main__":
    main()
