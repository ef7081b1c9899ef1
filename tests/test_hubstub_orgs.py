"""The loopback Hub knows organisations: members' roles decide every bucket route, as the Hub's do.

Driven through the real huggingface_hub (and hf_xet for transfers) as each member of the `team`
fixture (tests/fixtures_hub.py): `writer` (role write), `reader` (role read), `outsider` (none).
The model and what it rests on: tests/hubstub_rights.py and /work/shared/reference/hf-teams.md.
"""

from __future__ import annotations

import pytest

SEED = "notes/seed.md"
READS = ("info", "list", "paths-info", "head", "read-token", "download")
WRITES = ("write-token", "upload", "delete")


def _api(hub, token):
    from huggingface_hub import HfApi

    return HfApi(endpoint=hub.url, token=token)


def _xet_token(api, bucket: str, kind: str) -> None:
    """What the client asks before an hf_xet transfer: the bucket's Xet read or write token."""
    from huggingface_hub.utils._xet import (
        XetTokenType,
        _fetch_xet_connection_info_with_url,
        xet_connection_info_refresh_url,
    )

    url = xet_connection_info_refresh_url(
        token_type=XetTokenType.WRITE if kind == "write" else XetTokenType.READ,
        repo_id=bucket, repo_type="bucket", endpoint=api.endpoint)
    _fetch_xet_connection_info_with_url(url, api._build_hf_headers())


def _attempt(api, bucket: str, op: str, tmp_path) -> str:
    """Run one bucket operation through the real client: "ok", "403", "not found", or what else it raised."""
    from huggingface_hub.errors import BucketNotFoundError, HfHubHTTPError, RepositoryNotFoundError

    calls = {
        "info": lambda: api.bucket_info(bucket),
        "list": lambda: list(api.list_bucket_tree(bucket, "notes", recursive=True)),
        "paths-info": lambda: list(api.get_bucket_paths_info(bucket, [SEED])),
        "head": lambda: api.get_bucket_file_metadata(bucket, SEED),
        "read-token": lambda: _xet_token(api, bucket, "read"),
        "download": lambda: api.download_bucket_files(bucket, [(SEED, tmp_path / "down" / op / bucket / "seed.md")],
                                                      raise_on_missing_files=True),
        "write-token": lambda: _xet_token(api, bucket, "write"),
        "upload": lambda: api.batch_bucket_files(bucket, add=[(b"a new note\n", "notes/new.md")]),
        "delete": lambda: api.batch_bucket_files(bucket, delete=[SEED]),
    }
    try:
        calls[op]()
    except (BucketNotFoundError, RepositoryNotFoundError) as exc:
        # The Hub's 404 for a private bucket one cannot see: BucketNotFoundError on /api/buckets/ routes,
        # RepositoryNotFoundError on the file route (/buckets/{id}/resolve/...).
        assert exc.response.status_code == 404
        assert isinstance(exc, BucketNotFoundError) or op == "head", f"{op}: {type(exc).__name__}"
        return "not found"
    except HfHubHTTPError as exc:
        return str(exc.response.status_code)
    except ConnectionError as exc:  # hf_xet reports a refused Xet token as a built-in ConnectionError
        said = {"403 Forbidden": "403", "404 Not Found": "not found"}
        return next((v for k, v in said.items() if k in str(exc) and "xet-write-token" in str(exc)),
                    f"ConnectionError: {exc}")
    return "ok"


def _outcomes(hub, token, bucket: str, tmp_path, ops=READS + WRITES) -> dict[str, str]:
    api = _api(hub, token)
    return {op: _attempt(api, bucket, op, tmp_path) for op in ops}


@pytest.fixture
def seeded(hub, team):
    """The team's bucket and every personal bucket hold `notes/seed.md`."""
    for bucket in (team.bucket, *(m.bucket for m in team.members)):
        hub.put_file(bucket, SEED, f"seed of {bucket}\n".encode())
    return team


def test_whoami_names_each_member_and_lists_their_organisations_with_their_role(hub, team):
    answers = {m.name: _api(hub, m.token).whoami() for m in team.members}
    assert {name: a["name"] for name, a in answers.items()} == {"writer": "writer", "reader": "reader",
                                                                  "outsider": "outsider"}
    assert answers["writer"]["orgs"] == [{"type": "org", "name": "acme", "roleInOrg": "write"}]
    assert answers["reader"]["orgs"] == [{"type": "org", "name": "acme", "roleInOrg": "read"}]
    assert answers["outsider"]["orgs"] == []
    assert answers["writer"]["auth"]["accessToken"]["role"] == "write"  # a classic write token


def test_whoami_shows_a_fine_grained_tokens_scoped_permissions(hub, team):
    token = hub.add_token("writer", scoped={"acme/team-memory": "read", "writer": "write"})
    access = _api(hub, token).whoami()["auth"]["accessToken"]
    assert access["role"] == "fineGrained"
    assert access["fineGrained"]["scoped"] == [
        {"entity": {"type": "bucket", "name": "acme/team-memory"}, "permissions": ["repo.content.read"]},
        {"entity": {"type": "user", "name": "writer"}, "permissions": ["repo.content.read", "repo.write"]},
    ]


def test_a_write_member_reads_and_writes_the_team_bucket(hub, seeded, tmp_path):
    assert _outcomes(hub, seeded.writer.token, seeded.bucket, tmp_path) == dict.fromkeys(READS + WRITES, "ok")
    assert "notes/new.md" in hub.buckets[seeded.bucket].files and SEED not in hub.buckets[seeded.bucket].files
    assert (tmp_path / "down" / "download" / seeded.bucket / "seed.md").read_bytes() == b"seed of acme/team-memory\n"


def test_a_read_member_reads_the_team_bucket_and_each_of_its_writes_is_refused_with_403(hub, seeded, tmp_path):
    got = _outcomes(hub, seeded.reader.token, seeded.bucket, tmp_path)
    assert got == {**dict.fromkeys(READS, "ok"), **dict.fromkeys(WRITES, "403")}
    assert set(hub.buckets[seeded.bucket].files) == {SEED}  # nothing written, nothing deleted


def test_an_outsider_gets_not_found_for_the_private_team_bucket_on_every_route(hub, seeded, tmp_path):
    got = _outcomes(hub, seeded.outsider.token, seeded.bucket, tmp_path)
    assert got == dict.fromkeys(READS + WRITES, "not found")
    assert set(hub.buckets[seeded.bucket].files) == {SEED}


def test_nobody_reads_or_writes_another_members_personal_bucket_and_each_owner_does_both(hub, seeded, tmp_path):
    for owner in seeded.members:
        for member in seeded.members:
            got = _outcomes(hub, member.token, owner.bucket, tmp_path)
            expected = "ok" if member is owner else "not found"
            assert got == dict.fromkeys(READS + WRITES, expected), (member.name, owner.bucket)


def test_a_token_scoped_read_only_to_the_team_bucket_cannot_write_it_though_its_users_role_is_write(
        hub, seeded, tmp_path):
    token = hub.add_token("writer", scoped={"acme/team-memory": "read", "writer/agent-memory": "write"})
    assert _outcomes(hub, token, seeded.bucket, tmp_path) == {**dict.fromkeys(READS, "ok"),
                                                              **dict.fromkeys(WRITES, "403")}
    assert _outcomes(hub, token, seeded.writer.bucket, tmp_path) == dict.fromkeys(READS + WRITES, "ok")
    # A scope grants nothing beyond the user's own rights: the reader's bucket stays invisible.
    assert _outcomes(hub, token, seeded.reader.bucket, tmp_path, READS) == dict.fromkeys(READS, "not found")


def test_a_fine_grained_token_without_a_scope_for_a_bucket_may_not_read_it(hub, seeded, tmp_path):
    token = hub.add_token("writer", scoped={"writer/agent-memory": "write"})
    assert _outcomes(hub, token, seeded.bucket, tmp_path, ("info", "list", "read-token")) == dict.fromkeys(
        ("info", "list", "read-token"), "403")


def test_creating_a_bucket_in_the_organisation_needs_the_write_or_admin_role(hub, team):
    from huggingface_hub.errors import HfHubHTTPError

    hub.add_member("acme", "boss", "admin")
    boss = hub.add_token("boss")
    _api(hub, team.writer.token).create_bucket("acme/by-writer", private=True)
    _api(hub, boss).create_bucket("acme/by-admin", private=True)
    refused = {}
    for who, token in {"reader": team.reader.token, "outsider": team.outsider.token,
                       "read-only scope": hub.add_token("writer", scoped={"acme": "read"})}.items():
        with pytest.raises(HfHubHTTPError) as exc:
            _api(hub, token).create_bucket(f"acme/by-{who.replace(' ', '-')}", private=True)
        refused[who] = exc.value.response.status_code
    assert refused == {"reader": 403, "outsider": 403, "read-only scope": 403}
    assert {b for b in hub.buckets if b.startswith("acme/")} == {"acme/team-memory", "acme/by-writer", "acme/by-admin"}
    with pytest.raises(HfHubHTTPError) as other:  # nor in another user's namespace
        _api(hub, team.writer.token).create_bucket("reader/planted", private=True)
    assert other.value.response.status_code == 403


def test_a_contributor_only_reads_the_organisations_buckets_and_an_admin_writes_them(hub, seeded, tmp_path):
    hub.add_member("acme", "helper", "contributor")
    hub.add_member("acme", "boss", "admin")
    helper, boss = hub.add_token("helper"), hub.add_token("boss")
    assert _outcomes(hub, helper, seeded.bucket, tmp_path) == {**dict.fromkeys(READS, "ok"),
                                                               **dict.fromkeys(WRITES, "403")}
    assert _outcomes(hub, boss, seeded.bucket, tmp_path) == dict.fromkeys(READS + WRITES, "ok")


def test_a_public_organisation_bucket_is_read_by_anyone_and_written_only_by_its_writers(hub, team, tmp_path):
    hub.add_bucket("acme/open", private=True)
    hub.put_file("acme/open", SEED, b"open seed\n")
    hub.buckets["acme/open"].private = False
    ops = ("info", "list", "head", "write-token")
    assert _outcomes(hub, team.outsider.token, "acme/open", tmp_path, ops) == {
        "info": "ok", "list": "ok", "head": "ok", "write-token": "403"}
    assert _outcomes(hub, team.writer.token, "acme/open", tmp_path, ops) == dict.fromkeys(ops, "ok")
