"""The public names and the import-time promise of crew.tools."""

import subprocess
import sys

import crew
import crew.tools


def test_public_names():
    from crew.tools import (
        BaseTool,
        EnvVar,
        RunContext,
        Tool,
        ToolCall,
        ToolException,
        ToolExecutor,
        ToolResult,
        tool,
    )

    assert crew.tool is tool and crew.BaseTool is BaseTool and crew.ToolResult is ToolResult
    assert crew.tools.sanitize_tool_name("a b") == "a_b"
    assert issubclass(Tool, BaseTool)
    assert {ToolCall, RunContext, ToolExecutor, ToolException}
    needs_key = tool("t", lambda: 1, env_vars=[EnvVar(name="API_KEY", required=False)], description="d")
    assert needs_key.env_vars == [EnvVar(name="API_KEY", required=False)]


# langchain_core, crewai and mcp: foreign tools are adapted by shape and MCP loads only when used
HEAVY = ("structlog", "litellm", "networkx", "yaml", "rich", "langchain_core", "crewai", "mcp", "opentelemetry", "ray")


def loaded_heavy_modules(code: str) -> str:
    code += f"\nimport sys; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    return out.stdout.strip()


def test_importing_crew_tools_loads_no_heavy_module():
    assert loaded_heavy_modules("import crew.tools") == ""


def test_import_crew_then_building_and_running_tools_loads_no_heavy_module():
    code = """
import crew
assert "pydantic" not in __import__("sys").modules  # `import crew` is only the lazy index
from crew import BaseTool, ToolResult, tool
from crew.tools import ToolExecutor

@tool
def add(a: int, b: int) -> int:
    "Add."
    return a + b

result = ToolExecutor([add]).execute({"name": "add", "args": {"a": 1, "b": 2}})
assert isinstance(result, ToolResult) and result.content == "3" and add.run(a=1, b=1) == 2
"""
    assert loaded_heavy_modules(code) == ""
