"""What the command draws: the progress view on a (simulated) terminal, and plot texts."""

from __future__ import annotations

import io
import sys

import yaml
from cli_kit import terminal_screen

from crew.cli.plot import Picture, dot, mermaid
from crew.events import Event
from crew.progress import Progress
from crew.tasks.output import TaskOutput


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _event(kind: str, **data: object) -> Event:
    return Event(type=kind, run_id="r1", data=data)


def test_live_view_lets_other_output_through_and_stays_below_it(monkeypatch) -> None:
    screen = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", screen)
    view = Progress(screen, run_id="r1", title="demo (sequential)", tasks=[("draft", "writer")], live=True,
                    color=False)
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
    with view:
        with view.paused():
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
    picture = Picture('odd: "crew" <&> (graph)', [('first: <a&b>', 'wri"ter'), ("second #2", "x")],
                      [('first: <a&b>', "second #2")], [['first: <a&b>'], ["second #2"]])
    text = mermaid(picture)
    front = text.split("---\n")[1]
    assert yaml.safe_load(front) == {"title": 'odd: "crew" <&> (graph)'}  # front matter stays valid YAML
    assert 't0["first: #lt;a#amp;b#gt;<br/><small>wri#quot;ter</small>"]' in text
    assert 't1["second #35;2<br/><small>x</small>"]' in text and "    t0 --> t1" in text
    assert 't0 [label="first: <a&b>\\nwri\\"ter"];' in dot(picture)
