"""The stand-in drives the real huggingface_hub and hf_xet end to end."""

from __future__ import annotations

import pytest


def _api(hub, token):
    from huggingface_hub import HfApi

    return HfApi(endpoint=hub.url, token=token)


def test_real_client_creates_uploads_lists_and_downloads_through_the_stand_in(hub, alice, tmp_path):
    api = _api(hub, alice)
    api.create_bucket("alice/smoke", private=True)
    assert api.bucket_info("alice/smoke").private is True
    files = [(f"note {i}\n".encode() * (i + 1), f"projects/p/notes/n{i}.md") for i in range(7)]
    api.batch_bucket_files("alice/smoke", add=files)

    listed = [f for f in api.list_bucket_tree("alice/smoke", "projects/p/notes", recursive=True) if f.type == "file"]
    assert sorted(f.path for f in listed) == sorted(dest for _, dest in files)
    assert len(hub.requests("tree")) >= 3  # 7 entries at 3 a page: the Link header was followed

    targets = [(dest, tmp_path / "out" / dest) for _, dest in files]
    api.download_bucket_files("alice/smoke", targets, raise_on_missing_files=True)
    for (data, _), (_, local) in zip(files, targets):
        assert local.read_bytes() == data
    # The server learned each size from the uploaded shards, not from the client.
    assert {f.path: f.size for f in listed} == {dest: len(data) for data, dest in files}


def test_plain_resolve_get_returns_the_stored_bytes(hub, alice):
    import httpx2

    api = _api(hub, alice)
    api.create_bucket("alice/smoke", private=True)
    api.batch_bucket_files("alice/smoke", add=[(b"hello bytes", "a/b.md")])
    r = httpx2.get(f"{hub.url}/buckets/alice/smoke/resolve/a%2Fb.md", headers={"Authorization": f"Bearer {alice}"})
    assert r.status_code == 200 and r.content == b"hello bytes"


def test_someone_elses_private_bucket_looks_missing_and_anonymous_callers_are_refused(hub, alice, bob):
    from huggingface_hub.errors import BucketNotFoundError, HfHubHTTPError

    with pytest.raises(BucketNotFoundError):
        _api(hub, alice).bucket_info("bob/agent-memory")
    with pytest.raises(HfHubHTTPError) as anon:
        _api(hub, False).bucket_info("bob/agent-memory")
    assert anon.value.response.status_code == 401


def test_an_error_answer_to_a_head_request_has_no_body_so_the_kept_alive_connection_still_works(hub, alice, bob):
    import httpx2

    with httpx2.Client(base_url=hub.url, headers={"Authorization": f"Bearer {alice}"}) as client:
        head = client.head("/buckets/bob/agent-memory/resolve/notes%2Fa.md")
        assert head.status_code == 404 and head.headers["X-Error-Code"] == "RepoNotFound"
        assert client.get("/api/whoami-v2").json()["name"] == "alice"  # the same connection, read cleanly
