from langchain_core.tools import tool


@tool
def word_count(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())
