"""The house rules a reader relies on: invariants proven, modules listed, small, and light to import."""

from __future__ import annotations

import re

from tests.fixtures_core import REPO

PACKAGE = REPO / "agentmem"


def _modules():
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_invariant_is_cited_by_at_least_one_test():
    names = re.findall(r"^- \*\*([a-z0-9-]+)\*\*:", (REPO / "docs" / "INVARIANTS.md").read_text(), re.M)
    assert len(names) >= 10
    tests = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "tests").glob("*.py"))
    uncited = [n for n in names if not re.search(rf"INV {re.escape(n)}\b", tests)]
    assert uncited == [], f"invariants no test cites: {uncited}"


def test_every_module_appears_in_the_architecture_document():
    text = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    missing = [str(p.relative_to(PACKAGE)) for p in _modules()
               if p.name != "__init__.py" and f"`{p.relative_to(PACKAGE)}`" not in text]
    assert missing == [], f"modules missing from docs/ARCHITECTURE.md: {missing}"


def test_no_module_is_longer_than_one_sitting():
    long = [(str(p.relative_to(REPO)), n) for p in _modules() if (n := len(p.read_text().splitlines())) > 500]
    assert long == []


def test_package_init_files_are_empty_so_importing_a_subpackage_costs_nothing():
    assert [str(p) for p in PACKAGE.rglob("__init__.py") if p.read_text().strip()] == []


def test_the_package_imports_itself_by_absolute_name_only():
    # A relative import changes meaning when a module moves between subpackages (search/encoder.py's
    # `from .errors import` did, and became a ModuleNotFoundError).
    relative = [f"{p.relative_to(REPO)}:{i}" for p in _modules()
                for i, line in enumerate(p.read_text().splitlines(), 1) if re.match(r"\s*from \.", line)]
    assert relative == []
