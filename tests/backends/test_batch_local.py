"""The batch runner on the local backend: one result per input, as they finish or in order;
failures go on or stop the batch; a batch budget stops new kickoffs; Ray only when asked."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from contextlib import aclosing

import pytest
import shipping_kit as kit

from crew import Agent, Crew, Task
from crew.backends import BatchStatus, for_each
from crew.errors import ConfigError, CrewRunError
from crew.testing import FunctionModel


def timed_crew(durations: dict[str, float], fail: set[str] = frozenset()) -> Crew:  # type: ignore[assignment]
    async def reply(messages, tools):
        topic = messages[-1]["content"].split("about ")[1].split()[0]
        await asyncio.sleep(durations.get(topic, 0.0))
        if topic in fail:
            raise RuntimeError(f"model broke on {topic}")
        return f"on {topic}"

    agent = Agent(role="w", goal="g", backstory="b", llm=FunctionModel(reply))
    return Crew(agents=[agent], tasks=[Task(description="about {topic} now", expected_output="x", agent=agent)])


async def collect(crew, inputs, **options):
    status = BatchStatus()
    async with aclosing(for_each(crew, inputs, status=status, **options)) as results:
        return [r async for r in results], status


async def test_results_come_as_they_finish_each_input_exactly_once():
    crew = timed_crew({"slow": 0.2, "mid": 0.1})
    results, status = await collect(crew, [{"topic": t} for t in ("slow", "mid", "fast")], max_concurrency=3)
    assert [r.index for r in results] == [2, 1, 0]
    assert [r.raw for r in results] == ["on fast", "on mid", "on slow"]
    assert all(r.status == "done" and r.output is not None and r.run_id for r in results)
    assert (status.total, status.done, status.failed, status.running) == (3, 3, 0, 0)
    assert status.usage.total_tokens == sum(r.usage.total_tokens for r in results) > 0


async def test_ordered_keeps_input_order():
    crew = timed_crew({"slow": 0.15})
    results, _ = await collect(crew, [{"topic": t} for t in ("slow", "a", "b")], max_concurrency=3, ordered=True)
    assert [r.index for r in results] == [0, 1, 2]


async def test_continue_goes_past_a_failure_and_reports_it():
    crew = timed_crew({}, fail={"bad"})
    results, status = await collect(crew, [{"topic": t} for t in ("a", "bad", "c")], ordered=True)
    assert [r.status for r in results] == ["done", "failed", "done"]
    assert "model broke on bad" in results[1].error and results[1].output is not None  # the partial output
    assert isinstance(results[1].exception, CrewRunError) and results[1].exception.index == 1
    assert (status.done, status.failed) == (2, 1)


async def test_stop_cancels_what_runs_and_skips_what_has_not_started():
    crew = timed_crew({"slow": 5.0}, fail={"bad"})
    inputs = [{"topic": t} for t in ("slow", "bad", "later", "last")]
    results, status = await collect(crew, inputs, max_concurrency=2, on_error="stop", ordered=True)
    assert [r.status for r in results] == ["cancelled", "failed", "skipped", "skipped"]
    assert results[2].error.startswith("not started: input 1 failed: ")
    assert (status.cancelled, status.failed, status.skipped) == (1, 1, 2)


async def test_a_token_budget_stops_new_kickoffs_once_spent():
    crew = timed_crew({})
    one = (await crew.kickoff_async({"topic": "x"})).usage.total_tokens
    results, status = await collect(crew, [{"topic": "x"}] * 6, max_concurrency=2, max_tokens=3 * one, ordered=True)
    statuses = [r.status for r in results]
    assert statuses.count("done") in (3, 4) and statuses[-1] == "skipped"  # 2 run at once: one may overshoot
    assert status.stopped.startswith(f"the batch budget of {3 * one:,} tokens is spent")
    assert all(r.error.startswith("not started: the batch budget") for r in results if r.status == "skipped")


async def test_every_input_is_checked_before_anything_runs():
    crew = timed_crew({})
    with pytest.raises(ConfigError, match="missing input 'topic'") as info:
        await collect(crew, [{"topic": "a"}, {"subject": "b"}])
    assert info.value.index == 1


def test_kickoff_for_each_takes_max_concurrency_or_its_old_name():
    crew = kit.topic_crew([kit.shout])
    inputs = [{"topic": f"t{i}"} for i in range(3)]
    assert [o.raw for o in crew.kickoff_for_each(inputs, max_concurrency=2)] == [
        o.raw for o in crew.kickoff_for_each(inputs, concurrency=2)
    ]
    with pytest.raises(ValueError, match="not both"):
        crew.kickoff_for_each(inputs, concurrency=2, max_concurrency=3)
    with pytest.raises(ValueError, match="unknown backend 'spark'"):
        crew.kickoff_for_each(inputs, backend="spark")


def test_import_crew_and_a_local_batch_never_import_ray():
    code = (
        "import sys, crew\n"
        "assert 'ray' not in sys.modules\n"
        "import crew.backends, crew.backends.ray, crew.backends.ray_graph\n"
        "import shipping_kit as kit\n"
        "kit.topic_crew().kickoff_for_each([{'topic': 'a'}], backend='local')\n"
        "print('ray' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=__file__.rsplit("/", 1)[0]
    )
    assert out.stdout.strip() == "False", out.stderr


def test_asking_for_ray_without_ray_says_how_to_install_it():
    code = (
        "import sys; sys.modules['ray'] = None\n"  # as if it were not installed
        "import shipping_kit as kit\n"
        "try:\n"
        "    kit.topic_crew().kickoff_for_each([{'topic': 'a'}], backend='ray')\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=__file__.rsplit("/", 1)[0]
    )
    assert out.stdout.strip() == (
        "ConfigError the Ray backend needs Ray, which is not installed: pip install 'crew-agents[ray]'"
    ), out.stderr
