"""Author stamps (issue X, item 5): every note names the member who saved it (config `author`, else the
Hub user name of the token on a bucket store, kept after one ask, else the login name), and search, read,
the view and export show it."""

from __future__ import annotations

import json

from tests.fixtures_core import make_machine
from tests.fixtures_hub import BucketMachine
from tests.test_view import by_id, note_file, page_data


def team_member(tmp_path, name: str, *, author: str | None = None, login: str | None = None):
    """A member's machine: their own folder store, the team's shared folder, `src/app` mapped to `app`."""
    checkout = tmp_path / name / "src" / "app"
    checkout.mkdir(parents=True)
    (tmp_path / name / "own-store").mkdir()
    (tmp_path / "team-store").mkdir(exist_ok=True)
    m = make_machine(tmp_path, name, tmp_path / name / "own-store", {checkout: "app"}, agent=f"codex@{name}")
    text = (m.home / "config.toml").read_text()
    if author:
        text = f'author = "{author}"\n' + text
    text += f'\n[team]\nkind = "folder"\nlocation = "{tmp_path / "team-store"}"\n'
    m.write_config(text)
    m.env["LOGNAME"] = login or name  # the login name getpass reads first
    m.checkout = checkout
    return m


def _frontmatter(path) -> dict:
    meta = {}
    for line in path.read_text().split("---")[1].strip().splitlines():
        key, _, value = line.partition(": ")
        meta[key] = json.loads(value)
    return meta


def test_a_note_on_a_folder_store_names_the_login_name_as_its_author(laptop, store_dir):
    laptop.env["LOGNAME"] = "ada lovelace"  # a login name that breaks the name rule is made to fit it
    status, out, err = laptop.json("save", "--text", "# Cache\n\nthe key holds the lockfile hash", cwd=laptop.checkout)
    assert status == 0, err
    meta = _frontmatter(store_dir / "projects" / "app" / "notes" / f"{out['id']}.md")
    assert meta["author"] == "ada-lovelace" and meta["agent"] == "laptop"


def test_the_configured_author_wins_over_the_login_name(tmp_path):
    m = team_member(tmp_path, "ada", author="Ada.L", login="root")
    status, out, err = m.json("save", "--text", "deploys need the VPN", cwd=m.checkout)
    assert status == 0, err
    assert _frontmatter(tmp_path / "ada" / "own-store" / "projects" / "app" / "notes" / f"{out['id']}.md")[
        "author"] == "Ada.L"


def test_search_read_view_and_export_show_the_author(tmp_path):
    m = team_member(tmp_path, "ada")
    status, out, err = m.json("save", "--text", "# Flaky test\n\ntest_sync flakes under load", cwd=m.checkout)
    assert status == 0, err
    note_id = out["id"]
    status, found, _ = m.json("search", "flakes", cwd=m.checkout)
    assert found["results"][0]["author"] == "ada"
    status, text, _ = m.run("search", "flakes", cwd=m.checkout)
    assert f"- {note_id}" in text and "note by ada: Flaky test" in text
    status, text, _ = m.run("read", note_id, cwd=m.checkout)
    assert status == 0 and text.startswith(f"Note {note_id} by ada:\n")
    status, read, _ = m.json("read", note_id, cwd=m.checkout)
    assert read["meta"]["author"] == "ada"
    page = tmp_path / "view.html"
    status, _, err = m.run("view", "--output", page, cwd=m.checkout)
    assert status == 0, err
    data = page_data(page.read_bytes())
    details = note_file(page.parent / data["files"]["dir"] / "n0.js")[3]
    assert note_id in by_id(page) and details[0]["author"] == "ada"
    status, _, err = m.run("export", tmp_path / "export", cwd=m.checkout)
    assert status == 0, err
    index = (tmp_path / "export" / "app" / "index.md").read_text()
    assert f"({note_id}.md) - note, {out['id'][:4]}-" in index and index.rstrip().endswith(", by ada")


def test_a_machine_without_a_team_keeps_its_search_and_read_text_as_before(laptop):
    laptop.env["LOGNAME"] = "ada"
    status, out, _ = laptop.json("save", "--text", "# Flaky test\n\ntest_sync flakes", cwd=laptop.checkout)
    status, text, _ = laptop.run("search", "flakes", cwd=laptop.checkout)
    assert "note: Flaky test" in text and " by ada" not in text
    status, text, _ = laptop.run("read", out["id"], cwd=laptop.checkout)
    assert not text.startswith("Note ")
    status, found, _ = laptop.json("search", "flakes", cwd=laptop.checkout)
    assert found["results"][0]["author"] == "ada"  # JSON names it either way


def test_an_author_holding_a_credential_is_refused_never_redacted(tmp_path):  # INV no-credentials
    from tests.test_secrets_cli import fake

    secret = fake("ghp_", 36)
    m = team_member(tmp_path, "ada", login=secret)
    status, out, err = m.run("save", "--redact", "--text", "a finding", cwd=m.checkout)
    assert status == 2 and "author" in err and secret not in out + err
    assert not (tmp_path / "ada" / "own-store" / "projects").exists() and not (m.home / "pending").exists()


def test_a_note_on_a_bucket_names_the_hub_user_asked_once_and_kept(hub, tmp_path):
    token = hub.add_user("alice")
    hub.add_bucket("alice/agent-memory")
    m = BucketMachine(tmp_path / "m", hub, token)
    hub.clear_log()
    first = json.loads(m.run("save", "--json", "--text", "first finding").stdout)
    second = json.loads(m.run("save", "--json", "--text", "second finding").stdout)
    assert first["status"] == second["status"] == "saved"
    assert len(hub.requests("whoami")) == 1  # the second save read the kept name
    for note in (first, second):
        meta = _frontmatter_bytes(hub.read_file_bytes("alice/agent-memory", note["path"]))
        assert meta["author"] == "alice"
    kept = (m.home / "whoami.json").read_text()
    assert "alice" in kept and token not in kept  # INV no-credentials: a fingerprint, never the token


def test_a_new_login_on_the_machine_is_asked_again(hub, tmp_path):
    alice, bob = hub.add_user("alice"), hub.add_user("bob")
    hub.add_bucket("alice/agent-memory")
    m = BucketMachine(tmp_path / "m", hub, alice)
    m.run("save", "--json", "--text", "first finding")
    m.token = bob
    done = json.loads(m.run("save", "--json", "--text", "second finding").stdout)  # bob may not write there
    assert len(hub.requests("whoami")) == 2
    note = (m.home / "pending" / done["id"] / "note.md").read_bytes()
    assert _frontmatter_bytes(note)["author"] == "bob" and "bob" in (m.home / "whoami.json").read_text()


def test_an_offline_save_on_a_bucket_falls_back_to_the_login_name_at_once(hub, tmp_path):
    token = hub.add_user("alice")
    hub.add_bucket("alice/agent-memory")
    m = BucketMachine(tmp_path / "m", hub, token)
    done = m.run("save", "--json", "--text", "a finding", env_change={"HF_HUB_OFFLINE": "1", "LOGNAME": "al"})
    out = json.loads(done.stdout)
    assert done.returncode == 10 and out["status"] == "pending"
    note = (m.home / "pending" / out["id"] / "note.md").read_bytes()
    assert _frontmatter_bytes(note)["author"] == "al"
    assert not (m.home / "whoami.json").exists()  # nothing kept: the next save online asks


def _frontmatter_bytes(data: bytes) -> dict:
    from agentmem.note import document

    return document.parse(data).meta


def test_doctor_asks_the_hub_user_name_again_so_the_next_save_asks_nothing(hub, tmp_path):
    token = hub.add_user("alice")
    hub.add_bucket("alice/agent-memory")
    m = BucketMachine(tmp_path / "m", hub, token)
    m.run("doctor")
    assert "alice" in (m.home / "whoami.json").read_text()
    hub.clear_log()
    done = json.loads(m.run("save", "--json", "--text", "a finding").stdout)
    assert done["status"] == "saved" and hub.requests("whoami") == []


def test_an_audit_fix_copy_keeps_the_original_notes_author(laptop, store_dir):
    from tests.test_planted_credentials import NOTE_ID, planted

    notes_dir = store_dir / "projects" / "app" / "notes"
    notes_dir.mkdir(parents=True)
    (notes_dir / f"{NOTE_ID}.md").write_bytes(planted().replace(b"agent: by-hand\n", b"agent: by-hand\nauthor: ada\n"))
    laptop.env["LOGNAME"] = "auditor"
    status, out, err = laptop.json("audit", "--fix", "--yes", cwd=laptop.checkout)
    assert status == 0, (out, err)
    [copy] = [p for p in notes_dir.iterdir() if p.suffix == ".md"]
    assert _frontmatter(copy)["author"] == "ada"
