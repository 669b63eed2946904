"""Suite-wide settings: nothing reaches the network, litellm uses its bundled cost map."""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_LOG", "ERROR")
for _key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CREW_LLM"):
    os.environ.pop(_key, None)


import pytest  # noqa: E402


@pytest.fixture
def openai_server():
    """A running local OpenAI-compatible server (crew.testing.OpenAIServer); script it with .enqueue()."""
    from crew.testing import OpenAIServer

    with OpenAIServer() as server:
        yield server
