"""A bucket that became public after setup: every search warns, every save stops and writes nothing to it,
and the printed command makes it private again (the real hf CLI against the loopback Hub)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess

from tests.fixtures_hub import BucketMachine

BUCKET = "alice/agent-memory"


def _machine(hub, tmp_path) -> BucketMachine:
    hub.add_user("alice")
    hub.add_bucket(BUCKET, private=True)
    return BucketMachine(tmp_path / "m", hub, hub.add_token("alice", write=True))


def test_a_bucket_turned_public_warns_on_search_stops_saves_and_the_printed_command_makes_it_private(hub, tmp_path):
    # INV no-credentials (memory is never written where anyone can read it), INV nothing-lost,
    # INV printed-commands-run
    m = _machine(hub, tmp_path)
    saved = m.run("save", "--title", "Zebra", "--json", stdin="The zebra pipeline.\n")
    assert saved.returncode == 0, saved.stderr
    found = m.run("search", "zebra", "--json")
    assert found.returncode == 0 and "warnings" not in json.loads(found.stdout)

    hub.buckets[BUCKET].private = False  # someone flipped it on the Hub
    files = dict(hub.buckets[BUCKET].files)
    found = m.run("search", "zebra", "--json")
    out = json.loads(found.stdout)
    assert found.returncode == 0 and len(out["results"]) == 1
    [warning] = out["warnings"]
    assert f"bucket {BUCKET} is PUBLIC" in warning and "settings" in warning
    [detail] = out["warning_details"]  # a class a caller can match, and what to do (not our command: no argv)
    assert detail["warning"] == "public-store" and detail["message"] == warning
    assert [set(step) for step in detail["next"]] == [{"text"}] and "settings" in detail["next"][0]["text"]
    text = m.run("search", "zebra")
    assert text.returncode == 0 and text.stdout.startswith(f"warning: bucket {BUCKET} is PUBLIC")

    refused = m.run("save", "--title", "Secret plan", "--json", stdin="Only for the team.\n")
    assert refused.returncode == 9, refused.stdout
    error = json.loads(refused.stdout)
    assert error["error"] == "bucket-public" and "nothing was written to the bucket" in error["message"]
    assert dict(hub.buckets[BUCKET].files) == files  # nothing reached the public bucket
    [pending_id] = [p.name for p in (m.home / "pending").iterdir() if not p.name.startswith(".")]
    assert pending_id in error["message"]  # kept on this machine

    command = warning.split("make it private again with `", 1)[1].split("`", 1)[0]
    assert shlex.split(command)[1:] == ["buckets", "settings", BUCKET, "--private"]
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(m.home.parent), "HF_HOME": str(m.hf_home),
           "HF_ENDPOINT": hub.url, "HF_TOKEN": m.token, "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
    done = subprocess.run(shlex.split(command), env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert hub.buckets[BUCKET].private is True

    retry = error["message"].split("then run `", 1)[1].split("`", 1)[0]
    assert shlex.split(retry)[-2:] == ["--retry", pending_id]
    sent = m.run("save", "--retry", pending_id, "--json")
    assert sent.returncode == 0, sent.stdout + sent.stderr
    found = m.run("search", "team", "--json")
    assert "warnings" not in json.loads(found.stdout) and len(json.loads(found.stdout)["results"]) == 1
