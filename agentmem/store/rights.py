"""What this machine's Hub credential may do in a bucket, found without writing anything.

`probe(store, machine)` asks the Hub two things: who the credential is (`whoami`: the user's
name, their organisations with their role in each, and for a fine-grained token its scoped
permissions) and one read of the bucket (its info). From them it answers one of:

- "read and write": the bucket reads, and nothing the Hub said stops a write: the bucket is in
  the user's own namespace or in an organisation where their role is write or admin, and the
  token is a write token or a fine-grained one with `repo.write` on the bucket or its namespace;
- "read only": the bucket reads, but the role (read, contributor, or no membership of a public
  bucket's organisation) or the token (read-only; fine-grained without `repo.write` there)
  stops writes;
- "no access": the Hub refused the read (403: a fine-grained token without a scope for it);
- "not found": the Hub answered 404, which it also answers for a private bucket of an account
  the user does not belong to (the Hub does not tell the two apart, and neither can this).

What the Hub's answer leaves unsaid (a login whose token role is not stated, a membership
without `roleInOrg`) restricts nothing here: the Hub still refuses what it must. Any other
failure raises what it is (`network.classify`): Offline, NotAuthenticated, RemoteError.

The user's name is kept in the machine folder (`hub-account.json`, with the endpoint it came
from) so that author stamps read it without the network (`cached_user`); a probe refreshes it.
The rules follow the Hub's documentation (/work/shared/reference/hf-teams.md); the live Hub's
exact shapes are unproved from here.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from agentmem import errors
from agentmem.fsutil import read_bytes, write_atomic

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from agentmem.store.bucket import BucketStore

READ_WRITE = "read and write"
READ_ONLY = "read only"
NO_ACCESS = "no access"
NOT_FOUND = "not found"
ACCOUNT_FILE = "hub-account.json"
_DEFAULT_ENDPOINT = "https://huggingface.co"
_WRITING_ROLES = ("owner", "write", "admin")


@dataclass(frozen=True)
class Access:
    """The answer for one bucket. `role`: "owner" (the user's own namespace), the role in the
    bucket's organisation, or None (not a member, or the Hub did not say); `token`: "write",
    "read", "fine-grained write", "fine-grained read", "fine-grained none", or None (not stated);
    `reason`: one line saying why."""

    bucket: str
    user: str
    answer: str
    role: str | None
    token: str | None
    reason: str
    private: bool | None = None  # None: the bucket did not read

    @property
    def can_read(self) -> bool:
        return self.answer in (READ_WRITE, READ_ONLY)

    @property
    def can_write(self) -> bool:
        return self.answer == READ_WRITE

    def to_json(self) -> dict:
        return {"bucket": self.bucket, "user": self.user, "access": self.answer, "role": self.role,
                "token": self.token, "private": self.private, "reason": self.reason}


def probe(store: BucketStore, machine: str | os.PathLike | None = None) -> Access:
    """What `store`'s credential may do in its bucket: whoami, then one read of the bucket's info.
    Writes nothing to the bucket; with `machine`, records the user's name there (`cached_user`)."""
    who = whoami(store)
    user = who["name"]
    if machine is not None:
        remember_user(machine, user)
    bucket = store.bucket_id
    namespace = bucket.split("/")[0]
    role = _role(who, user, namespace)
    token = _token_level(who, bucket, namespace)
    try:
        info = store.call(store.client().bucket_info, bucket)
    except errors.NotFound:
        if role is None:
            why = (f"bucket {bucket} was not found; the Hub answers the same for a private bucket of an "
                   f"account {user} does not belong to ({namespace})")
        else:
            why = f"bucket {bucket} does not exist"
        return Access(bucket, user, NOT_FOUND, role, token, why)
    except errors.NoAccess:
        return Access(bucket, user, NO_ACCESS, role, token,
                      f"the Hub refused {user} reading bucket {bucket} with this token")
    private = getattr(info, "private", None)
    stop = _what_stops_writing(who, user, namespace, role, token, bucket)
    if stop:
        return Access(bucket, user, READ_ONLY, role, token, stop, private)
    how = "your own namespace" if role == "owner" else f"role {role} in {namespace}" if role else "membership"
    held = f", token {token}" if token else ""
    return Access(bucket, user, READ_WRITE, role, token, f"{user} reads and writes {bucket} ({how}{held})", private)


def whoami(store: BucketStore) -> dict:
    """The Hub's whoami for `store`'s credential, within its network budget; failures classified."""
    from agentmem.store import network

    api = store.client()
    try:
        with network.spending(store.budget):
            who = api.whoami()
    except Exception as exc:  # noqa: BLE001 - every failure is classified
        raise network.classify(exc, None, what="the Hub's account check") from None
    if not isinstance(who, dict) or not isinstance(who.get("name"), str) or not who["name"]:
        raise errors.RemoteError("the Hub's account check returned an unexpected reply")
    return who


def _role(who: dict, user: str, namespace: str) -> str | None:
    if namespace == user:
        return "owner"
    for org in who.get("orgs") or []:
        if isinstance(org, dict) and org.get("name") == namespace:
            role = org.get("roleInOrg")
            return role if isinstance(role, str) and role else "member"
    return None


def _token_level(who: dict, bucket: str, namespace: str) -> str | None:
    """The token's own permission on `bucket`, as whoami states it (None: not stated)."""
    auth = who.get("auth")
    access = auth.get("accessToken") if isinstance(auth, dict) else None
    if not isinstance(access, dict):
        return None
    role = access.get("role")
    if role == "fineGrained":
        grained = access.get("fineGrained")
        level = "none"
        for entry in (grained.get("scoped") if isinstance(grained, dict) else None) or []:
            entity = entry.get("entity") if isinstance(entry, dict) else None
            if not isinstance(entity, dict):
                continue
            kind, name = entity.get("type"), entity.get("name")
            if not ((kind == "bucket" and name == bucket) or (kind in ("user", "org") and name == namespace)):
                continue
            permissions = entry.get("permissions") or []
            if "repo.write" in permissions:
                return "fine-grained write"
            if "repo.content.read" in permissions:
                level = "read"
        return f"fine-grained {level}"
    if role in ("write", "admin"):
        return "write"
    if role == "read":
        return "read"
    return None


def _what_stops_writing(who: dict, user: str, namespace: str, role: str | None, token: str | None,
                        bucket: str) -> str:
    """Why this credential may not write `bucket`, as whoami states it; "" when nothing does."""
    if role is None:
        return f"{user} may read {bucket} but is neither {namespace} nor a member of it"
    if role not in (*_WRITING_ROLES, "member"):
        return f"{user}'s role in {namespace} is {role}, which reads but does not write its buckets"
    if token == "read":
        return f"this machine's token for {user} is read-only"
    if token in ("fine-grained read", "fine-grained none"):
        return f"this machine's fine-grained token does not include write access to {bucket}"
    return ""


# -- the user's name, kept for author stamps -------------------------------------------------------


def _endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or _DEFAULT_ENDPOINT).rstrip("/")


def account_path(machine: str | os.PathLike) -> str:
    return os.path.join(machine, ACCOUNT_FILE)


def remember_user(machine: str | os.PathLike, user: str) -> None:
    """Record `user` as this machine's Hub account (best effort: a failure only costs a later whoami)."""
    if cached_user(machine) == user:
        return
    body = json.dumps({"name": user, "endpoint": _endpoint()}, sort_keys=True) + "\n"
    try:
        write_atomic(account_path(machine), body.encode())
    except OSError:
        pass


def cached_user(machine: str | os.PathLike) -> str | None:
    """The Hub account name the last probe found for the current endpoint, without the network;
    None when no probe has recorded one (or it was for another endpoint)."""
    try:
        data = json.loads(read_bytes(account_path(machine), 4096))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("endpoint") != _endpoint():
        return None
    name = data.get("name")
    return name if isinstance(name, str) and name else None
