"""What ``crew kickoff`` checks before anything starts: the problems every task would hit alike.

A missing API key, a misspelt model name, a tool's missing environment variable and an
input nothing reads are known before the first model call; found at run time they fail
every parallel task with the same message. Each is said here once, with what to do, and
the kickoff exits 2 with nothing started. The checks read what the run will read (the
doors' own routing and key lookup, litellm's bundled model table as data), so they refuse
only what would certainly fail: a model the table does not list yet but whose provider
takes it still runs. The offline ``test`` model, and any model object of the user's own,
need nothing.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

_PROVIDER_KEYS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "mistral": ("MISTRAL_API_KEY",),
    "cohere": ("COHERE_API_KEY", "CO_API_KEY"),
    "groq": ("GROQ_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY", "OR_API_KEY"),
    "xai": ("XAI_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_AI_API_KEY", "TOGETHER_API_KEY"),
    "fireworks_ai": ("FIREWORKS_API_KEY", "FIREWORKS_AI_API_KEY", "FIREWORKSAI_API_KEY"),
    "perplexity": ("PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"),
}
"""The keys litellm reads for a provider's own endpoint (any one will do). A provider not
listed here (Bedrock, Vertex, Azure: credentials of other kinds) is not checked."""


@dataclass(frozen=True)
class Model:
    """One model the run will call, as the doors see it."""

    name: str
    api_base: str | None
    has_key: bool
    transport: str
    users: tuple[str, ...]

    def who(self) -> str:
        return ", ".join(self.users)


def check(crew: Any, inputs: Mapping[str, Any], given: Mapping[str, str]) -> None:
    """Raise a ConfigError (exit 2) listing every problem found.

    ``inputs`` are the run's; ``given`` names the ones the user passed, each with the option
    it came from (``-i``, ``--inputs-file FILE``), which the message names.
    """
    found = problems(crew, inputs, given)
    if found:
        from crew.errors import ConfigError

        raise ConfigError("\n".join(found), errors=found)


def problems(crew: Any, inputs: Mapping[str, Any], given: Mapping[str, str]) -> list[str]:
    """Every problem found, one line each (empty: the run may start)."""
    models, offline = _models(crew)
    found = [line for model in models for line in _model_problems(model)]
    found += _tool_problems(crew, offline)
    found += _unused_inputs(crew, inputs, given)
    return found


def crew_problems(crew: Any) -> list[str]:
    """The model and tool problems of one crew of a flow (its inputs come from the flow's steps, at run time)."""
    models, offline = _models(crew)
    return [line for model in models for line in _model_problems(model)] + _tool_problems(crew, offline)


def _models(crew: Any) -> tuple[list[Model], set[int]]:
    """The models the run calls (manager and function-calling helpers included), and the agents that run offline."""
    uses: dict[tuple[str, str | None, bool, str], list[str]] = {}
    offline: set[int] = set()
    for agent, label, spec, own in _specs(crew):
        described = _described(spec)
        if described is None:
            if own:
                offline.add(id(agent))
            continue
        uses.setdefault(described, []).append(label)
    return [Model(*key, users=tuple(dict.fromkeys(labels))) for key, labels in uses.items()], offline


def _specs(crew: Any) -> Iterator[tuple[Any, str, Any, bool]]:
    """(agent, who, model spec, whether it is the agent's own model) for each model the run will call."""
    for agent in crew.all_agents():
        label = str(getattr(agent, "name", None) or agent.role)
        yield agent, label, agent.llm if agent.llm is not None else crew.llm, True
        if getattr(agent, "function_calling_llm", None) is not None:
            yield agent, f"{label}'s function_calling_llm", agent.function_calling_llm, False
    if getattr(crew.process, "value", crew.process) == "hierarchical":
        manager = crew.manager_agent
        spec = manager.llm if manager is not None and manager.llm is not None else crew.manager_llm or crew.llm
        yield manager, "the manager", spec, True


def _described(spec: Any) -> tuple[str, str | None, bool, str] | None:
    """(model, api_base, has a key of its own, transport) of a model string or LLM; None for the
    offline ``test`` model, no model, and model objects of the user's own (they know their needs)."""
    from crew.models.llm import LLM

    if isinstance(spec, str):
        name = spec.strip()
        return None if name.lower() == "test" else (name, None, False, "auto")
    if isinstance(spec, LLM):
        return spec.model, spec.api_base, spec.api_key is not None, spec.transport
    return None


def _model_problems(model: Model) -> list[str]:
    from crew.errors import ConfigError
    from crew.models.doors import choose

    door = choose(model.name, model.api_base, model.transport)  # type: ignore[arg-type]
    try:
        name_problem = _name_problem(model, door)
        missing = None if name_problem is not None else _missing_key(model, door)
    except ConfigError as exc:  # the native door's own refusal (a provider it needs an api_base for)
        return [f"model '{model.name}' (for {model.who()}): {exc}"]
    if name_problem is not None:
        return [f"model '{model.name}' (for {model.who()}): {name_problem}"]
    if missing is None:
        return []
    hint = "set it in the environment, or run offline with --llm test"
    return [f"model '{model.name}' (for {model.who()}) needs {missing}: {hint}"]


def _name_problem(model: Model, door: str) -> str | None:
    """Why a model name cannot be what the user meant: litellm cannot route it, or it is a known
    name misspelt (the same letters and digits as one in litellm's table)."""
    from crew.models import pricing
    from crew.models.providers import split_provider

    if not pricing.table() or model.api_base or (door == "native" and _env_base()):
        return None  # no table to read, or a server of the user's own: any name may be right there
    provider, rest = split_provider(model.name)
    unknown = _unknown_provider(provider) if door == "litellm" and provider is not None else None
    if unknown is not None:
        return unknown
    if _known(model.name, rest):
        return None
    if door == "litellm" and provider is None:
        return "litellm knows no model of that name" + _closest(model.name)
    provider = provider or "openai"
    twin = _spelt_alike(rest, provider) if provider in _PROVIDER_KEYS else None
    if twin is None:
        return None  # a model newer than the table, or a local one (ollama/...): the provider decides
    return f"no model of that name (did you mean '{model.name[: len(model.name) - len(rest)]}{twin}'?)"


def _unknown_provider(provider: str) -> str | None:
    from crew.models import pricing

    known = pricing.litellm_providers()
    if not known or provider in known:
        return None
    return f"litellm knows no provider '{provider}'" + _closest(provider, known)


def _known(name: str, rest: str) -> bool:
    from crew.models import pricing

    table = pricing.table()
    return name in table or rest in table


def _closest(word: str, candidates: Iterable[str] | None = None) -> str:
    from crew.common.keywords import did_you_mean
    from crew.models import pricing

    if candidates is None:
        twin = _spelt_alike(word, None)
        if twin is not None:
            return f" (did you mean '{twin}'?)"
        candidates = [k for k in pricing.table() if "/" not in k and k != "sample_spec"]
    return did_you_mean(word, candidates)


def _spelt_alike(name: str, provider: str | None) -> str | None:
    """The table's name (of ``provider``'s models, when given) with the same letters and digits as
    ``name`` (``gpt4o-mini`` -> ``gpt-4o-mini``). Only hosted providers' lists are complete enough
    to say so: a local server's model (``ollama/...``) may be named anything."""
    from crew.models import pricing

    wanted = _letters(name)
    for key, entry in pricing.table().items():
        if key == name or "/" in key or _letters(key) != wanted:
            continue
        if provider is None or (isinstance(entry, dict) and entry.get("litellm_provider") == provider):
            return key
    return None


def _letters(name: str) -> str:
    return "".join(c for c in name.lower() if c.isalnum())


def _missing_key(model: Model, door: str) -> str | None:
    """The variable(s) to set when the model's calls would go out without a key; None when one is there."""
    if model.has_key:
        return None
    if door == "native":
        from crew.models.openai_endpoint import endpoint
        from crew.models.providers import OPENAI_BASE_URL

        point = endpoint(model.name, model.api_base, None)
        needs = point.api_key is None and point.base_url.rstrip("/") == OPENAI_BASE_URL
        return point.key_source if needs else None
    provider = _litellm_provider(model.name)
    if model.api_base or (provider == "openai" and _env_base()):
        return None  # a server of the user's own: it may take no key
    keys = _PROVIDER_KEYS.get(provider or "", ())
    if not keys or any(os.environ.get(k) for k in keys):
        return None
    return " or ".join(keys)


def _litellm_provider(name: str) -> str | None:
    """The provider litellm sends ``name`` to: its prefix, or for a bare name the table's entry."""
    from crew.models import pricing
    from crew.models.providers import split_provider

    provider, _ = split_provider(name)
    if provider is not None:
        return provider
    info = pricing.model_info(name)
    return str(info.get("litellm_provider")) if info else None


def _env_base() -> str | None:
    return os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE")


def _tool_problems(crew: Any, offline: set[int]) -> list[str]:
    """Each environment variable a tool declares as required, unset, once per tool.

    Agents on the offline model are left out: their runs promise no key and no network.
    """
    found: dict[str, list[str]] = {}
    for agent, tool in _tools(crew):
        if id(agent) in offline:
            continue
        for variable, description in _required_env(tool):
            if not os.environ.get(variable):
                users = found.setdefault(f"tool '{tool.name}' needs {variable}{description}", [])
                users.append(str(getattr(agent, "name", None) or agent.role))
    return [
        f"{need} (for {', '.join(dict.fromkeys(users))}): set it in the environment" for need, users in found.items()
    ]


def _tools(crew: Any) -> Iterator[tuple[Any, Any]]:
    """(agent, tool) for every tool an agent may call: its own and those of the tasks it does."""
    for agent in crew.all_agents():
        for tool in agent.tools or ():
            yield agent, tool
    for task in crew.tasks:
        if task.agent is not None:
            for tool in task.tools or ():
                yield task.agent, tool


def _required_env(tool: Any) -> Iterator[tuple[str, str]]:
    """(name, ", its description") of each variable ``tool`` needs and has no default for.

    A CrewAI tool's declarations sit on the object the crew tool wraps.
    """
    declared = list(getattr(tool, "env_vars", None) or ()) or list(
        getattr(getattr(tool, "wrapped", None), "env_vars", None) or ()
    )
    for item in declared:
        name = item if isinstance(item, str) else getattr(item, "name", None)
        if not isinstance(name, str) or not name:
            continue
        if getattr(item, "required", True) is False or getattr(item, "default", None) is not None:
            continue
        description = str(getattr(item, "description", "") or "")
        yield name, f", {description}" if description else ""


class _Watched(Mapping[str, Any]):
    """The inputs, noting which names the run's filling looks up."""

    def __init__(self, inputs: Mapping[str, Any]) -> None:
        self.inputs = inputs
        self.read: set[str] = set()

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return self.inputs[key]

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.read.add(key)
        return key in self.inputs

    def __iter__(self) -> Iterator[str]:
        self.read.update(self.inputs)  # read whole: every name counts as used
        return iter(self.inputs)

    def __len__(self) -> int:
        return len(self.inputs)


def _unused_inputs(crew: Any, inputs: Mapping[str, Any], given: Mapping[str, str]) -> list[str]:
    """Inputs given on the command line that no placeholder of the run reads (a misspelt name).

    The names are the ones the kickoff's own filling looks up, so nothing is guessed.
    """
    if not given:
        return []
    from crew.common.keywords import did_you_mean
    from crew.errors import CrewError
    from crew.tasks.inputs import fill_inputs

    watched = _Watched(inputs)
    with contextlib.suppress(CrewError):  # a missing input is the inputs check's; the names read so far count
        fill_inputs(crew.all_agents(with_manager=True), crew.tasks, watched)
    wanted = sorted(watched.read - set(given))
    found = []
    for name, origin in given.items():
        if name not in watched.read:
            hint = did_you_mean(name, wanted)
            where = f"{origin} {name}" if origin == "-i" else f"{origin}: input '{name}'"
            found.append(f"{where}: no placeholder of the crew reads it{hint}")
    return found
