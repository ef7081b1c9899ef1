"""Opt-in smoke test against the real Hugging Face Hub.

Skipped unless AGENTMEM_LIVE_HUB=1 and HF_TOKEN are set. It creates (or reuses,
after verifying) the private bucket AGENTMEM_LIVE_BUCKET (default
`<you>/agentmem-live-test`), writes one uniquely named object, reads and lists
it, checks append-only, and deletes that object again. It never changes a
bucket's visibility. What the stand-in cannot prove (the Hub's real status
codes, shapes and default visibility) is checked here.

The team test (issue X) runs only when AGENTMEM_LIVE_TEAM_BUCKET names an
organisation's bucket (`acme/team-memory`); it writes nothing there. It checks
whoami's `orgs` / `roleInOrg` shape and that the rights probe answers what that
shape implies, and, with AGENTMEM_LIVE_TEAM_ACCESS ("read and write", "read
only", "no access" or "not found"), that it answers exactly that for this token.
"""

from __future__ import annotations

import os
import secrets

import pytest

from tests.fixtures_hub import LIVE_HF_TOKEN

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("AGENTMEM_LIVE_HUB") != "1" or not LIVE_HF_TOKEN,
        reason="live Hub test: set AGENTMEM_LIVE_HUB=1 and HF_TOKEN to run",
    ),
]


def test_the_real_hub_creates_a_private_bucket_and_round_trips_an_append_only_object(monkeypatch):
    from agentmem import errors
    from agentmem.machine import provision
    from agentmem.store.bucket import BucketStore

    monkeypatch.setenv("HF_TOKEN", LIVE_HF_TOKEN)
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    session = provision._Session(60)
    bucket = os.environ.get("AGENTMEM_LIVE_BUCKET") or f"{session.whoami()['name']}/agentmem-live-test"
    result = provision.create(bucket, session=session)
    assert result.action in ("created", "reused")

    store = BucketStore(bucket, timeout=60)
    path = f"live-test/{secrets.token_hex(6)}/note.md"
    data = f"# live smoke {path}\n".encode()
    try:
        store.put(path, data)
        store.put(path, data)  # same bytes: a no-op
        with pytest.raises(errors.Conflict):
            store.put(path, data + b"changed\n")
        assert store.get(path) == data
        assert store.info(path).size == len(data)
        assert path in [o.path for o in store.list(path.rsplit("/", 1)[0])]
        assert provision.connect(bucket, timeout=60).action == "connected"
    finally:
        store.client().batch_bucket_files(bucket, delete=[path])


@pytest.mark.skipif(not os.environ.get("AGENTMEM_LIVE_TEAM_BUCKET"),
                    reason="live team test: set AGENTMEM_LIVE_TEAM_BUCKET to an organisation's bucket")
def test_the_real_hubs_whoami_and_rights_probe_answer_for_an_organisations_bucket(monkeypatch, tmp_path):
    from tests.team_rights_checks import ANSWERS, check_team_bucket

    monkeypatch.setenv("HF_TOKEN", LIVE_HF_TOKEN)
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    expected = os.environ.get("AGENTMEM_LIVE_TEAM_ACCESS") or None
    assert expected in (None, *ANSWERS), f"AGENTMEM_LIVE_TEAM_ACCESS must be one of {ANSWERS}"
    found = check_team_bucket(os.environ["AGENTMEM_LIVE_TEAM_BUCKET"], tmp_path, expected)
    print(f"live team bucket: {found.to_json()}")  # what the Hub said, for the record (-s)
