"""What the command draws: the progress view on a (simulated) terminal, and plot texts."""

from __future__ import annotations

import io
import sys

import yaml
from cli_kit import terminal_screen

from crew.cli.plot import Picture, dot, mermaid, page
from crew.cli.progress import Progress
from crew.common.events import Event
from crew.tasks.output import TaskOutput


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _event(kind: str, **data: object) -> Event:
    return Event(type=kind, run_id="r1", data=data)


def test_live_view_lets_other_output_through_and_stays_below_it(monkeypatch) -> None:
    screen = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", screen)
    view = Progress(screen, run_id="r1", title="demo (sequential)", tasks=[("draft", "writer")], live=True, color=False)
    with view:
        view.handle(_event("task.start", task="draft", agent="writer"))
        print("[writer] draft #1 thinking", file=sys.stderr)  # a verbose agent, a tool's print ...
        view._draw()
        print("partial", end="", file=sys.stderr)
        view._draw()  # not in the middle of someone's line
        print(" line", file=sys.stderr)
        view.handle(_event("task.done", task="draft", output=TaskOutput(name="draft", raw="ok")))
    assert sys.stderr is screen  # routed only while the view is live
    lines = terminal_screen(screen.getvalue())
    assert lines[:2] == ["[writer] draft #1 thinking", "partial line"]
    assert [line for line in lines if line.startswith("crew demo")] == [lines[2]]  # one block, at the bottom
    assert "✓ draft" in lines[3] and "done" in lines[3]
    assert [o.raw for o in view.finished_outputs()] == ["ok"]


def test_paused_view_keeps_off_the_screen_while_someone_answers(monkeypatch) -> None:
    screen = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", screen)
    view = Progress(screen, run_id="r1", title="demo (sequential)", tasks=[("review", "editor")], live=True)
    with view, view.paused():
        sys.stderr.write("Feedback for the agent (empty line accepts): ")
        view._draw()  # the ticker keeps ticking: nothing may be drawn over the prompt
        assert terminal_screen(screen.getvalue())[-1] == "Feedback for the agent (empty line accepts): "
        screen.write("looks good\n")  # the terminal echoes what the person typed, past the view
    lines = terminal_screen(screen.getvalue())
    assert lines[0] == "Feedback for the agent (empty line accepts): looks good"
    assert "crew demo (sequential)" in lines[1]


def test_quiet_view_shows_nothing_but_knows_what_finished() -> None:
    view = Progress(None, run_id="r1", title="demo", tasks=[("a", "x"), ("b", "x"), ("c", "x")], live=True)
    with view:
        view.handle(_event("task.start", task="a"))
        view.handle(_event("task.done", task="a", output=TaskOutput(name="a", raw="A")))
        view.handle(_event("task.start", task="b"))
        view.handle(Event(type="task.done", run_id="other", data={"task": "b"}))  # another run's: ignored
    assert view.summary() == "finished: a; stopped while running: b; not started: c"


def test_plot_texts_quote_whatever_the_names_hold() -> None:
    picture = Picture(
        'odd: "crew" <&> (graph)',
        [("first: <a&b>", 'wri"ter'), ("second #2", "x")],
        [("first: <a&b>", "second #2")],
        [["first: <a&b>"], ["second #2"]],
    )
    text = mermaid(picture)
    front = text.split("---\n")[1]
    assert yaml.safe_load(front) == {"title": 'odd: "crew" <&> (graph)'}  # front matter stays valid YAML
    assert 't0["first: #lt;a#amp;b#gt;<br/><small>wri#quot;ter</small>"]' in text
    assert 't1["second #35;2<br/><small>x</small>"]' in text and "    t0 --> t1" in text
    assert 't0 [label="first: <a&b>\\nwri\\"ter"];' in dot(picture)


def _edge_points(path: str) -> list[tuple[float, float]]:
    """Points along an SVG path of M, L and C commands (the page's edges), 20 per segment."""
    import re

    numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", path)]
    commands = re.findall(r"[MLC]", path)
    points, at, i = [], (0.0, 0.0), 0
    for command in commands:
        if command == "M":
            at, i = (numbers[i], numbers[i + 1]), i + 2
            points.append(at)
        elif command == "L":
            end, i = (numbers[i], numbers[i + 1]), i + 2
            points += [(at[0] + (end[0] - at[0]) * t / 20, at[1] + (end[1] - at[1]) * t / 20) for t in range(21)]
            at = end
        else:
            (ax, ay), (bx, by), (cx, cy) = zip(numbers[i : i + 6 : 2], numbers[i + 1 : i + 6 : 2], strict=True)
            i += 6
            for step in range(21):
                t = step / 20
                u = 1 - t
                x = u**3 * at[0] + 3 * u * u * t * ax + 3 * u * t * t * bx + t**3 * cx
                y = u**3 * at[1] + 3 * u * u * t * ay + 3 * u * t * t * by + t**3 * cy
                points.append((x, y))
            at = (cx, cy)
    return points


def test_plot_page_edges_go_around_the_boxes_they_skip() -> None:
    import re

    middle = ["m1", "m2", "m3"]
    picture = Picture(
        "fan (graph)",
        [(n, "agent") for n in ["start", *middle, "end", "late"]],
        [*(("start", m) for m in middle), *((m, "end") for m in middle), ("start", "end"), ("start", "late")],
        [["start"], middle, ["end"], ["late"]],
    )
    text = page(picture)
    boxes = {
        name: tuple(float(v) for v in found)
        for found, name in zip(
            re.findall(r'<rect x="(\d+)" y="(\d+)" width="(\d+)" height="(\d+)"', text),
            re.findall(r'<g class="task"><title>([^<]+)</title>', text),
            strict=True,
        )
    }
    paths = re.findall(r'<path d="([^"]+)" class="edge"', text)
    assert len(paths) == len(picture.edges)
    for path in paths:
        for x, y in _edge_points(path)[1:-1]:  # its ends touch the boxes it joins
            inside = [n for n, (bx, by, bw, bh) in boxes.items() if bx + 1 < x < bx + bw - 1 and by < y < by + bh]
            assert not inside, (path, inside)


def test_plot_of_a_hierarchical_crew_names_the_manager_once_and_whom_it_delegates_to() -> None:
    from cli_kit import EXAMPLES

    from crew.cli.plot import picture_of
    from crew.config import load_project

    picture = picture_of(load_project(EXAMPLES / "research_team").crew)
    assert picture.manager == ["researcher", "analyst", "writer"]
    assert picture.delegated == ["evidence", "analysis", "briefing"]
    assert [agent for _, agent in picture.nodes] == ["assigned by the manager"] * 3
    text = mermaid(picture)
    assert 'manager(["manager<br/><small>delegates to researcher, analyst, writer</small>"])' in text
    assert "    manager -.-> t0" in text and "    manager -.-> t2" in text
    assert "<small>manager</small>" not in text
    assert "manager -> t1 [style=dashed];" in dot(picture)
    trip = picture_of(load_project(EXAMPLES / "trip_planner").crew)
    assert trip.manager is None and "manager" not in mermaid(trip)


def test_the_view_follows_a_real_run_task_states_tools_cache_hits_time_and_tokens(monkeypatch) -> None:
    """Both views of one run: the live block (mid-run and final) and the plain lines."""
    monkeypatch.setenv("COLUMNS", "160")  # rows are clipped to the terminal: pin its width
    import asyncio
    import re

    from crew import Agent, Crew, Task, tool
    from crew.testing import FunctionModel

    @tool
    def lookup(city: str) -> str:
        """Look a city up."""
        return f"{city}: sunny"

    snapshots: list[list[str]] = []
    live_screen, plain = FakeTerminal(), io.StringIO()
    live = Progress(
        live_screen,
        run_id="run-v",
        title="demo (graph)",
        live=True,
        color=False,
        tasks=[("scout", "Scout"), ("broken", "Scout"), ("after", "Scout"), ("final", "Scout")],
    )
    lines = Progress(
        plain,
        run_id="run-v",
        title="demo (graph)",
        live=False,
        tasks=[("scout", "Scout"), ("broken", "Scout"), ("after", "Scout"), ("final", "Scout")],
    )

    def reply(messages, tools):
        task = messages[1]["content"].split()[1]
        if task == "broken":
            raise RuntimeError("model down")
        turns = sum(1 for m in messages if m["role"] == "tool")
        if task == "scout" and turns < 2:  # the same call twice: the second is a cache hit
            if turns == 1:
                snapshots.append(live.render())
            return [{"name": "lookup", "args": {"city": "Oslo"}}]
        return f"{task} finished"

    agent = Agent(role="Scout", goal="g", llm=FunctionModel(reply), tools=[lookup])
    tasks = [
        Task(name="scout", description="scout", agent=agent),
        Task(name="broken", description="broken", agent=agent),
        Task(name="after", description="after", agent=agent, context=["broken"]),
        Task(name="final", description="final", agent=agent, context=["scout"]),
    ]
    crew = Crew(agents=[agent], tasks=tasks, process="graph", on_error="continue")
    with live, lines:
        out = asyncio.run(crew.kickoff_async(run_id="run-v"))
    assert [o.status for o in out.tasks_output] == ["done", "failed", "skipped", "done"]

    during = {line.split()[1]: line for line in snapshots[0][1:]}
    assert re.search(r"scout\s+Scout\s+running\s+\d+\.\d\ds\s+\d+ tok\s+tools 1, last lookup$", during["scout"])
    assert re.match(r" · final\s+Scout\s+waiting", during["final"])

    final = terminal_screen(live_screen.getvalue())
    block = final[final.index(next(line for line in final if line.startswith("crew demo (graph)"))) :]
    assert re.search(r"\d+\.\d\ds  [\d,]+ tokens  \(2 done, 1 failed, 1 skipped\)$", block[0])
    rows = {line.split()[1]: line for line in block[1:]}
    assert re.match(r" ✓ scout\s+Scout\s+done\s+\d+\.\d\ds\s+[1-9][\d,]* tok\s+tools 2, 1 cached$", rows["scout"])
    assert re.match(r" ✗ broken\s+Scout\s+failed .*RuntimeError: model down", rows["broken"])
    assert re.match(r" - after\s+Scout\s+skipped .*depends on task 'broken', which failed", rows["after"])
    assert rows["final"].startswith(" ✓ final")

    text = plain.getvalue()
    assert "\x1b" not in text and text.startswith("crew demo (graph): 4 tasks\n")
    events = [line.split(None, 2)[1:] for line in text.splitlines()[1:]]
    assert ["scout", "running  Scout"] in events and ["scout", "tool     lookup (cache hit)"] in events
    assert any(e[0] == "scout" and re.fullmatch(r"done     in \d+\.\d\ds, [1-9][\d,]* tokens", e[1]) for e in events)
    assert any(e[0] == "broken" and e[1].startswith("failed   RuntimeError: model down") for e in events)
    assert any(e[0] == "after" and e[1].startswith("skipped  not run: it depends on task 'broken'") for e in events)
