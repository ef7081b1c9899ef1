"""Retract, pin, purge, review dates and the review queue on one machine (folder store), through the real CLI
and the library: what each does, what it refuses, and that the commands it prints run as printed."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest

from agentmem.note import document, ids, records
from tests.test_secrets_cli import fake


def _save(m, text: str, title: str, *extra: str) -> str:
    status, out, err = m.json("save", "--title", title, "--text", text, *extra, cwd=m.checkout)
    assert status == 0, (out, err)
    return out["id"]


def _ids(out: dict) -> list[str]:
    return [r["id"] for r in out["results"]]


def _store_files(store_dir) -> list[str]:
    folder = store_dir / "projects" / "app" / "notes"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


# -- records ----------------------------------------------------------------------------------------

def _record(kind: str, note: str, rid: str) -> records.Record:
    return records.Record(id=rid, kind=kind, note=note, project="app", agent="codex@a",
                          created="2026-12-01T10:00:00.000Z")


def test_the_latest_pin_or_unpin_wins_and_the_earliest_retraction_stays_whatever_order_records_arrive_in():
    note = "20261201T000000000Z-aaaaaaaa"
    pins = [_record("pin", note, "20261201T000000001Z-aaaaaaaa"), _record("unpin", note, "20261201T000000002Z-aaaaaaaa"),
            _record("pin", note, "20261201T000000003Z-aaaaaaaa")]
    gone = [_record("retract", note, "20261201T000000005Z-bbbbbbbb"), _record("retract", note, "20261201T000000004Z-bbbbbbbb")]
    for order in (pins + gone, list(reversed(pins + gone))):
        states = records.States()
        for record in order:
            states.add(record)
        assert states.pins[note]["record"] == "20261201T000000003Z-aaaaaaaa"
        assert states.retracted[note]["record"] == "20261201T000000004Z-bbbbbbbb"
        assert states.pinned() == {}  # a retracted note is never pinned
    unpinned = records.States()
    for record in pins[:2]:
        unpinned.add(record)
    assert unpinned.pinned() == {}


def test_only_records_agentmem_could_have_written_are_read():
    good = _record("retract", "20261201T000000000Z-aaaaaaaa", "20261201T000000001Z-aaaaaaaa")
    data = good.render()
    assert records.parse(data, good.file).note == good.note
    assert records.parse(data, "20261201T000000009Z-aaaaaaaa.retract.json") is None  # another object's name
    assert records.parse(data.replace(b"codex@a", b"codex a\\n"), None) is None
    assert records.parse(b"{}" + b" " * 5000) is None and records.parse(b"not json") is None
    assert ids.NOTE_FILE.match(good.file) is None and ids.RECORD_FILE.match(good.file)


# -- retract --------------------------------------------------------------------------------------

def test_a_retraction_needs_a_reason_and_one_holding_a_credential_is_refused_with_nothing_written(laptop, store_dir):
    # INV no-credentials
    m = laptop
    note_id = _save(m, "A finding.", "finding")
    status, _, err = m.run("retract", note_id, cwd=m.checkout)
    assert status == 2 and err.count("\n") == 1 and "--reason" in err
    token = fake("ghp_", 36)
    status, out, err = m.json("retract", note_id, "--reason", f"it leaked {token}", cwd=m.checkout)
    assert status != 0 and out["error"] == "secret-found" and token not in out["message"] + err
    assert _store_files(store_dir) == [f"{note_id}.md"]
    assert not any((m.home / "pending").iterdir())
    status, out, _ = m.json("retract", "20261130T000000000Z-aaaaaaaa", "--reason", "x", cwd=m.checkout)
    assert out["error"] == "not-found"


def test_a_retraction_made_offline_hides_the_note_here_at_once_and_its_retry_sends_the_same_record(offline_machine):
    # INV nothing-lost, INV same-bytes-retry: a record waits in pending/ like a note
    m = offline_machine
    m.store.mkdir(parents=True)
    from agentmem.store.folder import create_store

    create_store(str(m.store))
    note_id = _save(m, "The build uses make.", "build tool")
    m.store.rename(m.store.parent / "away")
    status, out, _ = m.json("retract", note_id, "--reason", "it uses ninja now", cwd=m.checkout)
    assert status == 10 and out["status"] == "pending" and out["reason"]["error"] == "offline"
    record_id = out["record"]["record"]
    status, found, _ = m.json("search", "build", "--offline", cwd=m.checkout)
    assert _ids(found) == []  # this machine's pending record already counts
    (m.store.parent / "away").rename(m.store)
    retry = subprocess.run(["bash", "-c", out["retry"]], cwd=m.checkout, env=m.env, capture_output=True, text=True)
    assert retry.returncode == 0, retry.stderr  # INV printed-commands-run
    assert (m.store / "projects" / "app" / "notes" / f"{record_id}.retract.json").is_file()


# -- review dates ---------------------------------------------------------------------------------------

def test_a_review_date_is_kept_in_the_frontmatter_and_a_past_one_marks_the_note_due_in_search_and_read(laptop):
    m = laptop
    due = _save(m, "The cache lives in /var/cache/app.", "cache place", "--review-by", "2020-01-01")
    later = _save(m, "The cache is cleared nightly.", "cache clearing", "--review-by", "2999-01-01")
    status, out, _ = m.json("search", "cache", cwd=m.checkout)
    marks = {r["id"]: r.get("review_due", False) for r in out["results"]}
    assert marks == {due: True, later: False}
    status, read, _ = m.json("read", due, cwd=m.checkout)
    assert read["meta"]["review_by"] == "2020-01-01" and read["review_due"] is True
    status, text, _ = m.run("read", due, cwd=m.checkout)
    assert text.startswith("REVIEW DUE since 2020-01-01")
    status, _, err = m.run("save", "--review-by", "2026-02-30", "--text", "x", cwd=m.checkout)
    assert status == 2 and "invalid review date" in err and err.count("\n") == 1


def test_review_after_gives_notes_without_a_date_a_default_and_old_notes_still_parse(laptop):
    m = laptop
    old = document.parse(b"---\nid: \"x\"\ntitle: \"t\"\ncreated: \"2026-01-01T00:00:00.000Z\"\n---\n\nbody\n")
    assert document.review_date(old.meta) is None and document.review_date(old.meta, 30) == "2026-01-31"
    note_id = _save(m, "Plain note.", "plain")
    assert m.json("read", note_id, cwd=m.checkout)[1]["review_due"] is False
    m.write_config((m.home / "config.toml").read_text() + "\n[memory]\nreview_after = 0\n")
    status, read, _ = m.json("read", note_id, cwd=m.checkout)
    assert read["review_due"] is True and read["review_by"] == read["meta"]["created"][:10]


def test_a_note_due_for_review_ranks_below_an_otherwise_equal_match_that_is_not_due(machines, tmp_path):
    checkout = tmp_path / "app"
    checkout.mkdir()
    plain, dated = machines("plain", {checkout: "app"}), machines("dated", {checkout: "app"})
    first = _save_in(plain, checkout, "The gateway retries three times.")
    second = _save_in(plain, checkout, "The gateway retries three times.", "--review-by", "2020-01-01")
    status, out, _ = plain.json("search", "gateway retries", cwd=checkout)
    assert _ids(out) == [first, second]  # equal scores would put the newer first: the demotion decides
    assert out["results"][0]["score"] > out["results"][1]["score"]
    third = _save_in(dated, checkout, "The gateway retries three times.")
    status, out, _ = dated.json("search", "gateway retries", cwd=checkout)
    assert _ids(out) == [third, first, second]  # among equals not due, the newest first, as before


def _save_in(m, cwd, text: str, *extra: str) -> str:
    status, out, err = m.json("save", "--title", "gateway", "--text", text, *extra, cwd=cwd)
    assert status == 0, err
    return out["id"]


# -- the review queue -------------------------------------------------------------------------------------

def test_the_review_queue_lists_each_kind_in_order_deterministically_with_commands_that_run_as_printed(laptop):
    # INV printed-commands-run
    m = laptop
    body = "Deploys go through the blue-green switch on the load balancer, after the smoke tests pass."
    original = _save(m, body, "deploy procedure")
    duplicate = _save(m, body.replace("after", "once"), "how we deploy")
    fixed = _save(m, "The queue holds 100 jobs.", "queue size")
    _save(m, "The queue holds 200 jobs.", "queue size v2", "--corrects", fixed)
    newest = _save(m, "The queue holds 500 jobs.", "queue size v3", "--corrects", fixed)
    due = _save(m, "Tokens expire after a day.", "token lifetime", "--review-by", "2020-01-01")
    corrected_due = _save(m, "Logs are kept a week.", "log retention", "--review-by", "2020-01-01")
    _save(m, "Logs are kept a month.", "log retention now", "--corrects", corrected_due)
    wrong = _save(m, "The CDN is Fastly.", "cdn")
    m.json("retract", wrong, "--reason", "it is CloudFront", cwd=m.checkout)
    status, out, _ = m.json("review", cwd=m.checkout)
    assert status == 0
    kinds = [(i["kind"], i["notes"]) for i in out["items"]]
    assert kinds[0] == ("review-due", [due])  # the corrected note is not due: its correction superseded it
    assert ("near-duplicate", [original, duplicate]) in kinds
    assert [k for k, _ in kinds] == sorted((k for k, _ in kinds), key=["review-due", "near-duplicate",
                                                                     "corrected-repeatedly", "retracted"].index)
    [again] = [i for i in out["items"] if i["kind"] == "corrected-repeatedly"]
    assert again["notes"][0] == fixed and newest in again["notes"]
    assert kinds[-1] == ("retracted", [wrong])
    assert m.json("review", cwd=m.checkout)[1]["items"] == out["items"]  # deterministic
    [dup] = [i for i in out["items"] if i["kind"] == "near-duplicate"]
    line = dup["commands"][0]["command"]
    assert line.endswith(f"retract {duplicate} --project app --reason 'duplicate of {original}'")
    done = subprocess.run(["bash", "-c", line], cwd=m.user_home, env=m.env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    after = m.json("review", cwd=m.checkout)[1]["items"]
    assert ("near-duplicate", [original, duplicate]) not in [(i["kind"], i["notes"]) for i in after]
    status, text, _ = m.run("review", cwd=m.checkout)
    assert "<<<BEGIN RECALLED MEMORY" in text and "note titles" in text  # titles are note content: framed


# -- pins ---------------------------------------------------------------------------------------------

def test_over_the_pin_budget_the_newest_pins_win_and_the_reminder_names_what_was_left_out(laptop):
    m = laptop
    m.write_config((m.home / "config.toml").read_text() + "\n[memory]\npin_budget = 120\n")
    old = _save(m, "x" * 60, "old pin")
    new = _save(m, "y" * 60, "new pin")
    for note_id in (old, new):
        assert m.json("pin", note_id, cwd=m.checkout)[0] == 0
    status, text, _ = m.run("hook", "reminder", "--runtime", "codex", cwd=m.checkout)
    assert f"[{new}] new pin" in text and f"[{old}]" not in text.split("Pinned but left out")[0]
    assert f"Pinned but left out: {old} (over the pin budget (120 characters))" in text
    assert text.rstrip().endswith(f"read {old} --project app")
    status, prompt, _ = m.run("hook", "reminder", "--runtime", "codex", "--event", "prompt", cwd=m.checkout)
    assert "Pinned" not in prompt  # only at the start of a session
    status, elsewhere, _ = m.run("hook", "reminder", "--runtime", "codex", cwd=m.user_home)
    assert status == 0 and "Pinned" not in elsewhere  # no project here: no pins, no error


# -- purge ----------------------------------------------------------------------------------------------

def test_purge_without_a_terminal_needs_yes_and_refuses_in_one_line_doing_nothing(laptop, store_dir):
    m = laptop
    note_id = _save(m, "Something.", "something")
    status, out, err = m.run("purge", note_id, cwd=m.checkout)
    assert status == 2 and out == "" and err.count("\n") == 1 and "--yes" in err and "nothing was done" in err
    assert _store_files(store_dir) == [f"{note_id}.md"]


def test_purge_without_a_terminal_names_the_command_that_purges_as_next_step_data_which_runs_as_printed(
        laptop, store_dir):
    m = laptop
    note_id = _save(m, "Something to purge.", "something")
    status, out, err = m.json("purge", note_id, cwd=m.checkout)
    argv = ["purge", note_id, "--project", "app", "--yes"]
    assert status == 2 and out["error"] == "invalid-input" and [s.get("argv") for s in out["next"]] == [argv]
    line = out["next"][0]["command"]
    assert line in out["next"][0]["text"] and out["message"].count(line) == 1
    assert _store_files(store_dir) == [f"{note_id}.md"]
    done = subprocess.run(["bash", "-c", line], cwd=m.checkout, env=m.env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)  # INV printed-commands-run
    assert done.returncode == 0, done.stderr
    assert f"{note_id}.md" not in _store_files(store_dir)


@pytest.mark.parametrize("answer,purged", [(b"no\n", False), (b"yes\n", True)])
def test_purge_on_a_terminal_asks_and_only_yes_purges(laptop, store_dir, answer, purged):
    m = laptop
    note_id = _save(m, "Something else.", "something")
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "agentmem", "purge", note_id], cwd=m.checkout, env=m.env,
                            stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(slave)
    os.write(master, answer)
    out, err = proc.communicate(timeout=60)
    os.close(master)
    assert b"Type 'yes' to purge" in err
    assert (proc.returncode == 0) is purged and (f"{note_id}.md" in _store_files(store_dir)) is not purged


def test_the_purge_question_names_the_notes_title_and_says_the_original_is_deleted_for_good(machines, tmp_path):
    # A machine that never fetched the note reads its title from the store for the question, caching nothing
    checkout = tmp_path / "app"
    checkout.mkdir()
    a, b = machines("a", {checkout: "app"}), machines("b", {checkout: "app"})
    status, out, err = a.json("save", "--title", "Prod deploy key rotation", "--text", "The key is bilbyxyz.",
                              cwd=checkout)
    note_id = out["id"]
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "agentmem", "purge", note_id], cwd=checkout, env=b.env,
                            stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(slave)
    os.write(master, b"no\n")
    out, err = proc.communicate(timeout=60)
    os.close(master)
    question = err.decode()
    assert f'Purge note {note_id} of project app, titled "Prod deploy key rotation"?' in question
    assert "The original is deleted from the shared store for good, with no copy kept anywhere" in question
    assert proc.returncode == 2 and "not confirmed; nothing was done" in question
    assert not any(b"bilbyxyz" in p.read_bytes() for p in b.home.rglob("*") if p.is_file())


def test_a_pending_note_purged_leaves_the_pending_folder_at_once(offline_machine):
    m = offline_machine
    from tests.fixtures_core import save_pending

    note_id = save_pending(m, "The key is dingoxyz.")
    status, out, _ = m.json("purge", note_id, "--yes", cwd=m.checkout)
    assert status == 10 and out["removed_here"] == ["pending"] and out["status"] == "pending"
    assert not (m.home / "pending" / note_id).exists()
    assert not any(b"dingoxyz" in p.read_bytes() for p in m.home.rglob("*") if p.is_file())


def test_a_purged_note_put_back_in_the_store_is_never_downloaded_again(machines, tmp_path, store_dir):
    # INV purged-gone: a listing that lags, or a stale copy written back: the purge record keeps the ID out
    checkout = tmp_path / "app"
    checkout.mkdir()
    a, b = machines("a", {checkout: "app"}), machines("b", {checkout: "app"})
    a.checkout = b.checkout = checkout
    note_id = _save(a, "The secret is platypusxyz.", "oops")
    path = store_dir / "projects" / "app" / "notes" / f"{note_id}.md"
    data = path.read_bytes()
    assert a.json("purge", note_id, "--yes", cwd=checkout)[0] == 0
    path.write_bytes(data)  # back in the store
    status, out, _ = b.json("search", "platypusxyz", cwd=checkout)
    assert out["results"] == [] and not any(b"platypusxyz" in p.read_bytes() for p in b.home.rglob("*") if p.is_file())
    status, out, _ = b.json("read", note_id, cwd=checkout)
    assert out["error"] == "not-found" and "purged" in out["message"]


def _project_with_notes(tmp_path, count: int, unique: str) -> tuple[str, str]:
    """A project cache folder holding `count` notes, one of them holding the word `unique`; (pdir, its ID)."""
    pdir = tmp_path / "project"
    (pdir / "notes").mkdir(parents=True)
    target = ""
    for i in range(count):
        text = f"note {i} about the {unique} service" if i == count // 2 else f"note {i} about routine work {i % 7}"
        note = document.build(body=text, title=f"note {i}", kind="note", project="app", agent="a")
        (pdir / "notes" / f"{note.id}.md").write_bytes(note.render())
        target = note.id if i == count // 2 else target
    return str(pdir), target


@pytest.mark.parametrize("scrub", [False, True])
def test_a_purge_scrubs_the_notes_words_from_the_index_file_even_where_sqlite_keeps_freed_bytes(
        tmp_path, monkeypatch, scrub):
    # INV purged-gone. Debian's SQLite zeroes freed cells by default; others (macOS, python.org builds) do not: force that
    from agentmem.search import index, ranked

    real = index._connect

    def keeps_freed_bytes(path):
        conn = real(path)
        conn.execute("PRAGMA secure_delete=OFF")
        return conn

    monkeypatch.setattr(index, "_connect", keeps_freed_bytes)
    pdir, target = _project_with_notes(tmp_path, 300, "echidnaword")
    assert [h.id for h in ranked.rank(pdir, "echidnaword")] == [target]
    sqlite_file = index.index_path(pdir)
    assert b"echidnaword" in open(sqlite_file, "rb").read()
    os.unlink(os.path.join(pdir, "notes", f"{target}.md"))
    ranked.update(pdir, [], [target], scrub=scrub)
    left = b"echidnaword" in open(sqlite_file, "rb").read()
    assert left is not scrub  # without the scrub a plain delete leaves the words in freed pages
    assert ranked.rank(pdir, "echidnaword") == [] and len(ranked.rank(pdir, "routine", limit=400)) == 299


def test_a_refresh_never_downloads_a_note_a_purge_record_names(tmp_path, store_dir):
    # INV purged-gone: a listing that lags behind the delete, or a stale copy written back: the ID stays out
    from agentmem.replica import cache
    from agentmem.store.base import StoreDescription
    from agentmem.store.folder import FolderStore, create_store

    create_store(str(store_dir))
    note = document.build(body="The secret is wallabyxyz.", title="oops", kind="note", project="app", agent="a")
    purge = records.build("purge", note.id, "app", "codex@a")
    store = FolderStore(store_dir)
    store.put(document.note_path("app", note.id), note.render())
    store.put(purge.path(), purge.render())
    asked: list[str] = []
    real_get = store.get

    def get(path, limit=None):
        asked.append(path)
        return real_get(path, limit) if limit is not None else real_get(path)

    store.get = get  # type: ignore[method-assign]
    status = cache.refresh(tmp_path / "machine", StoreDescription("folder", str(store_dir)), "app", store=store)
    assert status.stale is False and asked == [purge.path()]
    assert cache.cached_ids(tmp_path / "machine", StoreDescription("folder", str(store_dir)), "app") == []


@pytest.mark.slow  # the real encoder embeds the notes
def test_where_hybrid_vectors_exist_notes_alike_in_meaning_are_near_duplicates(laptop):
    from agentmem.search import encoder
    from tests.fixtures_core import missing_prerequisite

    if not encoder.available():
        missing_prerequisite("the hybrid extra (numpy and the MiniLM package) is not installed")
    m = laptop
    first = _save(m, "Deploys go through the blue-green switch on the load balancer, after the smoke tests pass.",
                  "deploy procedure")
    second = _save(m, "We deploy by flipping the blue-green switch on the load balancer once smoke tests are green.",
                   "how releases ship")
    _save(m, "The load balancer logs go to the central log store.", "balancer logs")

    def pairs() -> list:
        out = m.json("review", cwd=m.checkout)[1]
        return [(i["notes"], i["summary"]) for i in out["items"] if i["kind"] == "near-duplicate"]

    assert pairs() == []  # by words alone they differ too much
    assert m.json("search", "blue-green deploy", "--mode", "hybrid", cwd=m.checkout)[0] == 0  # makes the vectors
    [(found, why)] = pairs()
    assert found == [first, second] and "alike in meaning" in why


def test_a_note_this_machine_never_fetched_is_purged_without_being_downloaded(machines, tmp_path, store_dir):
    # INV purged-gone: the store is asked whether it holds the note, never for its bytes
    checkout = tmp_path / "app"
    checkout.mkdir()
    a, b = machines("a", {checkout: "app"}), machines("b", {checkout: "app"})
    note_id = _save_in(a, checkout, "The secret is numbatxyz.")
    status, out, _ = b.json("purge", note_id, "--yes", cwd=checkout)
    assert status == 0 and out["status"] == "purged" and out["removed_here"] == []
    assert not any(b"numbatxyz" in p.read_bytes() for p in b.home.rglob("*") if p.is_file())
    assert not (store_dir / "projects" / "app" / "notes" / f"{note_id}.md").exists()
    status, out, _ = b.json("purge", "20261130T000000000Z-aaaaaaaa", "--yes", cwd=checkout)
    assert status == 4 and out["error"] == "not-found"
