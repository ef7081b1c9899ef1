"""Importing the MCP SDK for a stdio server: what `agentmem mcp` needs of it, and no more, before the first answer.

A client starts `agentmem mcp` at every session start and waits for its answer to `initialize`, which was
almost all the SDK's import (docs/benchmarks.md, "MCP start-up"). Two parts of that are work a stdio
server never uses, and `prepare()` (called by `cli/mcp.py` before `mcp/server.py` is imported) defers
them, without changing a line of the SDK:

- the `mcp` and `mcp.server` packages' own `__init__` modules, which import the client side (its HTTP
  client, its sessions), the high-level server and its resources, to offer them as top-level names. Each
  package is registered as itself with its `__init__` not yet run: its submodules import as usual, and the
  first name asked of the package itself runs the `__init__` then (so `from mcp import Client` still works).
- building each pydantic model's validator and serializer as its class is defined (the SDK defines one
  for every type of every protocol version): `defer_build` builds them when a model is first used.

Only here and in `agentmem mcp`'s process: the per-turn CLI never imports the SDK (tests/test_imports.py).
"""

from __future__ import annotations

import importlib.util
import sys

PACKAGES = ("mcp", "mcp.server")  # parent first


def prepare() -> list[str]:
    """Defer what a stdio server does not need; the packages registered without their `__init__` run.

    Does nothing to a package already imported (a process that uses the SDK otherwise keeps it whole)."""
    if PACKAGES[0] in sys.modules:
        return []
    if "pydantic" not in sys.modules:
        _defer_model_builds()
    done = []
    for name in PACKAGES:
        if not _without_init(name):
            break
        done.append(name)
    return done


def _defer_model_builds() -> None:
    try:
        import pydantic

        pydantic.BaseModel.model_config["defer_build"] = True  # the default of every model defined after
    except (ImportError, AttributeError, TypeError):  # another pydantic: the models are built as they come
        pass


def _without_init(name: str) -> bool:
    """Register package `name` (its parent already registered) as the package it is, its `__init__` run only
    when a name the package itself defines is first asked for. False if it cannot be found as a package."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return False
    module = importlib.util.module_from_spec(spec)  # __path__, __spec__, __file__: submodules find their way
    loader = spec.loader

    def finish(attr: str) -> object:
        """PEP 562: consulted only for a name the module lacks; runs the package's `__init__` once."""
        module.__dict__.pop("__getattr__", None)
        loader.exec_module(module)
        try:
            return module.__dict__[attr]
        except KeyError:
            raise AttributeError(f"module {name!r} has no attribute {attr!r}") from None

    module.__dict__["__getattr__"] = finish
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)
    return True
