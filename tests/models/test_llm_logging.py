"""Logging as a library should: structlog records on the ``crew`` logger, silent until configured, no secrets.

One fresh process (the only way to see an application that configured nothing): every
kind of call runs once before logging is configured and once after.
"""

import json
import subprocess
import sys
import textwrap

KEY = "sk-secret-Logged-Never-1234567"

SCRIPT = textwrap.dedent(
    f"""
    import logging, sys
    from crew.errors import LLMError
    from crew.models import LLM, complete_sync
    from crew.testing import FunctionModel, OpenAIServer, Reply
    from crew.tools import ToolExecutor, tool

    @tool
    def add(a: int, b: int) -> int:
        "Add two integers."
        return a + b

    def everything(server):
        ToolExecutor([add]).execute({{"name": "add", "args": {{"a": 1, "b": 2, "invented": True}}}})
        complete_sync(FunctionModel(lambda messages, tools: "hi"), [{{"role": "user", "content": "x"}}])
        llm = LLM("openai/gpt-4o-mini", api_base=server.url, api_key="{KEY}", num_retries=1, retry_base_delay=0.01)
        server.enqueue(Reply.error(500, "echoing {KEY}"), Reply.text("ok"))
        complete_sync(llm, [{{"role": "user", "content": "hello"}}])
        server.enqueue(Reply.error(500, "down"), Reply.error(500, "down"))
        try:
            complete_sync(llm, [{{"role": "user", "content": "again"}}])
        except LLMError:
            pass

    with OpenAIServer() as server:
        everything(server)
        sys.stderr.write("--- logging configured ---\\n")
        logging.basicConfig(level=logging.DEBUG, format="%(name)s|%(levelname)s|%(message)s")
        for name in ("httpx", "httpcore", "openai", "asyncio", "LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
            logging.getLogger(name).setLevel(logging.WARNING)  # other libraries' chatter is not ours
        everything(server)
    print("finished")
    """
)


def test_silent_until_configured_then_one_record_per_call_and_never_a_key():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == "finished\n"  # nothing printed by crew or litellm on its own
    silent, configured = done.stderr.split("--- logging configured ---\n")
    assert silent == ""

    records = [line.split("|", 2) for line in configured.splitlines() if line.startswith("crew|")]
    events = [(level, json.loads(message)) for _, level, message in records]  # structlog renders JSON
    kinds = [event["event"] for _, event in events]
    for kind in ("tool.args_dropped", "tool.call", "llm.call", "llm.retry", "llm.error"):
        assert kind in kinds, kinds
    assert kinds.count("llm.call") == 2  # the double's call and the real one that succeeded
    tool_call = next(event for _, event in events if event["event"] == "tool.call")
    assert (tool_call["tool"], tool_call["args"], tool_call["status"]) == ("add", {"a": 1, "b": 2}, "success")
    assert next(event for _, event in events if event["event"] == "tool.args_dropped")["dropped"] == ["invented"]
    assert {level for level, event in events if event["event"] == "llm.error"} == {"WARNING"}
    assert KEY not in done.stderr and KEY not in done.stdout
