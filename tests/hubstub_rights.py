"""Who may do what in the loopback Hub: organisations, members' roles, tokens and their scopes.

The model, from /work/shared/reference/hf-teams.md (the Hub's documentation; the exact codes and
shapes are unproved against the live Hub):

- An organisation has members, each with a role: `read`, `contributor`, `write` or `admin`.
  `read` and `contributor` read the organisation's private buckets (whether `contributor` may
  write buckets is not documented, so here it may not); `write` and `admin` read and write them.
- A personal bucket (its namespace is a user) is its owner's alone.
- A token belongs to a user. A classic token writes (`write`) or only reads; a fine-grained token
  carries scoped permissions, each on one bucket (`ns/name`) or on a whole namespace (`ns`), read or
  write. What a token may do is the least of its user's rights and its own.
- A private bucket the user cannot read answers 404 (RepoNotFound), as if it did not exist; a
  caller that can see the bucket but not do this (a read-only member's write, a read-only token's
  write, a fine-grained token without a scope for it) gets 403; an anonymous caller gets 401.

`whoami` answers what huggingface_hub and client code in the field read: `name`, `orgs` with
`roleInOrg`, and `auth.accessToken` (`role`; for a fine-grained token `fineGrained.scoped`, entries
`{entity: {type, name}, permissions: [...]}`, `repo.content.read` / `repo.write`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

ROLES = ("read", "contributor", "write", "admin")
READERS = ROLES  # every member reads the organisation's private buckets
WRITERS = ("write", "admin")
_PERMISSIONS = {"read": ["repo.content.read"], "write": ["repo.content.read", "repo.write"]}


@dataclass
class Token:
    """`write`: a classic token's permission. `scoped`: a fine-grained token's permissions,
    `{bucket ID or namespace: "read" | "write"}` (its `write` is then unused)."""

    user: str
    write: bool
    scoped: dict[str, str] | None = None

    @property
    def fine_grained(self) -> bool:
        return self.scoped is not None


@dataclass
class Org:
    name: str
    members: dict[str, str] = field(default_factory=dict)  # user -> role


@dataclass(frozen=True)
class Decision:
    """What the Hub answers a request: `status` 0 means allowed."""

    status: int = 0
    error: str = ""

    @property
    def allowed(self) -> bool:
        return self.status == 0


ALLOW = Decision()
NOT_FOUND = Decision(404, "Repository not found")
UNAUTHORIZED = Decision(401, "Unauthorized")


class Rights:
    """The organisations of one stand-in and the decisions about them (`Hub.rights`)."""

    def __init__(self) -> None:
        self.orgs: dict[str, Org] = {}

    def add_member(self, org: str, user: str, role: str) -> None:
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}; expected one of {ROLES}")
        self.orgs.setdefault(org, Org(org)).members[user] = role

    def role(self, user: str, namespace: str) -> str | None:
        """"owner" for the user's own namespace, the org role for a member, else None."""
        if namespace == user:
            return "owner"
        org = self.orgs.get(namespace)
        return org.members.get(user) if org is not None else None

    def orgs_of(self, user: str) -> list[tuple[str, str]]:
        return sorted((org.name, org.members[user]) for org in self.orgs.values() if user in org.members)

    # -- decisions ----------------------------------------------------------------------------

    @staticmethod
    def _token_allows(token: Token, bucket_id: str, private: bool, *, write: bool) -> bool:
        if not token.fine_grained:
            return token.write or not write
        if not write and not private:
            return True  # anyone reads a public bucket
        scopes = token.scoped or {}
        granted = scopes.get(bucket_id) or scopes.get(bucket_id.split("/")[0])
        return granted == "write" if write else granted in ("read", "write")

    def bucket(self, token: Token | None, bucket_id: str, private: bool, *, write: bool) -> Decision:
        """May `token` (None: anonymous) read or `write` the existing bucket `bucket_id`?"""
        if token is None:
            return UNAUTHORIZED if private or write else ALLOW
        role = self.role(token.user, bucket_id.split("/")[0])
        if private and role not in ("owner", *READERS):
            return NOT_FOUND  # the Hub does not tell a private bucket of others from a missing one
        if write and role not in ("owner", *WRITERS):
            return Decision(403, f"{token.user} may not write to {bucket_id} (role: {role or 'none'})")
        if not self._token_allows(token, bucket_id, private, write=write):
            what = "write to" if write else "read"
            return Decision(403, f"this token's permissions do not allow it to {what} {bucket_id}")
        return ALLOW

    def create(self, token: Token, namespace: str) -> Decision:
        """May `token` create a bucket in `namespace` (its user's own, or an org it writes)?"""
        if self.role(token.user, namespace) not in ("owner", *WRITERS):
            return Decision(403, f"You don't have the rights to create a bucket under {namespace}")
        if token.fine_grained:
            allowed = (token.scoped or {}).get(namespace) == "write"
        else:
            allowed = token.write
        if not allowed:
            return Decision(403, f"this token's permissions do not allow it to create a bucket under {namespace}")
        return ALLOW

    # -- whoami -------------------------------------------------------------------------------

    def whoami(self, token: Token) -> dict:
        orgs = [{"type": "org", "name": name, "roleInOrg": role} for name, role in self.orgs_of(token.user)]
        access: dict = {"displayName": "stub", "role": "write" if token.write else "read"}
        if token.fine_grained:
            access = {"displayName": "stub", "role": "fineGrained", "fineGrained": {
                "global": [], "canReadGatedRepos": False,
                "scoped": [{"entity": self._entity(target), "permissions": list(_PERMISSIONS[level])}
                           for target, level in sorted((token.scoped or {}).items())],
            }}
        return {"type": "user", "name": token.user, "orgs": orgs,
                "auth": {"type": "access_token", "accessToken": access}}

    def _entity(self, target: str) -> dict:
        if "/" in target:
            return {"type": "bucket", "name": target}
        return {"type": "org" if target in self.orgs else "user", "name": target}
