"""Imports only go down: the layer order in docs/ARCHITECTURE.md, checked over every module's imports.

An import counts wherever it stands (module level or inside a function: a function-level import is a
dependency all the same, only a later one), and so do `__import__("agentmem...")` and
`importlib.import_module("agentmem...")` with a literal name. Imports under `if TYPE_CHECKING:` are
annotations only: they do not count for the layer order, but they do for cycles (two modules that need
each other's types are one concern split in two, or a type that belongs below both). Two things fail: an
import from a lower layer to a higher one (unless listed in EXCEPTIONS with its reason), and any cycle
between modules, in or across layers.
"""

from __future__ import annotations

import ast
import re

from tests.fixtures_core import REPO

PACKAGE = REPO / "agentmem"

# A lower layer reaching up, without a cycle: (importer, imported) -> why it is right as it is.
EXCEPTIONS = {
    ("agentmem.search.encoder", "agentmem.machine.answers"):
        "the encoder's missing-package error names the one command that turns hybrid on for this "
        "machine; machine/answers imports only errors, so the edge closes no cycle",
    ("agentmem.replica.redacted_copies", "agentmem.search.index"):
        "a cache screened by an older scanner is cleaned again, and the index derived from the raw notes is "
        "discarded with it (INV no-credentials); index.discard only removes files and search/index imports "
        "nothing of the cache, so no cycle. Landed with Q during this pass; it could take the cache's "
        "observer instead",
}


def modules() -> dict[str, ast.Module]:
    """Every module of the package by dotted name (package __init__ files are empty and left out)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "__init__.py" or "__pycache__" in path.parts:
            continue
        name = ".".join(path.relative_to(REPO).with_suffix("").parts)
        out[name] = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return out


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The nodes under `if TYPE_CHECKING:` (its body, not its else)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and (getattr(node.test, "id", None) == "TYPE_CHECKING"
                                         or getattr(node.test, "attr", None) == "TYPE_CHECKING"):
            for stmt in node.body:
                skip.update(id(sub) for sub in ast.walk(stmt))
    return skip


def _literal_import(node: ast.Call) -> str | None:
    """The module a `__import__("...")` or `importlib.import_module("...")` call names, if a literal."""
    func = node.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    if name in ("__import__", "import_module") and node.args and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str):
        return node.args[0].value
    return None


def imported(tree: ast.Module, known: set[str], *, type_checking: bool = False) -> set[str]:
    """The package's modules `tree` imports, anywhere in it; under TYPE_CHECKING only with `type_checking`."""
    skip = set() if type_checking else _type_checking_only(tree)
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.update(f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module
                         for a in node.names)
        elif isinstance(node, ast.Call) and (literal := _literal_import(node)):
            names.add(literal)
    out = set()
    for name in names:
        while name not in known and "." in name:
            name = name.rsplit(".", 1)[0]
        if name in known:
            out.add(name)
    return out


def graph(*, type_checking: bool = False) -> dict[str, set[str]]:
    trees = modules()
    known = set(trees)
    return {name: imported(tree, known, type_checking=type_checking) - {name} for name, tree in trees.items()}


def layer_order() -> list[list[str]]:
    """The numbered list under "## Layers" in ARCHITECTURE.md, bottom first: each item's patterns."""
    text = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    items = re.findall(r"^\d+\. (.*(?:\n   .*)*)", section, re.M)
    return [re.findall(r"`([a-z_/*]+)`", item.split(" — ", 1)[0]) for item in items]


def layer_of(module: str, order: list[list[str]]) -> int | None:
    """The layer of a module: a pattern naming it exactly wins over its package's `pkg/*`."""
    rel = module.removeprefix("agentmem.").replace(".", "/")
    exact = [i for i, pats in enumerate(order) if rel in pats]
    package = [i for i, pats in enumerate(order) if f"{rel.rsplit('/', 1)[0]}/*" in pats and "/" in rel]
    found = exact or package
    return found[0] if len(found) == 1 else None


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(g.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    comp.append(member)
                    if member == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_the_layer_order_places_every_module_in_exactly_one_layer():
    order = layer_order()
    assert len(order) >= 5, order
    unplaced = [m for m in modules() if layer_of(m, order) is None]
    assert unplaced == [], f"add these to the layer list in docs/ARCHITECTURE.md (one layer each): {unplaced}"


def test_no_module_imports_from_a_higher_layer_but_the_listed_exceptions():
    order = layer_order()
    g = graph()
    upward = sorted((m, t, (layer_of(m, order) or 0) + 1, (layer_of(t, order) or 0) + 1)
                    for m, targets in g.items() for t in targets
                    if (layer_of(m, order) or 0) < (layer_of(t, order) or 0) and (m, t) not in EXCEPTIONS)
    assert upward == [], "imports from a lower layer to a higher one (importer, imported, their layers):\n" + \
        "\n".join(map(str, upward))


def test_every_listed_exception_is_still_an_upward_import_without_a_cycle():
    order = layer_order()
    g = graph()
    for (low_module, high_module), reason in EXCEPTIONS.items():
        assert reason
        assert high_module in g[low_module], f"{low_module} no longer imports {high_module}: drop the exception"
        assert layer_of(low_module, order) < layer_of(high_module, order)  # type: ignore[operator]


def test_no_two_modules_import_each_other_even_through_others_or_for_types():
    found = cycles(graph(type_checking=True))
    assert found == [], "import cycles (each a set of modules that reach one another):\n" + \
        "\n".join(" ".join(c) for c in found)


def test_the_checker_sees_function_level_dynamic_imports_and_cycles_and_type_checking_only_for_cycles():
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from agentmem.search import ranked\n"
        "def f():\n    from agentmem.replica import cache\n"
        "    __import__('agentmem.store.base')\n"
        "    importlib.import_module('agentmem.config')\n")
    known = {"agentmem.search.ranked", "agentmem.replica.cache", "agentmem.store.base", "agentmem.config"}
    assert imported(tree, known) == {"agentmem.replica.cache", "agentmem.store.base", "agentmem.config"}
    assert imported(tree, known, type_checking=True) == known
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
