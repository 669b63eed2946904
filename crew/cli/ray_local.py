"""The local Ray instance a command started here ends with the command.

Its processes would outlive the command, and on Ctrl-C ``os._exit`` skips Ray's own
clean-up. One kickoff and a ``--for-each`` batch both end through here.
"""

from __future__ import annotations

import sys


def stop_ray() -> None:
    """Shut down the instance a ``backend: ray`` crew started (nothing when Ray never loaded)."""
    ray_backend = sys.modules.get("crew.backends.ray")
    if ray_backend is not None:
        ray_backend.shutdown_started()
