"""Agents: who does the work, and the loop in which one agent works on one task.

``agent`` (the ``Agent`` model), ``loop`` (one agent on one task: ask, act, record),
``steps`` (what a turn reports), ``modes`` (native function calling or the text protocol:
readers of a reply), ``text_protocol``, ``prompts`` (every piece of prompt text),
``transcript``, ``structured`` (final answers checked against a task's output model),
``checkpoint`` (where a paused task stopped), ``delegation`` (a manager's tools to hand work
to coworkers), ``scope`` (what an agent run shares with its run) and ``meter`` (the door its
model calls go through: the usage ledger, accounts and hooks).

May import: ``crew.common``, ``crew.errors``, ``crew.tools``, ``crew.mcp``, ``crew.tasks``,
``crew.models``.
"""
