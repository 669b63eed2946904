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


def test_importing_crew_tools_loads_no_heavy_module():
    heavy = ("structlog", "litellm", "networkx", "yaml", "rich")
    code = (
        "import sys, crew.tools; "
        f"print(','.join(m for m in {heavy!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == ""
