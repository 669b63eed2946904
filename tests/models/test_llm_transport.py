"""Which door a model takes, where the native one sends it, what it costs, and that it never loads litellm."""

import os
import subprocess
import sys
import textwrap

import pytest

from crew.errors import ConfigError
from crew.models import LLM, complete_sync, pricing
from crew.models.doors import choose
from crew.models.openai_endpoint import endpoint


@pytest.mark.parametrize(
    ("model", "api_base", "door"),
    [
        ("openai/gpt-4o-mini", None, "native"),
        ("openai/anything-at-all", "http://127.0.0.1:9/v1", "native"),
        ("gpt-4o", None, "native"),
        ("o3-mini", None, "native"),
        ("o1", None, "native"),
        ("chatgpt-4o-latest", None, "native"),
        ("my-local-model", "http://127.0.0.1:8000/v1", "native"),  # a bare name with an endpoint
        ("hosted_vllm/qwen", "http://127.0.0.1:8000/v1", "native"),
        ("openrouter/anthropic/claude-3.5", "https://openrouter.ai/api/v1", "native"),
        ("ollama/llama3", "http://127.0.0.1:11434/v1", "native"),
        ("ollama/llama3", "http://127.0.0.1:11434", "litellm"),  # Ollama's own API
        ("ollama/llama3", None, "litellm"),
        ("groq/llama3-8b-8192", None, "litellm"),  # litellm knows the endpoint
        ("anthropic/claude-3-5-haiku-latest", None, "litellm"),
        ("claude-3-5-haiku-latest", None, "litellm"),
        ("gemini/gemini-2.0-flash", None, "litellm"),
        # a vLLM or TGI server's model id, its slash no provider litellm knows
        ("meta-llama/Llama-3.1-8B-Instruct", "http://127.0.0.1:8000/v1", "native"),
        ("Qwen/Qwen2.5-7B-Instruct", "http://127.0.0.1:8000/v1", "native"),
        ("meta-llama/Llama-3.1-8B-Instruct", None, "litellm"),  # no endpoint: nothing to send it to
        ("anthropic/claude-3-5-haiku-latest", "https://proxy.example/v1", "litellm"),  # a provider litellm knows
    ],
)
def test_auto_picks_native_for_the_openai_protocol_and_litellm_for_the_rest(model, api_base, door):
    assert choose(model, api_base) == door
    assert LLM(model, api_base=api_base).door == door


def test_with_openai_base_url_set_a_model_litellm_cannot_route_goes_native(monkeypatch):
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")  # `--llm MODEL` at a local server
    assert choose("meta-llama/Llama-3.1-8B-Instruct", None) == "native"
    assert choose("my-finetune-nobody-knows", None) == "native"
    assert endpoint("meta-llama/Llama-3.1-8B-Instruct", None, None).base_url == "http://127.0.0.1:8000/v1"
    # what litellm routes stays with litellm: a provider it knows, a bare name its table lists
    assert choose("anthropic/claude-3-5-haiku-latest", None) == "litellm"
    assert choose("claude-haiku-4-5", None) == "litellm"
    assert choose("mistral/mistral-large-latest", None) == "litellm"
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert choose("meta-llama/Llama-3.1-8B-Instruct", None) == "litellm"  # nowhere to send it natively


def test_an_explicit_transport_wins():
    assert LLM("openai/gpt-4o-mini", transport="litellm").door == "litellm"
    assert LLM("hosted_vllm/qwen", transport="native", api_base="http://127.0.0.1:1/v1").door == "native"
    with pytest.raises(ValueError, match="transport"):
        LLM("openai/gpt-4o-mini", transport="fast")


def test_endpoint_from_settings_else_the_environment_litellm_reads(monkeypatch):
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_API_KEY", "GROQ_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    point = endpoint("openai/gpt-4o-mini", None, None)
    assert (point.base_url, point.wire_model, point.api_key) == ("https://api.openai.com/v1", "gpt-4o-mini", None)
    assert point.url == "https://api.openai.com/v1/chat/completions"
    monkeypatch.setenv("OPENAI_API_BASE", "http://127.0.0.1:1/v1/")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    point = endpoint("gpt-4o", None, None)
    assert (point.url, point.api_key, point.key_source) == (
        "http://127.0.0.1:1/v1/chat/completions",
        "sk-env",
        "OPENAI_API_KEY",
    )
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:2/v1")  # the SDK's name wins, as in litellm
    assert endpoint("gpt-4o", None, None).base_url == "http://127.0.0.1:2/v1"
    assert endpoint("gpt-4o", "http://127.0.0.1:3/v1", "sk-mine").api_key == "sk-mine"
    monkeypatch.setenv("GROQ_API_KEY", "gsk-env")
    groq = endpoint("groq/llama3-8b-8192", "http://127.0.0.1:4/v1", None)
    assert (groq.wire_model, groq.api_key, groq.key_source) == ("llama3-8b-8192", "gsk-env", "GROQ_API_KEY")
    with pytest.raises(ConfigError, match="needs an api_base for provider 'anthropic'"):
        endpoint("anthropic/claude-3-5-haiku-latest", None, None)


@pytest.mark.parametrize("model", ["openrouter/x", "groq/x", "hosted_vllm/x", "together_ai/x"])
def test_openais_key_is_never_sent_to_another_providers_server(openai_server, monkeypatch, model):
    """The native door fell back to OPENAI_API_KEY for OpenRouter, Groq ...; litellm sends them none."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-never-elsewhere-0000")
    for name in ("OPENROUTER_API_KEY", "GROQ_API_KEY", "HOSTED_VLLM_API_KEY", "TOGETHER_AI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    openai_server.enqueue("hi")
    llm = LLM(model, api_base=openai_server.url, num_retries=0)
    assert llm.door == "native" and complete_sync(llm, [{"role": "user", "content": "x"}]).content == "hi"
    assert "authorization" not in {k.lower() for k in openai_server.requests[-1].headers}
    own = model.split("/")[0].upper() + "_API_KEY"
    monkeypatch.setenv(own, "its-own-key-1234567")
    assert endpoint(model, openai_server.url, None).key_source == own


def test_a_model_id_with_a_slash_reaches_its_server_whole(openai_server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    openai_server.enqueue("hello")
    llm = LLM("meta-llama/Llama-3.1-8B-Instruct", api_base=openai_server.url)
    assert llm.door == "native" and complete_sync(llm, [{"role": "user", "content": "hi"}]).content == "hello"
    sent = openai_server.requests[-1]
    assert sent.body["model"] == "meta-llama/Llama-3.1-8B-Instruct"  # the id as the server knows it
    assert "authorization" not in {k.lower() for k in sent.headers}  # no key asked for, none invented
    assert endpoint("meta-llama/x", "http://127.0.0.1:1/v1", None).key_source == "OPENAI_API_KEY"


def test_prices_come_from_litellms_table_unknown_models_cost_nothing():
    info = pricing.model_info("openai/gpt-4o-mini")
    assert info is not None and info is pricing.model_info("gpt-4o-mini")
    expected = 1000 * info["input_cost_per_token"] + 10 * info["output_cost_per_token"]
    assert pricing.cost("openai/gpt-4o-mini", 1000, 10) == pytest.approx(expected)
    cached = 400 * info["input_cost_per_token"] + 600 * info["cache_read_input_token_cost"]
    assert pricing.cost("gpt-4o-mini", 1000, 0, cached_tokens=600) == pytest.approx(cached)
    assert pricing.cost("openai/my-finetune-nobody-knows", 1000, 10) == 0.0
    assert pricing.cost("sample_spec", 1000, 10) == 0.0  # the table's template entry is no model
    assert pricing.table() is pricing.table()  # read once


def run_python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


def test_a_native_only_kickoff_never_imports_litellm():
    out = run_python("""
        import sys
        from crew import Agent, Crew, Task, tool
        from crew.models import LLM
        from crew.testing import OpenAIServer, Reply

        @tool
        def add(a: int, b: int) -> int:
            "Add two integers."
            return a + b

        with OpenAIServer() as server:
            server.enqueue(Reply.tools({"name": "add", "args": {"a": 2, "b": 3}}), Reply.text("5"))
            server.enqueue(Reply.text("done"))
            llm = LLM("openai/gpt-4o-mini", api_base=server.url, api_key="sk-test")
            writer = Agent(role="Adder", goal="Add", backstory="Counts.", llm=llm, tools=[add])
            second = Agent(role="Checker", goal="Check", backstory="Checks.", llm="gpt-4o-mini")
            import os
            os.environ["OPENAI_BASE_URL"] = server.url   # the bare name reaches the same server
            os.environ["OPENAI_API_KEY"] = "sk-env-test"
            tasks = [Task(description="2+3?", expected_output="a number", agent=writer),
                     Task(description="check it", expected_output="ok", agent=second)]
            result = Crew(agents=[writer, second], tasks=tasks).kickoff()
            print(result.raw, len(server.requests), result.usage.cost > 0)
        import crew.models.litellm_loading as lm
        print("litellm" in sys.modules, lm._prewarm_thread is None)
    """)
    assert out.splitlines() == ["done 3 True", "False True"]


def test_validate_prints_each_models_transport(tmp_path):
    (tmp_path / "crew.yaml").write_text(
        textwrap.dedent("""
        llm: openai/gpt-4o-mini
        agents:
          a: {role: A, goal: G, backstory: B}
          b: {role: B, goal: G, backstory: B, llm: {model: anthropic/claude-3-5-haiku-latest}}
          c: {role: C, goal: G, backstory: B, llm: {model: openai/gpt-4o, transport: litellm}}
          d: {role: D, goal: G, backstory: B, llm: {model: hosted/llama, api_base: "http://127.0.0.1:8000/v1"}}
        tasks:
          t1: {description: d, expected_output: x, agent: a}
          t2: {description: d, expected_output: x, agent: b}
          t3: {description: d, expected_output: x, agent: c}
          t4: {description: d, expected_output: x, agent: d}
        """)
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "OPENAI_API_BASE")}
    env["OPENAI_BASE_URL"] = "http://someone:s3cret@127.0.0.1:9/v1?api-key=k3y"

    def models(*extra: str) -> str:
        command = [sys.executable, "-m", "crew", "validate", str(tmp_path), *extra]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
        assert done.returncode == 0, done.stderr
        return next(line for line in done.stdout.splitlines() if "models:" in line)

    line = models()
    assert "openai/gpt-4o-mini (native, http://127.0.0.1:9/v1)" in line  # the server, never its credentials
    assert "s3cret" not in line and "k3y" not in line and "someone" not in line
    assert "hosted/llama (native, http://127.0.0.1:8000/v1)" in line
    assert "anthropic/claude-3-5-haiku-latest (litellm)" in line and "openai/gpt-4o (litellm)" in line
    # --llm checks what `kickoff --llm` would run: every agent on that model
    assert models("--llm", "gpt-4o").endswith("models: gpt-4o (native, http://127.0.0.1:9/v1)")
    assert models("--llm", "test").endswith("models: test (offline)")


def test_no_module_imports_the_openai_sdk():
    import re
    from pathlib import Path

    import crew

    package = Path(crew.__file__).parent
    importing = re.compile(r"^\s*(import openai|from openai[\s.])", re.M)
    assert [p.name for p in package.rglob("*.py") if importing.search(p.read_text(encoding="utf-8"))] == []


def test_one_pooled_client_per_loop_closed_when_the_loop_ends(openai_server):
    import asyncio

    from crew.models import openai_door
    from crew.testing import Reply

    openai_server.handler = lambda request: Reply.text("ok")
    llm = LLM("openai/gpt-4o-mini", api_base=openai_server.url, api_key="sk-test", transport="native")

    async def two_calls():
        first = await openai_door._async_client(openai_server.url)
        await llm.acomplete([{"role": "user", "content": "a"}])
        await llm.acomplete([{"role": "user", "content": "b"}])
        assert await openai_door._async_client(openai_server.url) is first  # pooled: one per loop
        return first

    client = asyncio.run(two_calls())
    assert client.is_closed  # asyncio.run shut the loop's generators down, and the client with them
    other = asyncio.run(two_calls())
    assert other is not client and other.is_closed


def test_a_wrong_transport_in_yaml_names_the_file_line_and_key(tmp_path):
    (tmp_path / "crew.yaml").write_text(
        "llm: {model: openai/gpt-4o, transport: fast}\n"
        "agents:\n  a: {role: A, goal: G, backstory: B}\n"
        "tasks:\n  t: {description: d, expected_output: x, agent: a}\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "crew", "validate", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "crew.yaml:1: llm.transport: Input should be 'litellm', 'native' or 'auto'" in done.stderr
