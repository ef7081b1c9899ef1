"""The CLI (`python -m agentmem`, run as a subprocess) against the stand-in: messages and exit statuses.

CLI processes run one at a time: hf_xet's local CAS is a database that one
process holds at a time, and the stand-in releases it after its own use.
"""

from __future__ import annotations

import json

import pytest

from tests.fixtures_hub import BucketMachine


def _json(done) -> dict:
    return json.loads(done.stdout)


def _files(hub, bucket="alice/agent-memory"):
    return dict(hub.buckets[bucket].files) if bucket in hub.buckets else None


@pytest.mark.parametrize(
    "case, status, kind, needle",
    [
        ("no-token", 5, "not-authenticated", "hf auth login"),
        ("bad-token", 5, "not-authenticated", "rejected"),
        ("other-users-bucket", 6, "no-access", "belongs to bob"),
        ("public-bucket", 9, "bucket-public", "public"),
        ("read-only-token", 6, "no-access", "not writable"),
    ],
)
def test_bucket_connect_refuses_with_the_right_message_and_status_and_changes_nothing(
    hub, tmp_path, case, status, kind, needle
):
    token = hub.add_user("alice")
    hub.add_user("bob")
    hub.add_bucket("alice/agent-memory", private=case != "public-bucket")
    hub.add_bucket("bob/agent-memory")
    bucket = "bob/agent-memory" if case == "other-users-bucket" else "alice/agent-memory"
    token = {"no-token": None, "bad-token": "hf_revoked_123", "read-only-token": hub.add_token("alice", write=False)}.get(
        case, token
    )
    before = {b: (v.private, dict(v.files)) for b, v in hub.buckets.items()}
    done = BucketMachine(tmp_path / "m", hub, token, bucket=None).run("bucket", "connect", "--bucket", bucket, "--json")
    assert done.returncode == status, done.stderr
    assert _json(done)["error"] == kind and needle in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert {b: (v.private, dict(v.files)) for b, v in hub.buckets.items()} == before
    assert hub.requests("create") == [] and hub.requests("batch") == []


def test_first_machine_creates_and_records_the_bucket_second_machine_connects_and_reads_its_notes(hub, tmp_path):
    token = hub.add_user("alice")
    first = BucketMachine(tmp_path / "laptop", hub, token, bucket=None)
    made = first.run("bucket", "ensure", "--save", "--json")
    assert made.returncode == 0, made.stderr
    assert _json(made)["action"] == "created" and hub.buckets["alice/agent-memory"].private
    saved = first.run("save", "--title", "Use buckets", "--json", stdin="We store memory in a private bucket.\n")
    assert saved.returncode == 0, saved.stderr
    note_id = _json(saved)["id"]

    second = BucketMachine(tmp_path / "desktop", hub, token, bucket=None)
    hub.clear_log()
    joined = second.run("bucket", "ensure", "--bucket", "alice/agent-memory", "--save", "--json")
    assert joined.returncode == 0 and _json(joined)["action"] == "connected"
    assert hub.requests("create") == []
    found = second.run("search", "private bucket", "--json")
    assert found.returncode == 0 and [r["id"] for r in _json(found)["results"]] == [note_id]
    assert _json(found)["stale"] is False
    read = second.run("read", note_id, "--fresh")
    assert read.returncode == 0 and "We store memory in a private bucket." in read.stdout
    # INV no-credentials: not in config, cache, pending entries, nor hf_xet's logs
    for machine in (first, second):
        for path in machine.home.parent.rglob("*"):
            if path.is_file():
                assert token.encode() not in path.read_bytes(), path


@pytest.mark.parametrize(
    "case, kind",
    [("bad-token", "not-authenticated"), ("read-only-token", "no-access"), ("public-bucket", "bucket-public")],
)
def test_a_save_that_cannot_be_uploaded_is_kept_pending_and_says_why(hub, tmp_path, case, kind):
    # INV nothing-lost; a public bucket stops the save with its own error (tests/test_public_bucket.py)
    if case == "public-bucket":
        hub.add_user("alice")
        hub.add_bucket("alice/agent-memory", private=False)
        machine = BucketMachine(tmp_path / "m", hub, hub.add_token("alice", write=True))
        done = machine.run("save", "--json", stdin="# Finding\nkeep me\n")
        out = _json(done)
        assert done.returncode == 9 and out["error"] == kind and "kept on this machine (pending)" in out["message"]
        [entry] = [p for p in (machine.home / "pending").iterdir() if not p.name.startswith(".")]
        assert _files(hub) == {} and (entry / "note.md").exists()
        return
    hub.add_user("alice")
    hub.add_bucket("alice/agent-memory", private=case != "public-bucket")
    token = {"bad-token": "hf_revoked_123", "read-only-token": hub.add_token("alice", write=False)}.get(
        case, hub.add_token("alice", write=True)
    )
    machine = BucketMachine(tmp_path / "m", hub, token)
    done = machine.run("save", "--json", stdin="# Finding\nkeep me\n")
    assert done.returncode == 10, done.stderr
    out = _json(done)
    assert out["status"] == "pending" and out["reason"]["error"] == kind
    assert _files(hub) == {} and (machine.home / "pending" / out["id"] / "note.md").exists()


def test_reading_from_the_bucket_without_credentials_is_not_authenticated(hub, tmp_path):
    hub.add_user("alice")
    hub.add_bucket("alice/agent-memory")
    done = BucketMachine(tmp_path / "m", hub, None).run("read", "20261130T090000000Z-aaaaaaaa", "--fresh")
    assert done.returncode == 5 and "hf auth login" in done.stderr


def test_an_offline_search_returns_cached_notes_with_a_stale_warning(hub, tmp_path):
    token = hub.add_user("alice")
    hub.add_bucket("alice/agent-memory")
    machine = BucketMachine(tmp_path / "m", hub, token)
    saved = machine.run("save", "--json", stdin="# Decision\nThe cache survives outages.\n")
    assert saved.returncode == 0, saved.stderr
    hub.stop()
    done = machine.run("search", "survives outages")
    assert done.returncode == 0
    assert done.stdout.startswith("warning: results may be stale") and _json(saved)["id"] in done.stdout


def test_connect_with_no_bucket_given_or_configured_is_invalid_input(hub, tmp_path):
    machine = BucketMachine(tmp_path / "m", hub, hub.add_user("alice"), bucket=None)
    (machine.home / "config.toml").write_text(
        (machine.home / "config.toml").read_text() + '\n[store]\nkind = "folder"\nlocation = "/tmp/x"\n'
    )
    done = machine.run("bucket", "connect")
    assert done.returncode == 2 and "--bucket" in done.stderr and hub.log == []


def test_bucket_verify_on_a_configured_machine_saves_reads_back_and_finds_the_note(hub, tmp_path):
    token = hub.add_user("alice")
    hub.add_bucket("alice/agent-memory")
    machine = BucketMachine(tmp_path / "m", hub, token)
    first = machine.run("bucket", "verify", "--json")
    assert first.returncode == 0, first.stderr
    out = json.loads(first.stdout)
    assert out["status"] == "ok" and out["read_back"] and out["found_by_search"]
    again = machine.run("bucket", "verify", "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["upload"] == "already-saved"
    assert list(hub.buckets["alice/agent-memory"].files) == [out["path"]]


def test_a_save_sends_no_telemetry_request_and_leaves_no_registry_cache(hub, tmp_path):
    token = hub.add_user("alice")
    hub.add_bucket("alice/agent-memory", private=True)
    m = BucketMachine(tmp_path / "laptop", hub, token)
    hub.clear_log()
    saved = m.run("save", "--json", stdin="A note saved without telemetry.\n")
    assert saved.returncode == 0, saved.stderr
    assert hub.requests("agent-harnesses") == []
    assert not (m.hf_home / ".agent_harnesses.json").exists()
