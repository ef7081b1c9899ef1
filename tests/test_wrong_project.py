"""Note IDs are unique across projects: a note asked for under the wrong project is found and its project
named (with the command that works there), never called missing; and `save --corrects` names a note of its
project that exists, or nothing is written."""

from __future__ import annotations

import subprocess

import pytest

from agentmem.note import document
from tests.fixtures_core import make_machine, new_folder_store


@pytest.fixture
def world(tmp_path):
    """Machine A maps `app` and `lib`; machine B maps only `app`. One note of `lib`, saved by A."""
    store = tmp_path / "store"
    new_folder_store(store)
    app, lib = tmp_path / "app", tmp_path / "lib"
    app.mkdir()
    lib.mkdir()
    a = make_machine(tmp_path, "a", store, {app: "app", lib: "lib"})
    b = make_machine(tmp_path, "b", store, {app: "app"})
    status, out, err = a.json("save", "--title", "lib build", "--text", "The lib builds with meson.", cwd=lib)
    assert status == 0, err
    return a, b, app, store, out["id"]


@pytest.mark.parametrize("command", [["read"], ["retract", "--reason", "wrong"], ["pin"], ["purge", "--yes"]])
def test_an_id_of_another_project_is_named_with_its_project_and_the_command_that_works_there(world, command):
    a, _, app, store, note_id = world
    verb, *rest = command
    status, out, err = a.json(verb, note_id, *rest, cwd=app)
    assert status == 4 and out["error"] == "not-found", out
    assert f"note {note_id} is not in project app: it is a note of project lib" in out["message"]
    assert "not in the store" not in out["message"]
    named = out["message"]  # the next step rides in the message, in parentheses
    assert f"{verb} {note_id} --project lib" in named
    assert (store / "projects" / "lib" / "notes" / f"{note_id}.md").exists()  # nothing was done to it
    if verb == "read":  # the command it names runs as printed  # INV printed-commands-run
        line = named.split("`")[1]
        done = subprocess.run(["bash", "-c", line], cwd=app, env=a.env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "The lib builds with meson." in done.stdout, done.stderr


def test_an_id_no_project_here_holds_says_where_it_looked_and_how_to_name_a_project(world):
    a, _, app, _, _ = world
    missing = "20261130T000000000Z-aaaaaaaa"
    status, out, _ = a.json("read", missing, cwd=app)
    assert status == 4 and out["message"].startswith(f"no note {missing} in project app, nor in the other projects "
                                                     "this machine knows (lib) (")
    assert f"read {missing} --project PROJECT`" in out["message"]


def test_a_machine_that_never_saw_the_project_finds_the_note_once_it_maps_the_project(world, tmp_path):
    _, b, app, _, note_id = world
    status, out, _ = b.json("read", note_id, cwd=app)
    assert status == 4 and out["message"].startswith(f"no note {note_id} in project app (")
    assert "map DIRECTORY PROJECT" in out["message"] and f"read {note_id} --project PROJECT" in out["message"]
    assert b.run("map", str(tmp_path / "lib"), "lib")[0] == 0
    status, out, _ = b.json("read", note_id, "--project", "lib", cwd=app)
    assert status == 0 and out["body"].startswith("The lib builds")


def test_save_corrects_refuses_an_id_that_exists_nowhere_or_in_another_project_writing_nothing(world):
    a, b, app, store, lib_note = world
    before = sorted(p.name for p in store.rglob("*.md"))
    for corrects, said in (("20261130T000000000Z-aaaaaaaa", "no note with that ID in project app"),
                           ("typo", "no note with that ID in project app"),
                           (lib_note, "that is a note of project lib, not app")):
        status, out, err = a.json("save", "--corrects", corrects, "--text", "The build uses ninja.", cwd=app)
        assert status == 2 and out["error"] == "invalid-input" and said in out["message"], out
        assert "nothing was written" in out["message"]
    status, out, err = a.run("save", "--corrects", "not an id", "--text", "x", cwd=app)
    assert status == 2 and err.count("\n") == 1 and "invalid note ID" in err
    assert sorted(p.name for p in store.rglob("*.md")) == before
    assert not any((a.home / "pending").iterdir())


def test_save_corrects_accepts_a_note_only_the_store_holds_and_one_pending_here(world, tmp_path):
    a, b, app, store, _ = world
    status, out, _ = a.json("save", "--title", "app build", "--text", "The app builds with make.", cwd=app)
    original = out["id"]
    status, out, err = b.json("save", "--corrects", original, "--text", "The app builds with ninja.", cwd=app)
    assert status == 0 and out["status"] == "saved", err  # B never fetched it: the store holds it
    assert document.parse((store / out["path"]).read_bytes()).meta["corrects"] == original
