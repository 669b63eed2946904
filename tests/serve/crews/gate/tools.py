from crew import tool


@tool
def remove(path: str) -> str:
    """Remove a file (here: only says so)."""
    return f"removed {path}"
