"""Every agent CLI is one module in agentmem/runtimes/, and nothing else branches on a runtime's name.

The tests below run over every registered runtime, so a sixth CLI is checked by adding its module
and registering it (docs/ARCHITECTURE.md, "Adding a sixth CLI").
"""

from __future__ import annotations

import ast
import json

import pytest

from agentmem.hooks import dispatch
from agentmem.machine import blocks
from agentmem.mcp import registration
from agentmem.runtimes import registry
from agentmem.runtimes.base import hooked
from agentmem.store.base import StoreDescription
from tests.fixtures_core import REPO
from tests.template_kit import tree_bytes
from tests.test_blocks import read_block

PACKAGE = REPO / "agentmem"
# Modules whose strings equal a runtime's name without naming a runtime, each with its reason.
NOT_RUNTIME_NAMES = {
    # `agentmem import --from codex|gemini|claude-code|cline`: formats of other tools' memories (two of
    # them not runtimes at all), read from files no runtime part of agentmem writes.
    "exchange/native.py",
    "exchange/sources.py",
}
HELPER = ["/opt/me/.config/agentmem/.venv/bin/agentmem"]


def _name_constants(node: ast.AST) -> list[str]:
    """The runtime names written as string constants directly in `node` or a literal collection in it."""
    items = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
    return [i.value for i in items if isinstance(i, ast.Constant) and i.value in registry.NAMES]


def _name_branches(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, name) of every comparison with a runtime name, a collection of names, or a dict keyed by one."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):  # a collection compared with is counted below, as a collection
            operands = [o for o in (node.left, *node.comparators) if isinstance(o, ast.Constant)]
            found += [(node.lineno, n) for o in operands for n in _name_constants(o)]
        elif isinstance(node, ast.Tuple | ast.List | ast.Set):
            found += [(node.lineno, n) for n in _name_constants(node)]
        elif isinstance(node, ast.Dict):
            found += [(node.lineno, n) for k in node.keys if k is not None for n in _name_constants(k)]
        elif isinstance(node, ast.MatchValue):
            found += [(node.lineno, n) for n in _name_constants(node.value)]
    return found


def test_no_module_outside_runtimes_compares_or_lists_a_runtime_name():
    # What is known about one CLI lives in its module; everything else asks the runtime object.
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] == "runtimes" or str(rel) in NOT_RUNTIME_NAMES:
            continue
        offenders += [f"{rel}:{line}: {name!r}" for line, name in _name_branches(ast.parse(path.read_text()))]
    assert offenders == []


def test_the_name_check_catches_the_branches_it_is_meant_to():
    code = ('if runtime == "gemini": pass\nif name in ("opencode", "copilot"): pass\n'
            'FORMATS = {"copilot": 1}\nmatch x:\n    case "codex": pass\nwhich("codex")\n')
    assert sorted(_name_branches(ast.parse(code))) == [(1, "gemini"), (2, "copilot"), (2, "opencode"), (3, "copilot"),
                                                      (5, "codex")]


def test_every_runtime_module_is_registered_under_its_file_name():
    modules = {p.stem for p in (PACKAGE / "runtimes").glob("*.py")} - {"__init__", "base", "registry", "spec"}
    assert modules == set(registry.NAMES)
    for name in registry.NAMES:
        assert dispatch.runtime_spec(name).name == name  # what the per-turn hook imports alone
        assert registry.runtime(name, {"HOME": "/h"}).name == name


@pytest.mark.parametrize("name", ["base", "registry", "spec", "__init__", "nope", "../codex", "Codex", ""])
def test_a_hook_for_anything_but_a_registered_runtime_is_a_usage_error(name):
    from agentmem.errors import InvalidInput

    with pytest.raises(InvalidInput, match="--runtime must be one of codex, claude, gemini, opencode, copilot"):
        dispatch.parse_hook_args(["reminder", "--runtime", name])


@pytest.mark.parametrize("name", registry.NAMES)
def test_a_runtime_keeps_its_files_under_the_home_it_is_given(name):
    rt = registry.runtime(name, {"HOME": "/h"})
    for path in (rt.instructions, rt.skills_root, rt.hooks_file, rt.config_dir):
        assert path is None or str(path).startswith("/h/"), path  # None: a capability it lacks
    assert rt.hooks_file != rt.instructions and rt.skills_root != rt.instructions


@pytest.mark.parametrize("name", registry.NAMES)
def test_a_reminder_is_printed_in_a_form_that_carries_the_text_whole(name):
    # INV runtime-hook-form
    text = 'Memory: "quoted" \\ and\ttabs'
    out = dispatch.reminder_output(name, "start", text)
    if dispatch.runtime_spec(name).reminder_shape is None:  # it runs no hooks of ours: nothing to print
        assert out == ""
        return
    assert out.endswith("\n") and out.count("\n") == 1
    shape = dispatch.runtime_spec(name).reminder_shape("start", text)
    if isinstance(shape, str):
        assert out == text + "\n"
    else:
        assert json.loads(out) == shape and text in _strings(shape)


def _strings(value):
    return [value] if isinstance(value, str) else [s for v in value.values() for s in _strings(v)]


def _user_home(rt, home):
    """The user's own content in every file of theirs the runtime's parts go into."""
    before = {rt.instructions: "# My own rules\n\nKeep it short.\n"}
    if rt.hooks_file is None:
        pass  # it runs no hooks of ours
    elif rt.hooks_file.suffix == ".json" and rt.hooks_file.parent == rt.config_dir:  # entries in their JSON
        before[rt.hooks_file] = '{\n  "theme": "dark"\n}\n'
    else:  # a file of our own, in a folder of theirs
        before[rt.hooks_file.parent / "mine.txt"] = "theirs\n"
    before[rt.config_dir / "config.toml"] = '# mine\n[tui]\ntheme = "dark"\n'
    before[home / ".claude.json"] = '{\n  "numStartups": 3\n}\n'
    for path, text in before.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.mark.parametrize("name", registry.NAMES)
def test_every_part_of_a_runtime_goes_in_and_comes_out_leaving_the_users_files_byte_equal(name, tmp_path):
    # INV outside-untouched, INV idempotent-apply: block, permissions, hooks and MCP entry, each
    # applied twice, then withdrawn; the home is as it was, byte for byte.
    home, machine = tmp_path / "home", tmp_path / "machine"
    machine.mkdir()
    rt = registry.runtime(name, {"HOME": str(home)})
    _user_home(rt, home)
    before = tree_bytes(home)
    store = StoreDescription("folder", str(tmp_path / "store"))

    for _ in range(2):
        blocks.apply_block(rt.instructions, "Use the helper.")
        rt.grant_permissions(machine, HELPER, store)
        if hooked(rt):
            rt.install_hooks(machine, HELPER)
        if rt.mcp is not None:
            registration.register(machine, rt, HELPER)
    assert not rt.grant_permissions(machine, HELPER, store)[0]
    if hooked(rt):
        assert not rt.install_hooks(machine, HELPER).changed
        status = rt.hooks_status(HELPER)
        assert status["installed"] and status["current"] is True and status["runtime"] == name
    assert read_block(rt.instructions) == "Use the helper."
    assert tree_bytes(home) != before

    assert blocks.remove_block(rt.instructions)
    rt.withdraw_permissions(machine)
    assert not hooked(rt) or rt.remove_hooks(machine).changed
    if rt.mcp is not None:
        assert registration.unregister(machine, rt).changed
    assert tree_bytes(home) == before
    assert not hooked(rt) or not rt.hooks_status(HELPER)["installed"]
