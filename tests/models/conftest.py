"""The model-layer tests run through both doors of ``LLM``: litellm and the native OpenAI transport."""

import pytest


@pytest.fixture(params=["litellm", "native"])
def transport(request):
    """Which transport ``LLM`` uses in this test; every test taking it runs once per door."""
    return request.param
