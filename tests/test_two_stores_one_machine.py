"""One machine folder, two stores holding the same project (issue Y, item 2; what a team store beside the
personal one needs): everything this machine derives from a store is keyed by that store, so each store's
search finds its own notes only, a purge in one leaves the other's notes and pending uploads alone, and a
pending upload goes to the store it was saved for, whatever the config names now."""

from __future__ import annotations

import os
from pathlib import Path

from agentmem import paths
from agentmem.store.base import StoreDescription
from tests.fixtures_core import make_machine, new_folder_store


class TwoStores:
    """A laptop mapping `app`, and two folder stores it can be pointed at by rewriting its config."""

    def __init__(self, tmp_path: Path):
        self.stores = {name: tmp_path / f"store-{name}" for name in ("a", "b")}
        for path in self.stores.values():
            new_folder_store(path)
        self.cwd = tmp_path / "app"
        self.cwd.mkdir()
        self.m = make_machine(tmp_path, "laptop", self.stores["a"], {self.cwd: "app"})
        self.config = (self.m.home / "config.toml").read_text()

    def use(self, name: str) -> None:
        """Point the config at store `name` (everything else in it as it was)."""
        self.m.write_config(self.config.replace(str(self.stores["a"]), str(self.stores[name])))

    def json(self, *args: str, stdin: str = "") -> tuple[int, dict]:
        status, out, _ = self.m.json(*args, input=stdin, cwd=self.cwd)
        return status, out

    def save(self, text: str) -> dict:
        return self.json("save", "--title", text, stdin=text)[1]

    def found(self, query: str) -> dict[str, bool]:
        """The search's results: note ID -> whether it is this machine's pending copy."""
        status, out = self.json("search", query)
        assert status == 0, out
        return {r["id"]: r["pending"] for r in out["results"]}

    def cache(self, name: str) -> Path:
        return Path(paths.project_cache(self.m.home, StoreDescription("folder", str(self.stores[name])).key, "app"))

    def stored(self, name: str, note_id: str) -> bool:
        return (self.stores[name] / "projects" / "app" / "notes" / f"{note_id}.md").exists()

    def unplug(self, name: str) -> Path:
        """The store's folder moved away (an unmounted drive): uploads to it stay pending."""
        away = self.stores[name].with_name(f"away-{name}")
        os.rename(self.stores[name], away)
        return away

    def plug(self, name: str, away: Path) -> None:
        os.rename(away, self.stores[name])


def test_each_store_s_search_finds_only_its_own_notes_from_its_own_cache_and_index(tmp_path):
    two = TwoStores(tmp_path)
    a = two.save("alpha zebra crossing notes")["id"]
    two.use("b")
    b = two.save("beta zebra crossing notes")["id"]
    assert two.found("zebra") == {b: False}
    two.use("a")
    assert two.found("zebra") == {a: False}
    for name, mine, other in (("a", a, b), ("b", b, a)):
        assert (two.cache(name) / "notes" / f"{mine}.md").exists()
        assert not (two.cache(name) / "notes" / f"{other}.md").exists()
        assert (two.cache(name) / "index" / "ranked.sqlite").exists()
    assert two.cache("a") != two.cache("b")


def test_a_note_waiting_for_one_store_is_not_shown_by_the_other_store_s_search(tmp_path):
    two = TwoStores(tmp_path)
    a = two.save("alpha zebra crossing notes")["id"]
    two.use("b")
    away = two.unplug("b")
    waiting = two.save("beta zebra crossing notes")
    assert waiting["status"] == "pending", waiting
    assert two.found("zebra") == {waiting["id"]: True}  # its own store's search shows it, as pending
    two.use("a")
    assert two.found("zebra") == {a: False}  # not the other store's
    two.plug("b", away)


def test_a_pending_upload_goes_to_the_store_it_was_saved_for_when_the_config_names_another(tmp_path):
    # INV same-bytes-retry: the entry's own destination, whatever the config says now
    two = TwoStores(tmp_path)
    away = two.unplug("a")
    saved = two.save("alpha note saved while its drive was away")
    assert saved["status"] == "pending", saved
    two.plug("a", away)
    two.use("b")
    status, out = two.json("save", "--retry", saved["id"])
    assert status == 0 and out["status"] == "saved", out
    assert two.stored("a", saved["id"]) and not two.stored("b", saved["id"])
    assert (two.cache("a") / "notes" / f"{saved['id']}.md").exists()
    assert not (two.cache("b") / "notes" / f"{saved['id']}.md").exists()
    assert two.found("alpha") == {}  # store b's search: not its note
    two.use("a")
    assert list(two.found("alpha")) == [saved["id"]]


def test_a_purge_in_one_store_leaves_the_other_store_s_copy_and_its_pending_upload_alone(tmp_path):
    # The same note in both stores (an export of one imported into the other keeps its ID): purging it
    # from store a forgets a's copy on this machine, never b's, nor b's upload still waiting here.
    two = TwoStores(tmp_path)
    a = two.save("shared zebra note kept in both stores")["id"]
    two.use("b")
    kept = two.save("a note only store b holds, about zebras")["id"]
    two.use("a")
    status, out = two.json("export", str(tmp_path / "exported"))
    assert status == 0, out
    two.use("b")
    away = two.unplug("b")
    status, out = two.json("import", "--from", "agentmem", str(tmp_path / "exported"), "--apply")
    assert [(s["id"], s["status"], s["store"]["location"]) for s in out["saved"]] == [
        (a, "pending", str(two.stores["b"]))], out  # waiting for store b, by the same ID
    two.use("a")
    status, out = two.json("purge", a, "--yes")
    assert status == 0 and out["status"] == "purged", out
    assert not two.stored("a", a)
    assert os.path.isdir(os.path.join(paths.pending_dir(two.m.home), a))  # b's upload of it still waits
    two.use("b")
    two.plug("b", away)
    status, out = two.json("save", "--retry", a)
    assert status == 0 and out["status"] == "saved", out
    assert two.stored("b", a)
    assert set(two.found("zebra")) == {a, kept}
    status, out = two.json("retract", kept, "--reason", "out of date")
    assert status == 0, out
    two.use("a")
    assert two.found("zebra") == {}  # neither b's retraction nor its notes reach a
    assert (two.cache("b") / "notes" / f"{kept}.md").exists() and not (two.cache("a") / "notes" / f"{kept}.md").exists()
