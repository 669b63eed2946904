"""Making a stdio server die with crew: a ``kill -9`` of crew must not leave a busy server running.

The SDK starts the server process itself and takes no ``preexec_fn``, so on Linux the
command is started through a few lines of Python that ask the kernel to SIGKILL them when
their parent dies (``prctl(PR_SET_PDEATHSIG)``, which survives the ``exec``) and then
become the server. The kernel signals when the *thread* that started the process ends:
the server's loop thread, which lives as long as the connection. Elsewhere the command
runs as it is (the server still stops when its stdin closes, as MCP servers do).
"""

from __future__ import annotations

import os
import sys

__all__ = ["guarded"]

_LAUNCHER = (
    "import ctypes,os,signal,sys\n"
    "ctypes.CDLL(None).prctl(1,signal.SIGKILL)\n"  # PR_SET_PDEATHSIG
    "if os.getppid()!=int(sys.argv[1]):sys.exit(1)\n"  # crew died before the line above: go too
    "os.execvp(sys.argv[2],sys.argv[2:])"
)


def guarded(command: str, args: list[str]) -> tuple[str, list[str]]:
    """``(command, args)`` that run ``command args`` as a process the kernel kills when crew dies."""
    if not sys.platform.startswith("linux") or not sys.executable:
        return command, args
    return sys.executable, ["-I", "-S", "-c", _LAUNCHER, str(os.getpid()), command, *args]
