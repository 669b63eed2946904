"""The ``crewai`` a flow project's run sees: served for the block only, refusing by name what crew lacks."""

from __future__ import annotations

import sys
import textwrap
import types
from pathlib import Path
from typing import Any

import pytest

from crew.config.crewai.flow_compat import flow_namespace, refusal


def _no_crew(folder: Path, inputs: dict[str, Any] | None = None) -> Any:
    raise AssertionError("no crew is built here")


def test_the_namespace_serves_crew_flow_and_leaves_no_trace() -> None:
    import crew.flow

    before = {n: m for n, m in list(sys.modules.items()) if n.startswith("crewai")}
    with flow_namespace(_no_crew):
        from crewai import Process  # type: ignore[import-not-found]
        from crewai.flow import persist  # type: ignore[import-not-found]
        from crewai.flow.flow import Flow, and_, listen, or_, router, start  # type: ignore[import-not-found]

        assert Flow is crew.flow.Flow and start is crew.flow.start and listen is crew.flow.listen
        assert (router, or_, and_, persist) == (crew.flow.router, crew.flow.or_, crew.flow.and_, crew.flow.persist)
        assert Process.sequential == "sequential"
    assert {n: m for n, m in list(sys.modules.items()) if n.startswith("crewai")} == before


def test_a_real_crewai_is_shadowed_inside_the_window_only(monkeypatch: pytest.MonkeyPatch) -> None:
    real = types.ModuleType("crewai")
    real.__spec__ = None
    monkeypatch.setitem(sys.modules, "crewai", real)
    with flow_namespace(_no_crew):
        import crewai  # type: ignore[import-not-found]

        assert crewai is not real and hasattr(crewai, "Flow")
    assert sys.modules["crewai"] is real


@pytest.mark.parametrize(
    ("module", "name", "says"),
    [
        ("crewai.flow", "HumanFeedbackProvider", "`HumanFeedbackProvider` of `crewai.flow` is CrewAI API"),
        ("crewai.flow.visualization", None, "`crewai.flow.visualization` is CrewAI API that crew does not have"),
        ("crewai.project", "before_kickoff", "crew serves CrewBase, agent, task, crew there"),
    ],
)
def test_what_crew_does_not_have_is_named(module: str, name: str | None, says: str) -> None:
    assert says in (refusal(module, name) or "")


def test_what_crew_serves_is_not_refused() -> None:
    assert refusal("crewai.flow.flow", "Flow") is None and refusal("crewai.flow.flow", "FlowState") is None
    assert (
        refusal("crewai.flow", "human_feedback") is None
        and refusal("crewai.flow.human_feedback", "human_feedback") is None
    )
    assert refusal("crewai.tools", "BaseTool") is None
    assert refusal("pydantic", "BaseModel") is None


def test_a_crew_file_is_imported_as_its_class_without_running_it(tmp_path: Path) -> None:
    crew_dir = tmp_path / "src" / "shop" / "crews" / "pricing"
    (crew_dir / "config").mkdir(parents=True)
    (crew_dir / "pricing_crew.py").write_text(
        textwrap.dedent(
            """
            from not_installed_anywhere import ChatModel  # never runs: crew reads this file
            from crewai.project import CrewBase, crew

            @CrewBase
            class PricingCrew:
                llm = ChatModel("gpt-4")

                @crew
                def crew(self):
                    raise SystemExit("never called")
            """
        ),
        encoding="utf-8",
    )
    built: list[tuple[Path, dict[str, Any] | None]] = []

    class Ran:
        def kickoff(self, inputs: dict[str, Any]) -> str:
            return f"ran with {inputs}"

    def make(folder: Path, inputs: dict[str, Any] | None = None) -> Any:
        built.append((folder, inputs))
        return Ran()

    name = "shop.crews.pricing.pricing_crew"
    sys.path.insert(0, str(tmp_path / "src"))
    try:
        with flow_namespace(make, {name: (crew_dir / "pricing_crew.py", ["PricingCrew"])}):
            from shop.crews.pricing.pricing_crew import PricingCrew  # type: ignore[import-not-found]

            assert PricingCrew().crew().kickoff(inputs={"item": "tea"}) == "ran with {'item': 'tea'}"
    finally:
        sys.path.remove(str(tmp_path / "src"))
        for module in [m for m in list(sys.modules) if m == "shop" or m.startswith("shop.")]:
            del sys.modules[module]
    assert built == [(crew_dir.resolve(), {"item": "tea"})]
