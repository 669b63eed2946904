"""Prices and capabilities of models, from litellm's bundled table read as plain data.

The native transport must not import litellm (seconds, ~200 MB) to price a call, yet a
price made up here would drift from the one litellm computes. litellm ships its table as
a JSON file inside the package (``model_prices_and_context_window_backup.json``); this
module finds the package without importing it, reads the file once, and answers from
it. A model the table does not know costs nothing (0.0), never a guessed price.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from pathlib import Path
from typing import Any, cast

_FILE = "model_prices_and_context_window_backup.json"
_table: dict[str, Any] | None = None
_lock = threading.Lock()


def price_file() -> Path | None:
    """Where litellm's price table lies."""
    return litellm_file(_FILE)


def litellm_file(name: str) -> Path | None:
    """A data file inside the installed litellm package (``find_spec`` locates it without running it)."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(folder) / name
        if path.is_file():
            return path
    return None


_PROVIDERS_FILE = "provider_endpoints_support_backup.json"
_providers: frozenset[str] | None = None


def litellm_providers() -> frozenset[str]:
    """The providers litellm knows (its bundled endpoint table, read once as data); empty when it is absent."""
    global _providers
    if _providers is None:
        path = litellm_file(_PROVIDERS_FILE)
        try:
            listed: object = json.loads(path.read_bytes()).get("providers") if path is not None else None
        except (OSError, ValueError, AttributeError):
            listed = None
        names = cast("dict[str, object]", listed) if isinstance(listed, dict) else {}
        _providers = frozenset(name.split("/")[0].lower() for name in names)
    return _providers


def table() -> dict[str, Any]:
    """The whole table (read on first use, then kept); empty when litellm is not installed."""
    global _table
    if _table is None:
        with _lock:
            if _table is None:
                path = price_file()
                try:
                    loaded: object = json.loads(path.read_bytes()) if path is not None else {}
                except (OSError, ValueError):
                    loaded = {}
                _table = cast("dict[str, Any]", loaded) if isinstance(loaded, dict) else {}
    return _table


def model_info(model: str) -> dict[str, Any] | None:
    """The table's entry for ``model`` as litellm would look it up: the full name, then without ``openai/``."""
    prices = table()
    for name in _candidates(model):
        entry: object = prices.get(name)
        if isinstance(entry, dict) and name != "sample_spec":
            return cast("dict[str, Any]", entry)
    return None


def _candidates(model: str) -> list[str]:
    names = [model]
    provider, _, rest = model.partition("/")
    if rest and provider.lower() == "openai":
        names.append(rest)
    return names


def cost(model: str, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float:
    """USD for one call; 0.0 when the model or its prices are unknown. Cached prompt tokens
    are billed at the cache-read price where the table has one."""
    info = model_info(model)
    if info is None:
        return 0.0
    prompt_price = info.get("input_cost_per_token")
    completion_price = info.get("output_cost_per_token")
    if not isinstance(prompt_price, (int, float)) or not isinstance(completion_price, (int, float)):
        return 0.0
    cached_price = info.get("cache_read_input_token_cost")
    if not isinstance(cached_price, (int, float)):
        cached_tokens, cached_price = 0, 0.0
    cached_tokens = min(max(cached_tokens, 0), prompt_tokens)
    return float(
        (prompt_tokens - cached_tokens) * prompt_price
        + cached_tokens * cached_price
        + completion_tokens * completion_price
    )


def supports_function_calling(model: str) -> bool:
    """What the table says (as ``litellm.supports_function_calling`` would); unknown models: False."""
    info = model_info(model)
    return bool(info and info.get("supports_function_calling"))
