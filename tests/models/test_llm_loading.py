"""litellm loads lazily (never at `import crew`), once, optionally in the background; model strings resolve."""

import subprocess
import sys
import textwrap

import pytest

from crew.errors import ConfigError
from crew.models import LLM, as_chat_model
from crew.testing import FunctionModel, TestModel


def run_python(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "LITELLM_LOG": "ERROR"},
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_import_crew_and_building_models_does_not_import_litellm():
    out = run_python("""
        import sys, os
        import crew
        from crew.models import LLM, as_chat_model
        from crew.testing import TestModel, FunctionModel
        llm = LLM("openai/gpt-4o-mini", temperature=0, max_rpm=10, function_calling=True)
        assert llm.supports_function_calling
        as_chat_model("test"); crew.LLM
        print("litellm" in sys.modules, "LITELLM_LOCAL_MODEL_COST_MAP" in os.environ)
    """)
    assert out == "False False"


def test_prewarm_imports_once_in_the_background_with_the_local_cost_map():
    out = run_python("""
        import os, sys, threading, time
        import crew.models.litellm_loading as llm
        started = time.perf_counter()
        llm.prewarm_litellm(); llm.prewarm_litellm()          # idempotent
        returned = time.perf_counter() - started
        names = [t.name for t in threading.enumerate() if t.name == "crew-litellm-import"]
        first = llm.load_litellm()                            # joins the background import
        assert llm.load_litellm() is first is sys.modules["litellm"]
        llm.prewarm_litellm()                                 # no-op once loaded
        print(returned < 0.05, names, os.environ["LITELLM_LOCAL_MODEL_COST_MAP"], first.suppress_debug_info)
    """)
    assert out == "True ['crew-litellm-import'] True True"


def test_as_chat_model_resolves_every_form():
    assert isinstance(as_chat_model("test"), TestModel)
    assert isinstance(as_chat_model(" TEST "), TestModel)
    llm = as_chat_model("anthropic/claude-3-5-haiku-latest")
    assert isinstance(llm, LLM) and llm.model == "anthropic/claude-3-5-haiku-latest"
    mine = LLM("openai/gpt-4o-mini")
    double = FunctionModel(lambda messages, tools: "hi")
    assert as_chat_model(mine) is mine and as_chat_model(double) is double
    assert isinstance(as_chat_model(None, default="test"), TestModel)
    assert as_chat_model(None, default=mine) is mine


def test_as_chat_model_errors_say_what_to_do():
    with pytest.raises(ConfigError, match="--llm test"):
        as_chat_model(None)
    with pytest.raises(ConfigError, match="empty"):
        as_chat_model("  ")
    with pytest.raises(ConfigError, match="not int"):
        as_chat_model(42)
    with pytest.raises(ConfigError, match="names the provider 'openai' but no model after it"):
        as_chat_model("openai/")
    with pytest.raises(ConfigError, match="no provider before '/'"):
        as_chat_model("/gpt-4o")


def test_a_misspelt_llm_setting_is_an_error_and_a_providers_own_passes_through():
    """``temprature=2`` was sent to the provider, ignored, and never reported."""
    with pytest.raises(ValueError, match="unknown LLM setting 'temprature': did you mean 'temperature'"):
        LLM("openai/gpt-4o-mini", temprature=2)
    with pytest.raises(ValueError, match="unknown LLM setting 'base_url': did you mean 'api_base'"):
        LLM("openai/gpt-4o-mini", base_url="http://127.0.0.1:1/v1")
    llm = LLM("openai/gpt-4o-mini", top_p=0.9, seed=1, max_completion_tokens=5)
    assert llm.model_extra == {"top_p": 0.9, "seed": 1, "max_completion_tokens": 5}


def test_an_llm_needs_a_model_after_its_provider():
    """``LLM("openai/")`` would fail only at its first call, with the provider's credentials error."""
    with pytest.raises(ValueError, match="names the provider 'ollama' but no model"):
        LLM("ollama/")
    assert LLM("openrouter/meta-llama/llama-3.1-8b").model == "openrouter/meta-llama/llama-3.1-8b"


def test_llm_settings_are_validated_with_clear_errors():
    with pytest.raises(ValueError, match="num_retries"):
        LLM("openai/gpt-4o-mini", num_retries=-1)
    with pytest.raises(ValueError, match="timeout"):
        LLM("openai/gpt-4o-mini", timeout=0)
    with pytest.raises(ValueError, match="max_rpm"):
        LLM("openai/gpt-4o-mini", max_rpm=0)
    assert LLM(model="openai/gpt-4o-mini", top_p=0.5).model_extra == {"top_p": 0.5}


def test_building_agents_and_crews_leaves_the_import_to_the_background():
    # isinstance(llm, ChatModel) used to run LLM.supports_function_calling, which imported
    # litellm (seconds) synchronously inside Agent(...), before the crew could prewarm it
    out = run_python("""
        import sys
        from crew import Agent, Crew, Task
        from crew.models.base import ChatModel
        from crew.models import LLM
        llm = LLM("openai/gpt-4o-mini", transport="litellm")  # function_calling unset: litellm would be asked
        assert isinstance(llm, ChatModel) and not isinstance(object(), ChatModel)
        agent = Agent(role="Writer", goal="Write", llm=llm, function_calling_llm=LLM("openai/gpt-4o"))
        task = Task(description="d", expected_output="x", agent=agent)
        before_crew = "litellm" in sys.modules
        Crew(agents=[agent], tasks=[task])                 # starts the background import
        import crew.models.litellm_loading
        print(before_crew, crew.models.litellm_loading._prewarm_thread is not None)
    """)
    assert out == "False True"


def test_litellm_loading_is_the_only_module_that_imports_litellm():
    import re
    from pathlib import Path

    import crew

    package = Path(crew.__file__).parent
    importing = re.compile(r"^\s*(import litellm|from litellm[\s.]|.*import_module\(\s*['\"]litellm)", re.M)
    offenders = [
        str(path.relative_to(package))
        for path in sorted(package.rglob("*.py"))
        if importing.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == ["models/litellm_loading.py"]
