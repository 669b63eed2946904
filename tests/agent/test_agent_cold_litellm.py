"""The first task of a fresh process must not freeze the event loop while litellm imports.

Reading ``LLM.supports_function_calling`` (flag unset) imports litellm, 3-5 s. The agent
settles it in a worker thread, so the loop keeps serving everything else meanwhile. Only
a fresh interpreter has litellm still unimported, hence one subprocess (about 4 s).
"""

import json
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys

    from crew.models import litellm_loading as crew_llm
    from crew.agent.agent import Agent
    from crew.models import LLM
    from crew.models.ratelimit import RateLimiter
    from crew.models import Throttled
    from crew.tasks.task import Task
    from crew.testing import OpenAIServer


    def add(a: int, b: int) -> int:
        "Add two integers."
        return a + b


    async def main():
        assert "litellm" not in sys.modules, "litellm was imported before the first task"
        ticks = {"during_import": 0, "all": 0}
        stop = asyncio.Event()

        async def ticker():
            # litellm is in sys.modules from the start of its import, litellm_loading._litellm only at the end
            while not stop.is_set():
                ticks["all"] += 1
                ticks["during_import"] += "litellm" in sys.modules and crew_llm._litellm is None
                await asyncio.sleep(0.005)

        with OpenAIServer(handler=lambda request: "ok") as server:
            def model():
                return LLM(
                    "openai/gpt-4o-mini", api_base=server.url, api_key="sk-test", num_retries=0, transport="litellm"
                )

            models = [model(), model(), model(), Throttled(model(), RateLimiter(1000))]  # as a crew's max_rpm wraps it
            agents = [Agent(role=f"Agent {i}", goal="Add", llm=m, tools=[add]) for i, m in enumerate(models)]
            task = Task(name="sum", description="Add 3 and 4", expected_output="a number")
            beat = asyncio.create_task(ticker())
            outputs = await asyncio.gather(*(agent.aexecute_task(task) for agent in agents))
            stop.set()
            await beat
            sent_tools = [bool(request.tools) for request in server.requests]
        print(json.dumps({"ticks": ticks, "raw": [o.raw for o in outputs], "sent_tools": sent_tools}))


    asyncio.run(main())
    """
)


def test_first_tasks_resolve_function_calling_off_the_event_loop():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])

    # the loop kept running while litellm was being imported (on the loop itself it would see none of it)
    assert report["ticks"]["during_import"] > 0, report
    assert report["raw"] == ["ok"] * 4
    assert report["sent_tools"] == [True] * 4  # the flag was settled: litellm knows gpt-4o-mini calls tools
