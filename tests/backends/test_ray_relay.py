"""What a Ray worker's stream listener sends to the driver (no Ray needed: the relay is plain Python)."""

from __future__ import annotations

from typing import Any

from crew.backends.ray_graph import _Relay
from crew.stream.events import AgentTurnStarted, TaskStarted, TextDelta


def test_a_replys_held_back_tail_reaches_the_driver_as_its_other_text_does() -> None:
    """The listener hands a reply's last piece (what the secret scrubber held back until the reply
    ended) to ``put``, not ``put_delta``: dropping it cut the streamed text short ("...after the paus")."""
    sent: list[Any] = []
    relay = _Relay(sent.append)
    piece = TextDelta(run_id="r", time=0.0, task="wait", agent="waiter", text="the answer after the paus", turn=1)
    tail = TextDelta(run_id="r", time=0.0, task="wait", agent="waiter", text="e", turn=1)
    relay.put_delta(piece)
    relay.put(tail)
    relay.put(AgentTurnStarted(run_id="r", time=0.0, task="wait", agent="waiter", turn=2))
    relay.put(TaskStarted(run_id="r", time=0.0, task="wait", agent="waiter"))  # the driver announces it itself
    assert [type(e).__name__ for e in sent] == ["TextDelta", "TextDelta", "AgentTurnStarted"]
    assert "".join(e.text for e in sent if isinstance(e, TextDelta)) == "the answer after the pause"
