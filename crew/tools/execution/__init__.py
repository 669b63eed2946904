"""The shared tool executor: the one place a tool call is executed, for every agent of a run.

``executor`` (the pipeline: resolve, validate, approve, cache, count, run, report),
``registry`` (the tools it can call, by the names a model may spell), ``call`` (one call on
its way through, the identical calls that wait for it, and the result and ``tool.call``
event it ends as), ``caching`` (results and arguments seen before), ``counts`` (usage limits
and per-tool statistics), ``stats`` (what a ``CrewOutput`` reports per tool). A call that
waits for a person is asked of ``crew.tools.approval``, which answers with a verdict the
executor applies.

May import: ``crew.common``, ``crew.errors`` and the rest of ``crew.tools``.
"""
