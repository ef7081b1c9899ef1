"""What a team bucket's rights look like to one credential, checked the same way on the stand-in and on the
real Hub (tests/test_live_hub.py, opt-in): the whoami shape the rights probe reads (`name`, `orgs` with
`roleInOrg`, a fine-grained token's `auth.accessToken.fineGrained.scoped`), and the probe's answer agreeing
with it. Nothing here writes to the bucket."""

from __future__ import annotations

from agentmem.store import rights, whoami
from agentmem.store.bucket import BucketStore

ORG_ROLES = ("read", "contributor", "write", "admin")  # the Hub's organisation roles (hf-teams.md)
ANSWERS = (rights.READ_WRITE, rights.READ_ONLY, rights.NO_ACCESS, rights.NOT_FOUND)


def check_team_bucket(bucket: str, machine, expected: str | None = None, timeout: float = 60) -> rights.Access:
    """The current login's access to `bucket` (HF_TOKEN, HF_ENDPOINT as set), after checking the whoami
    shape and that the probe's answer follows from it; `expected`: the answer it must be."""
    store = BucketStore(bucket, timeout=timeout)
    who = rights.whoami(store)
    assert isinstance(who.get("name"), str) and who["name"], who.keys()
    orgs = who.get("orgs")
    assert isinstance(orgs, list), f"whoami's orgs: {type(orgs).__name__}"
    roles = {}
    for org in orgs:
        assert isinstance(org, dict) and isinstance(org.get("name"), str), org
        assert org.get("roleInOrg") in ORG_ROLES, f"roleInOrg of {org['name']}: {org.get('roleInOrg')!r}"
        roles[org["name"]] = org["roleInOrg"]
    access = (who.get("auth") or {}).get("accessToken") or {}
    if access.get("role") == "fineGrained":
        scoped = (access.get("fineGrained") or {}).get("scoped")
        assert isinstance(scoped, list), "a fine-grained token's scoped permissions are a list"
        for entry in scoped:
            entity = entry.get("entity") if isinstance(entry, dict) else None
            assert isinstance(entity, dict) and isinstance(entity.get("type"), str), entry
            assert isinstance(entry.get("permissions"), list), entry

    found = rights.probe(store, machine)
    namespace = bucket.split("/")[0]
    assert found.answer in ANSWERS and found.user == who["name"], found
    assert whoami.cached_name(machine) == who["name"]  # kept for author stamps
    if namespace != who["name"]:
        assert found.role == roles.get(namespace), (found.role, roles.get(namespace))
    if found.answer == rights.READ_WRITE:
        assert found.role in ("owner", "write", "admin"), found
    if found.role in ("read", "contributor") and found.can_read:
        assert found.answer == rights.READ_ONLY, found
    if expected is not None:
        assert found.answer == expected, found
    return found
