"""Bucket provisioning through the real huggingface_hub against the stand-in."""

from __future__ import annotations

import pytest

from agentmem import config, errors
from agentmem.machine import provision
from agentmem.store.base import StoreDescription


def _snapshot(hub):
    return {bid: (b.private, dict(b.files)) for bid, b in hub.buckets.items()}


def test_first_machine_creates_a_private_bucket_named_after_the_user(hub, alice):
    result = provision.create(timeout=2)
    assert (result.bucket_id, result.action, result.user) == ("alice/agent-memory", "created", "alice")
    assert hub.buckets["alice/agent-memory"].private is True
    assert [r.route for r in hub.requests("create")] == ["create"]


def test_a_second_machine_given_the_id_connects_without_creating_anything(hub, alice):
    provision.create(timeout=2)
    hub.clear_log()
    before = _snapshot(hub)
    result = provision.connect("alice/agent-memory", timeout=2)
    assert result.action == "connected"
    assert hub.requests("create") == [] and hub.requests("batch") == []
    assert _snapshot(hub) == before


def test_a_rerun_of_create_reuses_the_bucket_and_changes_nothing(hub, alice):
    provision.create(timeout=2)
    before = _snapshot(hub)
    hub.clear_log()
    again = provision.create(timeout=2)
    assert again.action == "reused"
    assert hub.requests("create") == [] and _snapshot(hub) == before


def test_an_org_bucket_of_the_users_organisation_is_accepted(hub, alice):
    result = provision.create("team/shared-memory", timeout=2)
    assert result.action == "created" and hub.buckets["team/shared-memory"].private


def test_someone_elses_bucket_is_refused_and_nothing_is_created(hub, alice, bob):
    # INV no-replacement
    before = _snapshot(hub)
    with pytest.raises(errors.NoAccess):
        provision.connect("bob/agent-memory", timeout=2)
    with pytest.raises(errors.NoAccess):
        provision.create("bob/agent-memory", timeout=2)
    assert _snapshot(hub) == before and hub.requests("create") == []


def test_an_existing_public_bucket_is_refused_and_stays_public(hub, alice):
    # INV no-replacement
    hub.add_bucket("alice/agent-memory", private=False)
    with pytest.raises(errors.UnsafeBucket):
        provision.create(timeout=2)
    with pytest.raises(errors.UnsafeBucket):
        provision.connect("alice/agent-memory", timeout=2)
    assert hub.buckets["alice/agent-memory"].private is False
    assert hub.requests("create") == [] and set(hub.buckets) == {"alice/agent-memory"}


def test_connecting_to_a_missing_bucket_is_not_found_and_creates_no_replacement(hub, alice):
    # INV no-replacement
    with pytest.raises(errors.NotFound):
        provision.connect("alice/agent-memory", timeout=2)
    assert hub.buckets == {}


def test_a_read_only_token_is_told_the_bucket_is_not_writable(hub, alice_bucket, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", hub.add_token("alice", write=False))
    with pytest.raises(errors.NoAccess) as caught:
        provision.connect("alice/agent-memory", timeout=2)
    assert "not writable" in caught.value.one_line()


def test_a_read_only_token_cannot_create_and_nothing_appears(hub, alice, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", hub.add_token("alice", write=False))
    with pytest.raises(errors.NoAccess):
        provision.create(timeout=2)
    assert hub.buckets == {}


def test_missing_credentials_explain_how_to_log_in_and_ask_for_no_token(hub, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with pytest.raises(errors.NotAuthenticated) as caught:
        provision.create(timeout=2)
    line = caught.value.one_line()
    assert "hf auth login" in line and "HF_TOKEN" in line
    assert "paste" not in line.lower() and hub.log == []


def test_a_bad_token_is_not_authenticated(hub, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_wrong")
    with pytest.raises(errors.NotAuthenticated):
        provision.create(timeout=2)
    assert hub.buckets == {}


def test_ensure_prefers_the_supplied_id_then_the_configured_one(hub, alice, tmp_path):
    home = tmp_path / "home"
    hub.add_bucket("team/existing", private=True)
    assert provision.ensure(home, "team/existing", timeout=2).action == "connected"
    provision.save_to_config(home, "team/existing")
    assert config.load(home).store == StoreDescription("bucket", "team/existing")
    assert provision.ensure(home, timeout=2).bucket_id == "team/existing"
    assert "alice/agent-memory" not in hub.buckets  # no default bucket was made


def test_ensure_with_nothing_configured_creates_the_default(hub, alice, tmp_path):
    assert provision.ensure(tmp_path / "home", timeout=2).bucket_id == "alice/agent-memory"


def test_an_unreachable_hub_is_offline_and_nothing_is_assumed(hub, alice):
    hub.stop()
    with pytest.raises(errors.Offline):
        provision.create(timeout=2)


def test_importing_provisioning_and_verification_loads_no_hub_client():
    import subprocess
    import sys

    code = (
        "import sys, agentmem.machine.provision, agentmem.setup.verification, agentmem.cli.main;"
        "print(sorted(m for m in ('huggingface_hub', 'hf_xet', 'httpx2') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=str(__import__("pathlib").Path(__file__).resolve().parent.parent))
    assert done.stdout.strip() == "[]"
