"""Flows: event-driven workflows of code and crews, CrewAI's Flow API (docs/flows.md).

``Flow`` (``flow``) is the class users subclass; ``start``/``listen``/``router``/``persist``
(``decorators``) and ``or_``/``and_`` (``conditions``) wire its steps; ``state`` gives every
state an ``id``; ``steps`` reads a flow class once; ``engine`` runs one kickoff; ``events``
streams it; ``durable`` records it on the run store and resumes it (``locate`` finds its class
again); ``asking`` pauses a step for a person (``Flow.ask``, ``@human_feedback``); ``shape``
reads its steps and the labels its routers return, which ``plot`` draws (``Flow.plot``).

Sits above the run layer (a step calls ``Crew.kickoff``, a flow run is recorded on the run
store). May import: every layer below it (``common``, ``tools``, ``tasks``, ``models``,
``agent``, ``stream``, ``run``, ``store``, ``backends``), ``crew.common.drawing`` among
them for ``plot``. Nothing below imports it; ``crew.config`` and ``crew.cli``
above do.
"""

from crew.flow.asking import HumanFeedbackResult, human_feedback
from crew.flow.conditions import and_, or_
from crew.flow.decorators import listen, persist, router, start
from crew.flow.flow import Flow
from crew.flow.state import FlowState

__all__ = [
    "Flow",
    "FlowState",
    "HumanFeedbackResult",
    "and_",
    "human_feedback",
    "listen",
    "or_",
    "persist",
    "router",
    "start",
]
