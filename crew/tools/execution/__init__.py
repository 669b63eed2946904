"""The shared tool executor: the one place a tool call is executed, for every agent of a run.

``executor`` (the executor's state and its two drivers, sync and async), ``pipeline`` (the
steps of a call: resolve, validate, approve, cache, count, run, report), ``registry`` (the
tools it can call, by the names a model may spell), ``call`` (one call on its way through,
the identical calls that wait for it, and the result and ``tool.call`` event it ends as),
``counts`` (usage limits and per-tool statistics), ``stats`` (what a ``CrewOutput`` reports
per tool). The cache it reads and stores through, and the calls it has seen before, are
``crew.tools.cache``. A call that waits for a person is asked of ``crew.tools.approval``,
which answers with a verdict the executor applies.

May import: ``crew.common``, ``crew.errors`` and the rest of ``crew.tools``.
"""
