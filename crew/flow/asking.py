"""A step that asks a person: ``self.ask(question)`` and CrewAI's ``@human_feedback`` decorator.

A question needs somebody to answer it. With ``Flow(answerer=fn)`` (or an ``answerer`` method on
the class) ``fn(question)`` answers at once. Otherwise, on a run store, the run *pauses*: the
question waits in the store's approvals (``crew approve RUN ID --args '{"answer": "..."}'``;
a bare approve answers "yes", a deny "no"), the run ends paused (``FlowPaused``; exit 3 on
the command line), and ``crew resume RUN`` — in any process, later — runs the step again
from its start, where ``ask`` now returns the answer. The steps that finished before are not
run again. Without a store and without an answerer there is nowhere to wait: a clear error.

``@human_feedback(message, emit=[...], default_outcome=...)`` asks after the step returns,
showing its output; its output becomes a :class:`HumanFeedbackResult`, and with ``emit`` the
step is a router whose label is the outcome the answer names (crew matches the answer's
text to ``emit``; CrewAI has an LLM collapse free text into one: docs/flows.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from crew.errors import FlowDefinitionError, FlowError, FlowPaused

__all__ = ["FeedbackSpec", "HumanFeedbackResult", "ask", "feedback_of", "human_feedback", "with_feedback"]

F = TypeVar("F", bound=Callable[..., Any])

_ATTR = "__crew_feedback__"


class HumanFeedbackResult(BaseModel):
    """What a ``@human_feedback`` step hands on: its output, the person's answer and the outcome chosen."""

    output: Any = None
    feedback: str = ""
    outcome: str | None = None
    method_name: str = ""
    timestamp: float = Field(default_factory=time.time)
    metadata: dict[str, Any] = Field(default_factory=dict)


class FeedbackSpec(BaseModel):
    message: str
    emit: list[str] | None = None
    default_outcome: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


def human_feedback(
    message: str,
    emit: Sequence[str] | None = None,
    llm: Any = None,
    default_outcome: str | None = None,
    metadata: dict[str, Any] | None = None,
    **_: Any,
) -> Callable[[F], F]:
    """CrewAI's decorator: ask a person about the step's output once it returns (see the module doc).

    ``llm`` is accepted and not used: the answer is matched to ``emit`` by its text.
    """
    if emit is not None and not emit:
        raise FlowDefinitionError("human_feedback: emit must name at least one outcome")
    if default_outcome is not None and emit is not None and default_outcome not in emit:
        raise FlowDefinitionError(f"human_feedback: default_outcome {default_outcome!r} is none of emit {list(emit)}")
    spec = FeedbackSpec(
        message=message, emit=list(emit) if emit else None, default_outcome=default_outcome, metadata=metadata or {}
    )

    def decorator(fn: F) -> F:
        setattr(getattr(fn, "__func__", fn), _ATTR, spec)
        return fn

    return decorator


def feedback_of(fn: Any) -> FeedbackSpec | None:
    return getattr(getattr(fn, "__func__", fn), _ATTR, None)


def ask(flow: Any, run: Any, question: str, held: dict[str, Any] | None = None) -> str:
    """The answer to ``question`` asked by the step run ``run`` of ``flow``'s current run.

    ``held`` (a ``@human_feedback`` step) is kept with the question: what the step had done."""
    if run is None or flow._run is None:  # pyright: ignore[reportPrivateUsage]
        raise FlowError("ask() is called from a step of a running flow")
    run.asked += 1
    call_id = f"ask-{run.step}-{run.number}-{run.asked}"
    engine = flow._run  # pyright: ignore[reportPrivateUsage]
    if call_id in engine.answers:
        return str(engine.answers[call_id])
    answerer = getattr(flow, "answerer", None)
    if callable(answerer):
        return str(answerer(question))
    if engine.observer is None:
        raise FlowError(
            f"flow {flow.flow_name}: step '{run.step}' asks {question!r}, and nobody can answer: run the flow on a "
            "run store (store=...) to pause until `crew approve` answers, or give Flow(answerer=fn)",
            step=run.step,
            run_id=engine.run_id,
        )
    engine.observer.asked(call_id, run.step, question, held)
    short = engine.run_id[:12]
    raise FlowPaused(
        f"flow {flow.flow_name}: step '{run.step}' waits for an answer: {question!r} "
        f'(crew approve {short} {call_id} --args \'{{"answer": "..."}}\', then crew resume {short})',
        question=question,
        call_id=call_id,
        step=run.step,
        run_id=engine.run_id,
    )


def with_feedback(flow: Any, run: Any, spec: FeedbackSpec, output: Any) -> HumanFeedbackResult:
    """A ``@human_feedback`` step's output once a person has answered about it.

    Its body has run: its output is kept with the question, so that the resume after the
    answer hands it on instead of running the body again (crew.flow.engine)."""
    from crew.flow.state import dump_state

    held = {"number": run.number, "output": output, "asked": run.asked, "state": dump_state(flow.state)}
    answer = ask(flow, run, f"{spec.message}\n\n{output}", held)
    outcome = None
    if spec.emit is not None:
        outcome = _outcome(answer, spec.emit) or spec.default_outcome
        if outcome is None:
            raise FlowError(
                f"flow {flow.flow_name}: step '{run.step}': the answer {answer!r} names none of its outcomes "
                f"({', '.join(spec.emit)}), and it has no default_outcome",
                step=run.step,
            )
    return HumanFeedbackResult(
        output=output, feedback=answer, outcome=outcome, method_name=run.step, metadata=spec.metadata
    )


def _outcome(answer: str, emit: list[str]) -> str | None:
    """The outcome an answer names: the whole answer, or its first word, matched without case."""
    text = answer.strip().lower()
    first = text.split()[0].strip(".,:;!") if text.split() else ""
    for option in emit:
        if option.lower() in (text, first):
            return option
    return None
