"""Every example validates and runs offline with `--llm test --live-tools`, through the real command."""

from __future__ import annotations

import json

import pytest
from cli_kit import EXAMPLES, run_crew

ALL = sorted(p.name for p in EXAMPLES.iterdir() if (p / "crew.yaml").is_file())


def test_there_are_the_three_examples() -> None:
    assert {"trip_planner", "research_team", "support_triage"} <= set(ALL)


@pytest.mark.parametrize("name", ALL)
def test_example_validates_and_runs_with_the_test_model(name: str, tmp_path) -> None:
    path = str(EXAMPLES / name)
    assert run_crew("validate", path).returncode == 0
    done = run_crew("kickoff", path, "--llm", "test", "--live-tools", "--json", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["status"] == "done"
    assert all(t["status"] == "done" and t["model"] == "test" for t in document["tasks_output"])
    assert document["usage"]["requests"] >= len(document["tasks_output"])
    CHECKS[name](document, tmp_path)


def _trip_planner(document: dict, out) -> None:
    tasks = {t["name"]: t for t in document["tasks_output"]}
    scouts = [tasks[n] for n in ("food", "sights", "logistics")]
    # the three scouts overlap in time: parallel branches, joined by the plan
    assert max(t["started_at"] for t in scouts) < min(t["finished_at"] for t in scouts)
    assert tasks["plan"]["started_at"] >= max(t["finished_at"] for t in scouts)
    assert {c["name"] for t in scouts for c in t["tool_calls"]} == {"search_attractions", "weather_outlook"}
    assert (out / "out" / "Osaka_trip_plan.md").read_text(encoding="utf-8") == tasks["plan"]["raw"]


def _research_team(document: dict, out) -> None:
    assert [t["name"] for t in document["tasks_output"]] == ["evidence", "analysis", "briefing"]
    assert all(t["agent"] == "Crew Manager" for t in document["tasks_output"])
    # the manager decides who works: its delegation tools run the coworkers through the same
    # machinery, so their own tool calls land in the run's shared executor and their tokens on their accounts
    stats = document["tool_stats"]
    assert stats["Delegate_work_to_coworker"]["calls"] >= 3 and stats["Ask_question_to_coworker"]["calls"] >= 3
    assert stats["search_papers"]["calls"] + stats["describe_numbers"]["calls"] > 0
    assert set(document["usage_by_agent"]) - {"Crew Manager"} <= {
        "Research librarian",
        "Data analyst",
        "Briefing writer",
    }
    assert len(document["usage_by_agent"]) >= 2
    assert (out / "out" / "briefing.md").is_file()


def _world_clock(document: dict, out) -> None:
    # the real mcp-server-time answered both tasks' calls (the time zone is the crew's input)
    calls = [c for t in document["tasks_output"] for c in t["tool_calls"]]
    assert {c["name"] for c in calls} == {"get_current_time", "convert_time"}
    assert all(c["status"] == "success" for c in calls)
    assert document["tool_stats"]["get_current_time"]["runs"] >= 1


def _support_triage(document: dict, out) -> None:
    tasks = {t["name"]: t for t in document["tasks_output"]}
    assert set(tasks["triage"]["json_dict"] or tasks["triage"]["pydantic"]) >= {"category", "urgency", "summary"}
    assert [c["name"] for c in tasks["resolve"]["tool_calls"]] == ["lookup_order", "issue_refund"]
    handoff = tasks["handoff"]
    # result_as_answer: the hand-off tool's text is the answer, with no model call after it
    assert handoff["raw"].startswith("[handoff · ") and document["raw"] == handoff["raw"]
    assert handoff["usage"]["requests"] == 1


CHECKS = {
    "trip_planner": _trip_planner,
    "research_team": _research_team,
    "support_triage": _support_triage,
    "world_clock": _world_clock,
}
