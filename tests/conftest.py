"""Suite-wide settings: nothing reaches the network, litellm uses its bundled cost map."""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_LOG", "ERROR")
for _key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CREW_LLM"):
    os.environ.pop(_key, None)
