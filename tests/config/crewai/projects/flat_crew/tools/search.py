from crewai.tools import tool


@tool("Market search")
def market_search(query: str) -> str:
    """Search market reports for a query."""
    return f"3 reports about {query}"
