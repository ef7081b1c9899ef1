"""One home for where things are: the store's layout in store/layout.py, the machine folder's in paths.py.

A name that says where something is (a folder of a store or of the cache, a file of the cache) is spelled
only in those two modules; every other module asks them. What counts as spelling a place is judged by use,
so a JSON member named "notes" or a command named "pending" is no place:
- a string passed to os.path.join, pathlib's Path or its `/`, or os.makedirs/listdir/... as a path part;
- a string given to a store's `list`, `changes` or `watch` (a prefix);
- a string compared with a part of a split path (`parts[2] == "notes"`);
- a module-level constant naming a file or folder (`STATE_FILE = "state.json"`);
- an f-string or a string holding `/` whose parts include a layout name (`f"projects/{p}/notes"`).
"""

from __future__ import annotations

import ast

from tests.fixtures_core import REPO

PACKAGE = REPO / "agentmem"
HOMES = {"paths.py", "store/layout.py"}

# The machine folder's and the stores' names (docs/ARCHITECTURE.md, "Machine folder" and the store layout).
LAYOUT_NAMES = {
    "projects", "notes", "skills", "records", "withheld", "screened", "index", "pending", "cache", "view",
    "state.json", "records.json", "store.json", "no-answer.json", "review.json", "corrections.json",
    "corrections-seen.json", "names", "names.lock", "names.gen", "ranked.sqlite", "vectors.bin", "rebuild.lock",
    "checked.json", "entry.json", "record.json", "note.md", ".confirmed", "setup-verification.json", "written.json",
    "config.toml", "index.html", "pending-skills",
}

# Modules that spell one of these names as a place that is not agentmem's own layout, and why.
ALLOWED = {
    ("runtimes/base.py", "skills"): "the agent CLIs' shared skills folder, ~/.agents/skills",
    ("runtimes/claude.py", "skills"): "Claude Code's own skills folder, ~/.claude/skills",
    ("runtimes/codex.py", "projects"): "Codex's config.toml table [projects], not a folder",
    ("exchange/sources.py", "projects"): "Claude Code's auto memory folder, ~/.claude/projects/...",
    ("exchange/from_codex.py", "notes"): "Codex's memories folder, extensions/ad_hoc/notes",
    ("exchange/carried.py", "records"): "an export folder's own layout (<project>/records/), not the store's",
    ("runtimes/codex.py", "config.toml"): "Codex's own config.toml in $CODEX_HOME",
    ("machine/helper_venv.py", "config.toml"): "run by Copier as a script before the package is installed",
}
PATH_CALLS = {"join", "Path", "makedirs", "listdir", "isdir", "isfile", "exists", "mkdir", "stat", "unlink"}
STORE_PREFIX_CALLS = {"list", "changes", "watch"}


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _parts(text: str) -> set[str]:
    return set(text.split("/")) if "/" in text else set()


def _spelled(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, name) of every layout name the module spells as a place."""
    out: list[tuple[int, str]] = []

    def name_in(node: ast.AST) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in LAYOUT_NAMES:
            out.append((node.lineno, node.value))

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            called = _name(node.func)
            if called in PATH_CALLS:
                for arg in node.args:
                    name_in(arg)
            elif called in STORE_PREFIX_CALLS and node.args:
                name_in(node.args[0])
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            name_in(node.left)
            name_in(node.right)
        elif (isinstance(node, ast.Compare) and isinstance(node.left, ast.Subscript)
              and isinstance(node.left.slice, ast.Constant) and isinstance(node.left.slice.value, int)):
            for right in node.comparators:
                name_in(right)
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
            out += [(node.lineno, n) for n in sorted(_parts(text) & LAYOUT_NAMES)]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "\n" not in node.value:
            out += [(node.lineno, n) for n in sorted(_parts(node.value) & LAYOUT_NAMES)]
    for stmt in tree.body:  # module-level constants
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and isinstance(stmt.value, ast.Constant):
            name_in(stmt.value)
    return out


def _docstrings(tree: ast.Module) -> set[int]:
    """Lines of docstrings (prose may name a place; the rule is about code)."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines


def spelled_outside_the_homes(root=PACKAGE) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if "__pycache__" in path.parts or rel in HOMES:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        prose = _docstrings(tree)
        for line, name in sorted(set(_spelled(tree))):
            if line not in prose and (rel, name) not in ALLOWED:
                found.append(f"{rel}:{line}: {name!r}")
    return found


def test_only_the_two_layout_homes_spell_where_things_are_in_a_store_or_the_machine_folder():
    assert spelled_outside_the_homes() == []


def test_the_rule_sees_each_way_a_module_could_spell_a_place(tmp_path):
    # The guard means something: each way of spelling a place is caught, and the JSON member is not.
    (tmp_path / "spells.py").write_text(
        "import os\n"
        "STATE = 'state.json'\n"
        "def f(pdir, store, p, parts, out):\n"
        "    a = os.path.join(pdir, 'notes')\n"
        "    b = store.list('skills')\n"
        "    c = f'projects/{p}/notes'\n"
        "    d = parts[2] == 'records'\n"
        "    e = out['notes']\n"
        "    return {'notes': 1, 'pending': out.get('index')}\n")
    assert spelled_outside_the_homes(tmp_path) == [
        "spells.py:2: 'state.json'", "spells.py:4: 'notes'", "spells.py:5: 'skills'", "spells.py:6: 'notes'",
        "spells.py:6: 'projects'", "spells.py:7: 'records'"]


def test_every_allowance_is_still_needed():
    # An allowance whose module no longer spells the name is dropped, so the list stays a true account.
    used = set()
    for rel, name in ALLOWED:
        tree = ast.parse((PACKAGE / rel).read_text(encoding="utf-8"))
        if any(n == name for _, n in _spelled(tree)):
            used.add((rel, name))
    assert set(ALLOWED) - used == set()
