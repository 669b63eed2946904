"""Execution backends: where kickoffs (and the tasks of one graph) run.

``local`` runs them on this process's event loop; ``ray`` runs each kickoff, or each
task of a graph, as a Ray task on a local or existing Ray cluster (``pip install
'crew-agents[ray]'``). ``for_each`` is the batch runner both share. Importing this package
never imports Ray.
"""

from typing import TYPE_CHECKING

from crew.backends.base import Backend, BatchStatus, KickoffResult
from crew.backends.batch import for_each, resolve_backend
from crew.backends.local import LocalBackend

if TYPE_CHECKING:
    from crew.backends.ray import RayBackend

__all__ = ["Backend", "BatchStatus", "KickoffResult", "LocalBackend", "RayBackend", "for_each", "resolve_backend"]


def __getattr__(name: str) -> object:
    if name == "RayBackend":  # importing crew.backends.ray does not import ray either, but keep it lazy
        from crew.backends.ray import RayBackend

        return RayBackend
    raise AttributeError(f"module 'crew.backends' has no attribute {name!r}")
