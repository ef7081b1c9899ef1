"""The per-turn paths stay light: no huggingface_hub, no copier, no tomlkit, no MCP SDK."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

from tests.fixtures_core import REPO

PROBE = """
import sys, io, contextlib
from agentmem.launch import main
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    status = main(sys.argv[1:])
HEAVY = ("huggingface_hub", "hf_xet", "copier", "tomlkit", "jinja2", "httpx2", "mcp", "mcp_types", "pydantic", "anyio",
         "starlette")
heavy = sorted(m for m in HEAVY if m in sys.modules)
print(status, ",".join(heavy))
"""


def run_probe(m, *args, cwd):
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=cwd, env=m.env)
    status, _, heavy = proc.stdout.strip().rpartition("\n")[2].partition(" ")
    return int(status), heavy, proc.stderr


def test_search_read_and_pending_on_a_warm_cache_import_no_heavy_module(machines, tmp_path):
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = machines("laptop", {checkout: "app"})
    _, saved, _ = m.json("save", input="warm cache note", cwd=checkout)
    for args in (["search", "warm"], ["search"], ["read", saved["id"]], ["pending"]):
        status, heavy, err = run_probe(m, *args, cwd=checkout)
        assert status == 0, err
        assert heavy == "", (args, heavy)


def test_the_per_turn_commands_never_import_the_mcp_sdk_even_where_it_is_installed(machines, tmp_path):
    import importlib.util

    assert importlib.util.find_spec("mcp") is not None  # installed here (the test extra), so this means something
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = machines("laptop", {checkout: "app"})
    _, saved, _ = m.json("save", input="a note about the zebra cache", cwd=checkout)
    for args in (["search", "zebra"], ["read", saved["id"]], ["pending"], ["save", "--retry", saved["id"]],
                 ["hook", "reminder", "--runtime", "claude"]):
        status, heavy, err = run_probe(m, *args, cwd=checkout)
        assert "mcp" not in heavy.split(",") and "pydantic" not in heavy.split(","), (args, heavy)


def test_a_bucket_search_that_finds_nothing_new_asks_the_hub_without_importing_huggingface_hub(
        machines, tmp_path, hub, alice, alice_bucket):
    # INV read-your-writes at per-turn cost: the bucket's updatedAt is asked through the standard library
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = machines("laptop", {checkout: "app"})
    cfg = (m.home / "config.toml").read_text()
    start = cfg.index("[store]")
    end = cfg.index("[projects]")
    m.write_config(cfg[:start] + '[store]\nkind = "bucket"\nlocation = "alice/agent-memory"\n\n' + cfg[end:])
    m.env.update(HF_ENDPOINT=hub.url, HF_TOKEN=alice)
    assert m.json("search", "anything", cwd=checkout)[0] == 0  # the first look lists the project (huggingface_hub)
    hub.buckets["alice/agent-memory"].updated_ms -= 60_000  # its last change long ago: updatedAt is settled
    assert m.json("search", "anything", cwd=checkout)[0] == 0
    hub.clear_log()
    status, heavy, err = run_probe(m, "search", "anything", "--json", cwd=checkout)
    assert status == 0, err
    assert heavy == ""
    assert [r.route for r in hub.requests() if r.route != "agent-harnesses"] == ["info"]


def test_a_per_turn_search_or_read_imports_neither_argparse_nor_pathlib(machines, tmp_path):
    # Together about 11 ms of each helper start (docs/benchmarks.md): search and read parse their
    # plain lines with agentmem.cli.quick and build paths with os.path.
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = machines("laptop", {checkout: "app"})
    _, saved, _ = m.json("save", input="a note about the deploy script", cwd=checkout)
    probe = (
        "import sys, io, contextlib\n"
        "from agentmem.launch import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    status = main(sys.argv[1:])\n"
        "print(status, sorted(m for m in ('argparse', 'pathlib') if m in sys.modules))\n"
    )
    for args in (["search", "deploy", "script"], ["search", "deploy", "--limit", "3", "--json"], ["read", saved["id"]]):
        proc = subprocess.run([sys.executable, "-S", "-c", probe, *args], capture_output=True, text=True,
                              cwd=checkout, env=m.env | {"PYTHONPATH": str(REPO)})
        assert proc.stdout.split("\n")[-2] == "0 []", (args, proc.stdout, proc.stderr)


def test_a_hook_reminder_imports_only_its_own_runtime_module_and_nothing_it_does_not_need(tmp_path):
    # The prompt reminder runs on every turn. Before runtimes/ it imported 49 modules on Python 3.11,
    # agentmem.errors and __future__ among them; now the runtime package and its one module take their place.
    from agentmem.runtimes.registry import NAMES

    probe = (
        "import sys, io, contextlib\n"
        "from agentmem.launch import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(sys.argv[1:])\n"
        "print(sorted(m for m in sys.modules if m.startswith('agentmem')))\n"
        "print(sorted(m for m in ('typing', 'pathlib', 'dataclasses', 'json', 're', '__future__', 'agentmem.errors')\n"
        "             if m in sys.modules))\n"
    )
    env = {"AGENTMEM_HOME": str(tmp_path), "PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    for name in NAMES:
        for event in ("prompt", "start"):
            proc = subprocess.run([sys.executable, "-S", "-c", probe, "hook", "reminder", "--event", event,
                                   "--runtime", name], capture_output=True, text=True, timeout=60, env=env)
            ours, unwanted = (ast.literal_eval(line) for line in proc.stdout.splitlines()[-2:])
            assert [m for m in ours if m.startswith("agentmem.runtimes")] == sorted([
                "agentmem.runtimes", f"agentmem.runtimes.{name}", "agentmem.runtimes.spec"])
            if event == "prompt":
                assert ours == sorted(["agentmem", "agentmem.launch", "agentmem.hooks", "agentmem.hooks.dispatch",
                                       "agentmem.hooks.actions", "agentmem.paths", "agentmem.runtimes",
                                       f"agentmem.runtimes.{name}", "agentmem.runtimes.spec"]), (name, proc.stdout,
                                                                                                 proc.stderr)
                assert unwanted == [], (name, unwanted)


COMPILE_PROBE = """
import sys, io, contextlib
import re._compiler
at_import = []
compile_pattern = re._compiler.compile


def recorded(pattern, flags=0):
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] == "re":
        frame = frame.f_back  # re.compile, re._compile
    name = frame.f_globals.get("__name__", "") if frame is not None else ""
    if name.startswith("agentmem") and frame.f_code.co_name == "<module>":
        at_import.append(f"{name}: {pattern}")
    return compile_pattern(pattern, flags)


re._compiler.compile = recorded
from agentmem.launch import main
with contextlib.redirect_stdout(io.StringIO()):
    status = main(sys.argv[1:])
print(status, at_import)
"""


def test_the_per_turn_commands_compile_no_pattern_of_ours_when_importing_their_modules(machines, tmp_path):
    # re compiles in Python, 0.1-0.3 ms a pattern: a search on a fresh cache compiled fifteen of ours at
    # import and used five. Patterns are compiled when first used (agentmem/patterns.py).
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = machines("laptop", {checkout: "app"})
    _, saved, _ = m.json("save", input="a note about the deploy script", cwd=checkout)
    for args in (["search", "deploy", "script"], ["search", "deploy", "--json"], ["read", saved["id"]], ["save"],
                 ["pending"], ["hook", "reminder", "--runtime", "claude"],
                 ["hook", "reminder", "--event", "prompt", "--runtime", "codex"]):
        proc = subprocess.run([sys.executable, "-c", COMPILE_PROBE, *args], capture_output=True, text=True,
                              cwd=checkout, env=m.env, input="another note about the deploy" if args == ["save"] else "")
        status, _, compiled = proc.stdout.strip().rpartition("\n")[2].partition(" ")
        assert status == "0", (args, proc.stdout, proc.stderr)
        # safety/framing.py's two are used by every search; an edit of safety/*.py makes every cache be screened
        # again (replica/redacted_copies.py), so they stay as they are.
        assert [c for c in ast.literal_eval(compiled) if not c.startswith("agentmem.safety.framing:")] == [], args


def test_a_prompt_reminder_with_notes_pending_imports_neither_errors_nor_future(tmp_path):
    # The prompt hook names `agentmem pending` when uploads wait; it writes the command with shell.py alone.
    from agentmem.note import document
    from agentmem.store.base import StoreDescription
    from agentmem.uploads import pending

    note = document.build(body="not yet confirmed", title=None, kind="note", project="app", agent="codex@laptop")
    entry = pending.Entry(id=note.id, store=StoreDescription("folder", str(tmp_path / "store")), project="app",
                          path=document.note_path("app", note.id), created=note.created)
    pending.persist(tmp_path, entry, note.render())
    probe = (
        "import sys, io, contextlib\n"
        "from agentmem.launch import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    main(sys.argv[1:])\n"
        "print(repr(out.getvalue()))\n"
        "print(sorted(m for m in ('agentmem.errors', '__future__', 're', 'json') if m in sys.modules))\n"
    )
    env = {"AGENTMEM_HOME": str(tmp_path), "PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-S", "-c", probe, "hook", "reminder", "--event", "prompt", "--runtime",
                           "claude"], capture_output=True, text=True, timeout=60, env=env)
    printed, unwanted = (ast.literal_eval(line) for line in proc.stdout.splitlines()[-2:])
    assert "1 memory note is saved on this machine but not yet confirmed" in printed, proc.stderr
    assert " pending` lists them" in printed
    assert unwanted == [], unwanted


# What only a change in the store (the refresh's plan, its catch-up, the cache's kept names, the folder store's
# journal, the index's rebuild and its catching up with its folder) or a team (memory/scopes.py) needs, and
# getpass (termios with it), which a save's author stamp read. A save changes the store: it keeps the cache's
# names and writes the journal.
ONLY_FOR_A_CHANGE_OR_A_TEAM = ("agentmem.replica.fetch_plan", "agentmem.replica.catching_up",
                               "agentmem.replica.kept_names", "agentmem.store.journal", "agentmem.search.build",
                               "agentmem.search.current", "agentmem.memory.scopes", "getpass", "termios")
A_SAVE_WRITES = ("agentmem.replica.kept_names", "agentmem.store.journal")
# A search or read of a folder store that finds nothing new tells the index nothing (search/follow.py), takes
# its catch-up budget from replica/cache.py, not memory/sync.py, and bounds the folder's reads with
# store/budget.py, not the Hub's store/network.py (docs/benchmarks.md, "Per-turn commands at 100k").
NOT_FOR_A_FOLDER_STORE_UNCHANGED = ("agentmem.store.network", "agentmem.memory.sync", "agentmem.search.follow")
# A save's witness (store/witness.py) calls inotify through the C module `_ctypes`, without the `ctypes`
# package (6.7 M instructions of a save).
NOT_PER_TURN = ("ctypes",)


def test_a_search_read_or_save_that_finds_nothing_new_without_a_team_imports_nothing_only_a_change_or_a_team_needs(
        machines, tmp_path):
    # Issue Y's must-hold, within 3% of before Y (docs/benchmarks.md, "Issue Y's per-turn path"): each of these
    # cost a search or a save 0.4-4 M instructions it did not use.
    import json
    import time

    from agentmem import config
    from agentmem.replica import cache
    from agentmem.store import dirwatch

    checkout = tmp_path / "app"
    checkout.mkdir()
    m = machines("laptop", {checkout: "app"})
    _, saved, _ = m.json("save", input="a note about the deploy script", cwd=checkout)
    fine = dirwatch.filesystem_type(str(tmp_path)) in dirwatch.FINE_TYPES
    for _ in range(2):  # the store's folder settled, then a search keeps its settled signature
        time.sleep(dirwatch.granule() + 0.05 if fine else dirwatch.RACY_SECONDS + 0.2)
        assert m.json("search", "deploy", cwd=checkout)[1]["stale"] is False
    state = os.path.join(cache.project_dir(m.home, config.load(m.home).store, "app"), "state.json")
    probe = (
        "import sys, io, contextlib\n"
        "from agentmem.launch import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    status = main(sys.argv[1:])\n"
        f"print(status, sorted(m for m in {ONLY_FOR_A_CHANGE_OR_A_TEAM + NOT_FOR_A_FOLDER_STORE_UNCHANGED + NOT_PER_TURN!r}"
        " if m in sys.modules))\n"
    )
    for args, unchanged in ((["search", "deploy", "script"], True), (["read", saved["id"]], True),
                            (["save", "--text", "another note about the deploy script"], False)):
        proc = subprocess.run([sys.executable, "-S", "-c", probe, *args], capture_output=True, text=True,
                              cwd=checkout, env=m.env | {"PYTHONPATH": str(REPO)})
        status, _, imported = proc.stdout.split("\n")[-2].partition(" ")
        assert status == "0", (args, proc.stdout, proc.stderr)
        allowed = () if unchanged else A_SAVE_WRITES + NOT_FOR_A_FOLDER_STORE_UNCHANGED
        assert [i for i in ast.literal_eval(imported) if i not in allowed] == [], args
        if unchanged:  # the path measured: the store asked, and nothing new
            with open(state, encoding="utf-8") as fh:
                assert json.load(fh)["how"] == "unchanged (one stat)", args
