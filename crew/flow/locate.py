"""Finding a flow's class again in another process, from what its run recorded.

A stored flow run keeps where its class lives (``module``, ``qualname``, the source
``file``: ``crew.flow.durable.flow_settings``). ``crew resume``/``crew replay`` import the module
by name from the run's folder, or, for a class defined in a script run as ``__main__``, load
that file under a name of its own (so its ``if __name__ == "__main__":`` block does not run).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from crew.errors import StoreError

__all__ = ["flow_class"]


def flow_class(where: Mapping[str, Any] | None, folder: str | None = None) -> type:
    """The flow class a run recorded; ``StoreError`` saying what was looked for when it is not found."""
    from crew.flow.flow import Flow

    if not where or not where.get("qualname"):
        raise StoreError("the run does not say which flow class it ran (it was not recorded by a flow)")
    module, qualname, file = str(where.get("module") or ""), str(where["qualname"]), where.get("file")
    if "<locals>" in qualname:
        raise StoreError(f"flow {qualname} is defined inside a function: only a module-level class can be loaded again")
    found = _from_module(module, folder) if module and module != "__main__" else None
    if found is None and file:
        found = _from_file(Path(str(file)))
    cls = _attribute(found, qualname) if found is not None else None
    if not (isinstance(cls, type) and issubclass(cls, Flow)):
        shown = file or module
        raise StoreError(f"cannot load flow {qualname} from {shown} (moved or renamed?): give its folder with --path")
    return cls


def _from_module(name: str, folder: str | None) -> Any:
    if folder and folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _from_file(path: Path) -> Any:
    if not path.is_file():
        return None
    name = f"crew_flow_{abs(hash(str(path.resolve())))}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _attribute(module: Any, qualname: str) -> Any:
    value = module
    for part in qualname.split("."):
        value = getattr(value, part, None)
    return value
