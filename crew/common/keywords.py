"""Keyword arguments of the user-facing models, checked the way YAML keys are.

``Crew(proces="graph")`` must not quietly run the sequential process: an unknown
keyword is an error naming it with a suggestion. A keyword CrewAI accepts that has no
field here (``planning=True``) is a warning naming it, and is ignored, so code and YAML
written for CrewAI load as they are. It sits at the bottom of the package because the
models of every layer (tasks, agents, crews) and the YAML loader share it.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any, Literal

Section = Literal["crew", "agent", "task", "tool"]


def did_you_mean(word: Any, candidates: Iterable[Any]) -> str:
    """`` (did you mean 'x'?)`` for the closest candidate, or ``""`` when none is close."""
    import difflib

    names = [str(c) for c in candidates]
    match = difflib.get_close_matches(str(word), names, n=1, cutoff=0.6)
    return f" (did you mean '{match[0]}'?)" if match else ""


# Keys CrewAI accepts. Those that are not fields here draw a warning naming them, not an
# error, so a CrewAI project loads as it is.
CREWAI_KEYS: dict[Section, frozenset[str]] = {
    "crew": frozenset(
        {
            "share_crew",
            "planning",
            "planning_llm",
            "output_log_file",
            "prompt_file",
            "full_output",
            "language",
            "language_file",
            "chat_llm",
            "before_kickoff_callbacks",
            "after_kickoff_callbacks",
            "stream",
            "tracing",
            "config",
            "id",
            "usage_metrics",
            "security_config",
            "function_calling_llm",
            "cache_handler",
            "i18n",
        }
    ),
    "agent": frozenset(
        {
            "cache",
            "max_rpm",
            "response_template",
            "allow_code_execution",
            "max_retry_limit",
            "respect_context_window",
            "code_execution_mode",
            "multimodal",
            "inject_date",
            "date_format",
            "reasoning",
            "max_reasoning_attempts",
            "embedder",
            "knowledge",
            "knowledge_config",
            "use_system_prompt",
            "security_config",
            "apps",
            "mcps",
            "guardrail",
            "guardrail_max_retries",
            "callbacks",
            "config",
            "allow_feedback",
            "max_tokens",
            "i18n",
            "tools_handler",
            "cache_handler",
            "step_callback",
            "function_calling_llm",
            "system_template",
            "prompt_template",
        }
    ),
    "task": frozenset(
        {
            "create_directory",
            "markdown",
            "config",
            "converter_cls",
            "guardrails",
            "retry_count",
            "security_config",
            "human_input",
            "async_execution",
            "callback",
            "output_json",
            "output_pydantic",
            "guardrail",
            "guardrail_max_retries",
            "allow_crewai_trigger_context",
            "processed_by_agents",
        }
    ),
    "tool": frozenset(),
}


def known_keys(section: Section, model: type, data: Any) -> Any:
    """The keyword arguments of ``model`` (``Crew(...)``, ``Task(...)``), checked like YAML keys.

    A misspelt keyword must not be dropped silently (``Crew(proces="graph")`` would run
    sequentially): it is an error naming it, with a suggestion. A key CrewAI accepts that
    is not a field here (``planning=True``) is a warning naming it, and is left out, as in YAML.
    """
    if not isinstance(data, dict):
        return data
    known = _model_keys(model)
    extra = [key for key in data if key not in known]
    if not extra:
        return data
    unknown = [key for key in extra if key not in CREWAI_KEYS[section]]
    if unknown:
        raise ValueError(
            "; ".join(f"unknown keyword argument '{key}'{did_you_mean(key, sorted(known))}" for key in unknown)
        )
    import warnings

    warnings.warn(
        f"{model.__name__}: CrewAI's {', '.join(repr(k) for k in extra)} "
        f"{'is' if len(extra) == 1 else 'are'} not supported here and ignored",
        UserWarning,
        stacklevel=4,  # the caller of Crew(...) / Task(...)
    )
    return {key: value for key, value in data.items() if key in known}


@cache
def _model_keys(model: type) -> frozenset[str]:
    fields = model.model_fields  # type: ignore[attr-defined]
    return frozenset(fields) | {info.alias for info in fields.values() if isinstance(info.alias, str)}


def knowledge_sources_only(value: Any) -> Any:
    """``knowledge_sources`` as a list of knowledge sources (``crew.knowledge``), or a clear error.

    Sources are recognised by shape (``__crew_knowledge_source__``), so the agent layer can
    check them without importing the knowledge package above it.
    """
    if value is None:
        return []
    items = [value] if not isinstance(value, list | tuple) else list(value)
    for item in items:
        if not getattr(item, "__crew_knowledge_source__", False):
            shown = f"{type(item).__name__} {item!r}"[:80]
            raise ValueError(
                "knowledge_sources takes knowledge sources such as StringKnowledgeSource(content=...) or "
                f"PDFKnowledgeSource(file_paths=[...]) (from crew.knowledge), not {shown}"
            )
    return items
