"""Bucket provisioning: resolve which bucket a machine uses, then connect to it or create it.

- resolve: a supplied ID first, then the configured bucket, else `<user>/agent-memory`.
- connect: the bucket must exist, be private, live in the user's namespace or one
  of their organisations', and be readable and writable with these credentials.
- create: make a private bucket at the resolved name; if the name is taken, the
  existing bucket must pass the same checks before it is reused.

INV no-replacement: a public bucket is refused and its visibility never
changed; an inaccessible bucket is an error; no other name is ever tried.

The write check leaves nothing behind: it asks the Hub for an Xet write token
(what an upload asks for first), which a read-only token or a non-member is
refused, and the read check is a paths-info query for a path nobody writes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from agentmem import errors
from agentmem.store.base import StoreDescription

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from tomlkit import TOMLDocument

    from agentmem.store.bucket import BucketStore

DEFAULT_BUCKET_NAME = "agent-memory"
_READ_PROBE_PATH = "agentmem-access-check"


@dataclass
class Provisioned:
    bucket_id: str
    action: str  # "connected" | "created" | "reused"
    user: str

    @property
    def store(self) -> StoreDescription:
        return StoreDescription("bucket", self.bucket_id)

    def to_json(self) -> dict:
        return {"status": "ok", "bucket": self.bucket_id, "action": self.action, "user": self.user, "private": True}

    def text(self) -> str:
        verb = {"connected": "connected to", "created": "created", "reused": "reusing existing"}[self.action]
        return f"{verb} private bucket {self.bucket_id} (hf://buckets/{self.bucket_id}) as {self.user}"


class _Session:
    """One invocation's Hub access: one network budget, the local credentials, and `whoami`."""

    def __init__(self, timeout: float | None):
        from agentmem.store import network
        from agentmem.store.bucket import BucketStore

        self._network = network
        self._store_cls = BucketStore
        self.token = network.hub_token()  # NotAuthenticated with login instructions when absent
        self.timeout = timeout
        self.budget = network.Budget(network.resolve_timeout(timeout))
        self._who: dict | None = None

    def store(self, bucket_id: str) -> BucketStore:
        store = self._store_cls(bucket_id, timeout=self.budget.seconds)
        store.budget = self.budget  # one budget for the whole invocation
        return store

    def whoami(self) -> dict:
        if self._who is None:
            from huggingface_hub import HfApi

            api = HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None, token=self.token)
            try:
                with self._network.spending(self.budget):
                    who = api.whoami()
            except Exception as exc:  # noqa: BLE001 - classified
                raise self._network.classify(exc, None, what="the Hub's account check") from None
            if not isinstance(who, dict) or not isinstance(who.get("name"), str):
                raise errors.RemoteError("the Hub's account check returned an unexpected reply")
            self._who = who
        return self._who

    def namespaces(self) -> set[str]:
        who = self.whoami()
        orgs = {o.get("name") for o in who.get("orgs") or [] if isinstance(o, dict)}
        return {who["name"], *(o for o in orgs if isinstance(o, str))}


def resolve_bucket_id(supplied: str | None, configured: StoreDescription | None, user: str | None) -> tuple[str, bool]:
    """(bucket ID, whether it was named explicitly). Explicit means: connect, never create."""
    from agentmem.store.bucket import check_bucket_id

    if supplied:
        return check_bucket_id(supplied), True
    if configured is not None and configured.kind == "bucket":
        return check_bucket_id(configured.location), True
    if not user:
        raise errors.NotAuthenticated("cannot pick a default bucket without knowing the account")
    return check_bucket_id(f"{user}/{DEFAULT_BUCKET_NAME}"), False


def _check_namespace(session: _Session, bucket_id: str) -> None:
    namespace = bucket_id.split("/")[0]
    if namespace not in session.namespaces():
        raise errors.NoAccess(
            f"bucket {bucket_id} belongs to {namespace}, which is neither you "
            f"({session.whoami()['name']}) nor one of your organisations",
            hint="use a bucket in your own namespace or an organisation you belong to",
        )


def _check_access(session: _Session, bucket_id: str) -> None:
    """Exists, private, readable, writable. Writes nothing."""
    from huggingface_hub.utils._xet import (
        XetTokenType,
        _fetch_xet_connection_info_with_url,
        xet_connection_info_refresh_url,
    )

    store = session.store(bucket_id)
    store.verify()  # exists (NotFound), credentials accepted, private (UnsafeBucket)
    api = store.client()
    store.call(lambda: list(api.get_bucket_paths_info(bucket_id, [_READ_PROBE_PATH])))
    url = xet_connection_info_refresh_url(
        token_type=XetTokenType.WRITE, repo_id=bucket_id, repo_type="bucket", endpoint=api.endpoint
    )
    try:
        store.call(_fetch_xet_connection_info_with_url, url, api._build_hf_headers())
    except errors.NoAccess:
        raise errors.NoAccess(
            f"bucket {bucket_id} is readable but not writable with this machine's credentials",
            hint="use a token with write access (fine-grained: write to this bucket), then log in again",
        ) from None


def connect(bucket_id: str, *, timeout: float | None = None, session: _Session | None = None) -> Provisioned:
    """Verify an existing bucket for use. Creates and changes nothing."""
    from agentmem.store.bucket import check_bucket_id

    session = session or _Session(timeout)
    check_bucket_id(bucket_id)
    _check_namespace(session, bucket_id)
    try:
        _check_access(session, bucket_id)
    except errors.NotFound:  # in a namespace of this account's: it can be made, and this says how
        raise errors.NotFound(f"bucket {bucket_id} does not exist",
                              hint=errors.NextStep("create it (private) and make it this machine's store with `{}`",
                                                   errors.Command("bucket", "create", "--bucket", bucket_id,
                                                                  "--save"))) from None
    return Provisioned(bucket_id, "connected", session.whoami()["name"])


def create(bucket_id: str | None = None, *, timeout: float | None = None,
           session: _Session | None = None) -> Provisioned:
    """Create a private bucket (default `<user>/agent-memory`), or verify and reuse it if it exists."""
    from agentmem.store.bucket import check_bucket_id

    session = session or _Session(timeout)
    user = session.whoami()["name"]
    bucket_id = check_bucket_id(bucket_id or f"{user}/{DEFAULT_BUCKET_NAME}")
    _check_namespace(session, bucket_id)
    store = session.store(bucket_id)
    action = "reused"
    try:
        store.verify()
    except errors.NotFound:
        action = _create_private(store, bucket_id)
    _check_access(session, bucket_id)
    return Provisioned(bucket_id, action, user)


def _create_private(store: BucketStore, bucket_id: str) -> str:
    from huggingface_hub.errors import HfHubHTTPError

    api = store.client()

    def attempt() -> str:
        try:
            api.create_bucket(bucket_id, private=True, exist_ok=False)
            return "created"
        except HfHubHTTPError as exc:
            if exc.response is not None and exc.response.status_code == 409:
                return "reused"  # made meanwhile by another machine: verified below like any existing one
            raise

    return store.call(attempt)


def ensure(machine: str | os.PathLike[str], supplied: str | None = None, *,
           timeout: float | None = None) -> Provisioned:
    """What setup runs: connect to a supplied or configured bucket, else create the default one."""
    from agentmem import config

    configured = None
    try:
        configured = config.load(machine).store
    except errors.NotConfigured:
        configured = None
    session = _Session(timeout)
    if supplied or (configured is not None and configured.kind == "bucket"):
        bucket_id, _ = resolve_bucket_id(supplied, configured, None)
        return connect(bucket_id, session=session)
    return create(None, session=session)


def save_to_config(machine: str | os.PathLike[str], bucket_id: str) -> None:
    """Record the verified bucket as this machine's store (atomic, keeps the rest of config.toml)."""
    from agentmem import config_edit
    from agentmem.store.bucket import check_bucket_id

    check_bucket_id(bucket_id)

    def change(doc: TOMLDocument) -> None:
        import tomlkit

        table = doc.get("store")
        if table is None:
            table = tomlkit.table()
            doc["store"] = table
        table["kind"] = "bucket"
        table["location"] = bucket_id

    config_edit.update(machine, change)
