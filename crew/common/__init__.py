"""What every layer uses and that knows nothing of tools, tasks, agents or runs.

The event bus (``events``), the secret scrubber (``secrets``), sync code calling async code and
back (``blocking``, ``daemon_pool``), "did you mean" for keyword arguments (``keywords``), SQLite
files opened safely (``sqlite_files``), the drawing of boxes and arrows that ``crew plot`` and
``Flow.plot()`` share (``drawing``), and token usage (``usage``; a run's ledger of it is its
meter's, ``crew.agent.meter``).

May import: ``crew.errors`` only.
"""
