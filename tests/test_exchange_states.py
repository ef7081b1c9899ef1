"""An export carries the notes' states (retract, pin, unpin and purge records); an import applies them;
nothing purged ever comes back (issue U, item 4)."""

from __future__ import annotations

import json

from agentmem import errors
from tests.fixtures_core import laptop, machines, make_machine, store_dir  # noqa: F401


def _save(m, title, text):
    status, out, err = m.json("save", "--title", title, "--text", text, cwd=m.checkout)
    assert status == 0, (out, err)
    return out["id"]


def _run_ok(m, *args):
    status, out, err = m.json(*args, cwd=m.checkout)
    assert status == 0, (args, out, err)
    return out


def _imported(m, *args):
    """An import's JSON; it exits with the attention status exactly when it refused an item."""
    status, out, err = m.json("import", *args, cwd=m.checkout)
    assert status == (errors.EXIT_ATTENTION if out["counts"]["refused"] else 0), (args, out, err)
    return out


# INV purged-stays-gone
def test_importing_an_older_export_after_a_purge_does_not_bring_the_purged_note_back(laptop, tmp_path):
    keep = _save(laptop, "keep", "the build uses the lockfile hash")
    leaked = _save(laptop, "leaked", "the customer's home address is 1 Main Street")
    older = tmp_path / "older-export"
    _run_ok(laptop, "export", older)
    _run_ok(laptop, "purge", leaked, "--yes")
    notes = tmp_path / "shared-store" / "projects" / "app" / "notes"
    assert not (notes / f"{leaked}.md").exists()
    for extra in ([], ["--apply"]):
        out = _imported(laptop, "--from", "agentmem", older, *extra)
        by_id = {i["id"]: i for i in out["items"]}
        assert by_id[keep]["action"] == "present"
        assert by_id[leaked]["action"] == "refused" and "purged" in by_id[leaked]["reason"]
    assert not (notes / f"{leaked}.md").exists()
    status, _, err = laptop.run("read", leaked, cwd=laptop.checkout)
    assert status != 0 and "purged" in err


def test_an_export_import_round_trip_keeps_retract_pin_and_purge(laptop, tmp_path):  # INV purged-stays-gone
    wrong = _save(laptop, "wrong", "the cache key ignores the lockfile")
    pinned = _save(laptop, "pinned", "always run the linter before pushing")
    unpinned = _save(laptop, "unpinned", "the staging host is staging-3")
    gone = _save(laptop, "gone", "a phone number that must not be kept")
    older = tmp_path / "older-export"
    _run_ok(laptop, "export", older)  # before any record: it still holds `gone`
    _run_ok(laptop, "retract", wrong, "--reason", "the key includes the lockfile hash")
    _run_ok(laptop, "pin", pinned)
    _run_ok(laptop, "pin", unpinned)
    _run_ok(laptop, "unpin", unpinned)
    _run_ok(laptop, "purge", gone, "--yes")
    dest = tmp_path / "export"
    assert _run_ok(laptop, "export", dest)["records"] == 5
    manifest = json.loads((dest / "manifest.json").read_text())
    kinds = sorted((r["kind"], r["note"]) for r in manifest["records"])
    assert kinds == sorted([("retract", wrong), ("pin", pinned), ("pin", unpinned), ("unpin", unpinned),
                            ("purge", gone)])
    assert {n["id"] for n in manifest["notes"]} == {wrong, pinned, unpinned}
    index = (dest / "app" / "index.md").read_text()
    assert "retracted" in index and "pinned" in index

    other_store = tmp_path / "other-store"
    other_store.mkdir()
    desk = make_machine(tmp_path, "desk", other_store, {laptop.checkout: "app"})
    desk.checkout = laptop.checkout
    dry = _imported(desk, "--from", "agentmem", dest)
    assert dry["counts"] == {"save": 8, "present": 0, "refused": 0}
    assert not (other_store / "projects").exists()  # a dry run saves nothing
    applied = _imported(desk, "--from", "agentmem", dest, "--apply")
    assert applied["counts"] == {"save": 8, "present": 0, "refused": 0}
    src = tmp_path / "shared-store" / "projects" / "app" / "notes"
    dst = other_store / "projects" / "app" / "notes"
    assert sorted(p.name for p in dst.glob("*.json")) == sorted(p.name for p in src.glob("*.json"))
    for record in src.glob("*.json"):
        assert (dst / record.name).read_bytes() == record.read_bytes()

    read = _run_ok(desk, "read", wrong)
    assert read["retracted"]["reason"] == "the key includes the lockfile hash"
    assert _run_ok(desk, "read", pinned)["pinned"] is True
    assert _run_ok(desk, "read", unpinned)["pinned"] is False
    found = _run_ok(desk, "search", "lockfile")
    assert wrong not in [r["id"] for r in found["results"]]
    status, _, err = desk.run("read", gone, cwd=desk.checkout)
    assert status != 0 and "purged" in err

    again = _imported(desk, "--from", "agentmem", dest, "--apply")
    assert again["counts"] == {"save": 0, "present": 8, "refused": 0} and again["saved"] == []
    # The export from before the records, into the store that now holds them: the purged note stays gone.
    late = _imported(desk, "--from", "agentmem", older, "--apply")
    by_id = {i["id"]: i for i in late["items"]}
    assert by_id[gone]["action"] == "refused" and "purged" in by_id[gone]["reason"]
    assert not (dst / f"{gone}.md").exists()


# INV purged-stays-gone
def test_a_purge_record_in_an_export_purges_the_note_from_a_store_that_still_holds_it(laptop, tmp_path):
    gone = _save(laptop, "gone", "a phone number that must not be kept")
    other_store = tmp_path / "other-store"
    other_store.mkdir()
    desk = make_machine(tmp_path, "desk", other_store, {laptop.checkout: "app"})
    desk.checkout = laptop.checkout
    first = tmp_path / "first"
    _run_ok(laptop, "export", first)
    _imported(desk, "--from", "agentmem", first, "--apply")
    dst = other_store / "projects" / "app" / "notes"
    assert (dst / f"{gone}.md").exists()
    _run_ok(laptop, "purge", gone, "--yes")
    second = tmp_path / "second"
    _run_ok(laptop, "export", second)
    out = _imported(desk, "--from", "agentmem", second, "--apply")
    assert [i["action"] for i in out["items"]] == ["save"] and out["items"][0]["kind"] == "purge"
    assert not (dst / f"{gone}.md").exists()
    status, _, err = desk.run("read", gone, cwd=desk.checkout)
    assert status != 0 and "purged" in err


# INV purged-stays-gone
def test_a_purged_memory_from_another_tool_is_not_imported_again_under_a_new_id(laptop):
    bank = laptop.checkout / "memory-bank"
    bank.mkdir()
    (bank / "home.md").write_text("# Customer\nThe customer's home address is 1 Main Street.\n")
    (bank / "tools.md").write_text("# Tools\nUse pnpm.\n")
    saved = _imported(laptop, "--from", "cline", "--apply")
    (leaked,) = [i["id"] for i in saved["items"] if "home" in i["source"]]
    _run_ok(laptop, "purge", leaked, "--yes")
    record = next((laptop.user_home.parent.parent / "shared-store" / "projects" / "app" / "notes")
                  .glob("*.purge.json"))
    assert "Main Street" not in record.read_text()  # the record names the text by a digest, holds none of it
    (bank / "home.md").write_text("# Customer\n\nthe customer's HOME address   is 1 Main Street.\n")  # reflowed
    for extra in ([], ["--apply"]):
        out = _imported(laptop, "--from", "cline", *extra)
        by_source = {i["source"].rpartition("/")[2]: i for i in out["items"]}
        assert by_source["home.md"]["action"] == "refused" and "purged" in by_source["home.md"]["reason"], out
        assert by_source["tools.md"]["action"] == "present"
    status, out, _ = laptop.json("search", "Main Street", cwd=laptop.checkout)
    assert status == 0 and out["results"] == []
