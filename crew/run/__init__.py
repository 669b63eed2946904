"""A run: a crew's tasks scheduled as a DAG, each run by its agent, observed and bounded.

``kickoff`` (the one path from ``Crew`` to the scheduler: every kickoff, resume, replay and
Ray kickoff; a run store only records what it does), ``continuation`` (what a kickoff takes
over from an earlier run), ``warmup`` (what a process's first kickoff loads before its
tasks start), ``scheduler`` (the ready queue, critical path first), ``task_runner`` (one
task: conditions, attempts, guardrails, output), ``budget`` (limits that stop a run), and
``tracing`` (OpenTelemetry spans).

May import: every layer below it (``common``, ``tools``, ``mcp``, ``tasks``, ``models``,
``agent``, ``stream``), and ``crew.crew``, whose ``Crew`` it runs.
"""
