"""The timeline's "What tasks recalled" table: what memory and knowledge gave each task's prompt.

Beside the timeline (``crew.store.timeline``) because it reads another part of a run's record
(``task_context``), and the timeline's module is about drawing calls in time.
"""

from __future__ import annotations

from html import escape

from crew.store.records import RunDetail

_TEXT = 300
"""Characters of an item's text shown (the whole text is in the record: ``crew show --json``)."""


def recalls_html(detail: RunDetail) -> str:
    """A table of every recorded item (task, provider, id, score, source, text), or ``""`` if none."""
    rows = []
    for section in detail.context:
        again = " (replayed)" if section.replayed else ""
        for item in section.items:
            score = "" if item.get("score") is None else f"{float(item['score']):.4f}"
            text = str(item.get("text", ""))
            text = text if len(text) <= _TEXT else text[: _TEXT - 1] + "…"
            rows.append(
                f"<tr data-provider='{escape(section.provider)}'><td>{escape(section.task)}</td>"
                f"<td>{escape(section.provider + again)}</td><td>{escape(str(item.get('id') or '-'))}</td>"
                f"<td>{score}</td><td>{escape(str(item.get('source') or ''))}</td>"
                f"<td class='out'>{escape(text)}</td></tr>"
            )
    if not rows:
        return ""
    return (
        "<h2>What tasks recalled</h2><table class='recalls'><thead><tr><th>task</th><th>from</th><th>id</th>"
        f"<th>score</th><th>source</th><th>text</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )
