"""The rights probe (agentmem/store/rights.py) answers what a credential may do in a bucket, writing nothing.

Against the loopback Hub's organisation `acme` (the `team` fixture): `writer` (role write),
`reader` (role read), `outsider` (none), and fine-grained tokens, through the real huggingface_hub.
"""

from __future__ import annotations

import pytest

from agentmem import errors, paths
from agentmem.store import rights, whoami
from agentmem.store.bucket import BucketStore


def _probe(monkeypatch, token, bucket, machine=None):
    if token is None:
        monkeypatch.delenv("HF_TOKEN", raising=False)
    else:
        monkeypatch.setenv("HF_TOKEN", token)
    return rights.probe(BucketStore(bucket, timeout=5), machine)


def _writes_asked(hub) -> list:
    """Requests that write, or prepare a write: the probe must send none."""
    return [r for r in hub.log if r.route in ("batch", "create", "settings")
            or (r.route == "xet-token" and r.path.endswith("xet-write-token"))]


def test_a_write_member_may_read_and_write_the_team_bucket_and_its_own(hub, team, monkeypatch):
    found = _probe(monkeypatch, team.writer.token, team.bucket)
    assert (found.answer, found.user, found.role, found.token, found.private) == (
        rights.READ_WRITE, "writer", "write", "write", True)
    assert found.can_read and found.can_write
    own = _probe(monkeypatch, team.writer.token, team.writer.bucket)
    assert (own.answer, own.role) == (rights.READ_WRITE, "owner")
    assert _writes_asked(hub) == []


def test_a_read_member_may_only_read_the_team_bucket(hub, team, monkeypatch):
    found = _probe(monkeypatch, team.reader.token, team.bucket)
    assert (found.answer, found.role) == (rights.READ_ONLY, "read")
    assert found.can_read and not found.can_write
    assert "role in acme is read" in found.reason
    assert _writes_asked(hub) == []


def test_an_outsider_finds_the_private_team_bucket_not_found_and_is_told_why_it_may_exist(hub, team, monkeypatch):
    found = _probe(monkeypatch, team.outsider.token, team.bucket)
    assert (found.answer, found.role, found.private) == (rights.NOT_FOUND, None, None)
    assert not found.can_read and "does not belong" in found.reason


def test_nobody_may_read_another_members_personal_bucket(hub, team, monkeypatch):
    for member in team.members:
        for owner in team.members:
            answer = _probe(monkeypatch, member.token, owner.bucket).answer
            assert answer == (rights.READ_WRITE if member is owner else rights.NOT_FOUND), (member.name, owner.name)


def test_a_bucket_that_does_not_exist_in_ones_organisation_is_not_found(hub, team, monkeypatch):
    found = _probe(monkeypatch, team.writer.token, "acme/nothing-here")
    assert found.answer == rights.NOT_FOUND and found.reason == "bucket acme/nothing-here does not exist"


def test_a_token_scoped_read_only_to_the_team_bucket_may_only_read_it_though_its_user_writes(hub, team, monkeypatch):
    token = hub.add_token("writer", scoped={"acme/team-memory": "read", "writer/agent-memory": "write"})
    found = _probe(monkeypatch, token, team.bucket)
    assert (found.answer, found.role, found.token) == (rights.READ_ONLY, "write", "fine-grained read")
    assert "fine-grained token does not include write access" in found.reason
    own = _probe(monkeypatch, token, team.writer.bucket)
    assert (own.answer, own.token) == (rights.READ_WRITE, "fine-grained write")
    assert _writes_asked(hub) == []


def test_a_fine_grained_token_with_no_scope_for_the_bucket_has_no_access(hub, team, monkeypatch):
    token = hub.add_token("writer", scoped={"writer/agent-memory": "write"})
    found = _probe(monkeypatch, token, team.bucket)
    assert (found.answer, found.token) == (rights.NO_ACCESS, "fine-grained none")
    assert not found.can_read


def test_a_token_scoped_to_the_whole_organisation_writes_its_buckets(hub, team, monkeypatch):
    token = hub.add_token("writer", scoped={"acme": "write"})
    assert _probe(monkeypatch, token, team.bucket).answer == rights.READ_WRITE


def test_a_classic_read_only_token_may_only_read_even_the_users_own_bucket(hub, team, monkeypatch):
    found = _probe(monkeypatch, hub.add_token("writer", write=False), team.writer.bucket)
    assert (found.answer, found.role, found.token) == (rights.READ_ONLY, "owner", "read")


def test_a_public_bucket_of_an_organisation_one_is_not_in_is_read_only(hub, team, monkeypatch):
    hub.add_bucket("acme/open", private=False)
    found = _probe(monkeypatch, team.outsider.token, "acme/open")
    assert (found.answer, found.role, found.private) == (rights.READ_ONLY, None, False)


def test_the_probe_asks_whoami_and_one_read_of_the_bucket_and_nothing_else(hub, team, monkeypatch):
    hub.clear_log()
    _probe(monkeypatch, team.writer.token, team.bucket)
    assert [(r.method, r.route) for r in hub.log] == [("GET", "whoami"), ("GET", "info")]


def test_the_probe_keeps_the_users_name_for_this_login_in_the_one_place_author_stamps_read(
        hub, team, monkeypatch, tmp_path):
    machine = tmp_path / "machine"
    machine.mkdir()
    monkeypatch.setenv("HF_TOKEN", team.reader.token)
    assert whoami.cached_name(machine) is None
    _probe(monkeypatch, team.reader.token, team.bucket, machine)
    assert whoami.cached_name(machine) == "reader"
    assert team.reader.token not in (machine / paths.WHOAMI_FILE).read_text()  # INV no-credentials
    _probe(monkeypatch, team.writer.token, team.writer.bucket, machine)  # another login on this machine
    assert whoami.cached_name(machine) == "writer"
    monkeypatch.setenv("HF_TOKEN", team.reader.token)  # back to the first login, with no probe: its own name
    assert whoami.cached_name(machine) == "reader"
    monkeypatch.setenv("HF_TOKEN", team.outsider.token)  # a login never asked about is not named after another
    assert whoami.cached_name(machine) is None
    monkeypatch.setenv("HF_TOKEN", team.writer.token)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # another Hub: its account is not known here
    assert whoami.cached_name(machine) is None
    assert sorted(p.name for p in machine.iterdir()) == [paths.WHOAMI_FILE]  # one file holds the name


@pytest.mark.parametrize("case", ["no-token", "bad-token", "hub-down", "hub-error"])
def test_failures_are_reported_as_what_they_are(hub, team, monkeypatch, case):
    token = {"no-token": None, "bad-token": "hf_revoked_123"}.get(case, team.writer.token)
    if case == "hub-down":
        hub.stop()
    if case == "hub-error":
        hub.inject("info", status=502, times=1)
    expected = {"no-token": errors.NotAuthenticated, "bad-token": errors.NotAuthenticated,
                "hub-down": errors.Offline, "hub-error": errors.RemoteError}[case]
    with pytest.raises(expected) as raised:
        _probe(monkeypatch, token, team.bucket)
    assert type(raised.value) is expected
    if token:
        assert token not in raised.value.one_line()  # INV no-credentials


def test_the_live_hubs_team_checks_hold_on_the_stand_in_for_each_member(hub, team, monkeypatch, tmp_path):
    # the checks tests/test_live_hub.py runs against a real organisation's bucket, proved here first
    from tests.team_rights_checks import check_team_bucket

    expected = {"writer": rights.READ_WRITE, "reader": rights.READ_ONLY, "outsider": rights.NOT_FOUND}
    for member in team.members:
        monkeypatch.setenv("HF_TOKEN", member.token)
        machine = tmp_path / member.name
        machine.mkdir()
        assert check_team_bucket(team.bucket, machine, expected[member.name], timeout=5).user == member.name
    assert _writes_asked(hub) == []
