"""Tools of the research team: a tiny offline library and a statistics helper.

``search_papers`` stands in for a literature search API (Semantic Scholar, arXiv ...);
swap its body for a real client and the crew stays the same.
"""

from __future__ import annotations

import statistics

from crew import tool

_LIBRARY = [
    {
        "id": "P1",
        "year": 2019,
        "title": "Remote work and productivity: evidence from a call centre",
        "finding": "home workers handled 13% more calls; attrition halved",
        "tags": {"remote work", "productivity"},
    },
    {
        "id": "P2",
        "year": 2021,
        "title": "Hybrid schedules and employee retention",
        "finding": "two office days a week cut quitting by a third with no loss of output",
        "tags": {"remote work", "hybrid", "retention"},
    },
    {
        "id": "P3",
        "year": 2022,
        "title": "Collaboration networks under remote work",
        "finding": "cross-team ties fell about 25%; communication became more asynchronous",
        "tags": {"remote work", "collaboration"},
    },
    {
        "id": "P4",
        "year": 2023,
        "title": "Four-day week trials across 61 firms",
        "finding": "revenue flat, burnout down 71% of staff reporting improvement",
        "tags": {"four-day week", "wellbeing"},
    },
    {
        "id": "P5",
        "year": 2020,
        "title": "Commute time and wellbeing",
        "finding": "each extra 20 minutes of commute felt like a 19% pay cut",
        "tags": {"commuting", "wellbeing"},
    },
]


@tool(parse_docstring=True)
def search_papers(query: str, max_results: int = 3) -> list[dict[str, str]]:
    """Search a library of research papers; returns id, year, title and main finding.

    Args:
        query: Keywords, e.g. "remote work productivity".
        max_results: How many papers to return at most.
    """
    words = {w.lower() for w in query.split()}
    scored = sorted(_LIBRARY, key=lambda p: -sum(w in " ".join(p["tags"]) + p["title"].lower() for w in words))
    return [{k: str(v) for k, v in p.items() if k != "tags"} for p in scored[: max(max_results, 1)]]


@tool(parse_docstring=True)
def describe_numbers(values: list[float]) -> dict[str, float]:
    """Summary statistics of a list of numbers: count, mean, median, min, max.

    Args:
        values: The numbers to summarise.
    """
    if not values:
        return {"count": 0}
    return {
        "count": len(values),
        "mean": round(statistics.fmean(values), 3),
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
    }
