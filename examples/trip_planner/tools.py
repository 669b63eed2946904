"""Tools of the trip planner: a small offline guide book, so the crew runs anywhere.

``search_attractions`` is the tool dissected in the LangChain notes
(``search_attractions(city, preference)``), with a ``limit``. A real deployment would
call a places API here; the crew around it would not change.
"""

from __future__ import annotations

from crew import tool

_GUIDE: dict[str, list[tuple[str, set[str], str]]] = {
    "osaka": [
        ("Dotonbori", {"food", "nightlife", "walking"}, "canal-side street food: takoyaki, okonomiyaki"),
        ("Kuromon Market", {"food", "markets"}, "fresh seafood and grilled scallops since 1822"),
        ("Shinsekai", {"food", "history", "walking"}, "retro district, kushikatsu under Tsutenkaku tower"),
        ("Osaka Castle Park", {"history", "nature", "walking"}, "the castle keep and its moats, best at dawn"),
        ("Nakanoshima", {"art", "walking", "nature"}, "river island with museums and a rose garden"),
        ("Umeda Sky Building", {"views", "architecture"}, "floating garden observatory, sunset views"),
        ("Tenjinbashi-suji", {"shopping", "food", "walking"}, "Japan's longest covered shopping street"),
        ("Sumiyoshi Taisha", {"history", "culture"}, "one of Japan's oldest shrines, arched red bridge"),
    ],
    "kyoto": [
        ("Nishiki Market", {"food", "markets"}, "'Kyoto's kitchen': pickles, tofu, matcha sweets"),
        ("Fushimi Inari", {"culture", "walking", "nature"}, "thousands of vermilion torii up the mountain"),
        ("Philosopher's Path", {"walking", "nature"}, "canal path lined with cherry trees"),
        ("Gion", {"culture", "history", "walking"}, "teahouses and wooden machiya at dusk"),
        ("Kinkaku-ji", {"history", "architecture"}, "the Golden Pavilion over its mirror pond"),
    ],
    "lisbon": [
        ("Time Out Market", {"food", "markets"}, "the city's chefs under one roof"),
        ("Alfama", {"walking", "history", "music"}, "steep lanes, fado houses, tram 28"),
        ("Belém", {"history", "food", "architecture"}, "Jerónimos Monastery and the original pastéis de nata"),
        ("LX Factory", {"art", "shopping"}, "industrial complex turned studios and bookshops"),
    ],
}


@tool(parse_docstring=True)
def search_attractions(city: str, preference: str, limit: int = 5) -> list[str]:
    """Search attractions in a city that match a traveller's preference.

    Args:
        city: The city to search, e.g. "Osaka".
        preference: What the traveller likes, e.g. "food", "history", "walking".
        limit: How many attractions to return at most.
    """
    places = _GUIDE.get(city.strip().lower())
    if places is None:
        return [f"{city}: no guide-book entry; ask locals about {preference}"]
    wanted = {word.strip(" ,.").lower() for word in preference.replace(" and ", " ").split()}
    ranked = sorted(places, key=lambda place: -len(place[1] & wanted))
    return [f"{name} ({', '.join(sorted(tags))}): {note}" for name, tags, note in ranked[: max(limit, 1)]]


@tool(parse_docstring=True)
def weather_outlook(city: str, days: int = 3) -> str:
    """Typical weather for the next days in a city, to plan indoor and outdoor time.

    Args:
        city: The city.
        days: How many days ahead.
    """
    pattern = ["sunny, 24°C", "light rain in the afternoon, 21°C", "cloudy, 22°C"]
    return "; ".join(f"day {i + 1}: {pattern[i % len(pattern)]}" for i in range(max(days, 1))) + f" ({city})"
