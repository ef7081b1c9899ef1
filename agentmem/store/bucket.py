"""The Hugging Face Storage Bucket backend of the storage interface.

Built on huggingface_hub's bucket API (pinned in pyproject.toml). Buckets are
mutable and unversioned; append-only is this client's discipline: a paths-info
check before each write, and identical bytes (same Xet hash and size) again is
a no-op. Every call is charged to one network budget (see network.py), and every
failure is raised as an `agentmem.errors` class.

Credentials come from HF_TOKEN or the local HF login (huggingface_hub's
`get_token`), are resolved on each store opening, and never leave this module
(and hubhttp.py, which sends the same token).

Opening a BucketStore imports nothing heavy: `changes` asks the bucket's info and
events feed through hubfeed.py, so a search that finds nothing new never imports
huggingface_hub; listings and transfers import it when they run.

INV store-identity: a bucket's identity is its creation time. A bucket deleted and
created again under the same ID is another store (Offline, like a replaced
folder), and a bucket that is gone is NotFound on every call, never an empty
listing.
"""

from __future__ import annotations

import os
import tempfile

from agentmem.store import network  # first: it sets the environment huggingface_hub reads at import

# isort: split
from agentmem import errors
from agentmem.store import hubfeed, hubhttp
from agentmem.store.base import MAX_OBJECT, Changes, Listed, ObjectInfo, StoreDescription, check_object_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any, TypeVar

    from huggingface_hub import BucketFile, HfApi

    _T = TypeVar("_T")

# Seconds. An `updatedAt` this much older than the Hub's own clock (its Date header) is trusted
# to mean "nothing since": how long a write takes to reach the listing and the feed on the real
# Hub is unmeasured, so a search within this of a change reads the feed once more (one request)
# rather than trust equality (2026-12-01).
SETTLE_SECONDS = 5.0
_Objects = list[ObjectInfo]  # the method `list` hides the builtin inside the class
_Changes = list[dict]
_Listed = list[Listed]
_Paths = list[str]


def new_store_hint() -> errors.NextStep:
    """What to do about a bucket that is not the one this machine used."""
    return errors.NextStep("if the new bucket is the one to use, run `{}`", errors.Command("setup", "--new-store"))



def private_again(bucket_id: str) -> str:
    """How to make a public bucket private again: the hf CLI's command, runnable as printed where the CLI
    is installed (beside this Python, else on PATH); agentmem never changes visibility itself."""
    import shlex
    import shutil
    import sys

    beside = os.path.join(os.path.dirname(sys.executable), "hf")
    hf = beside if os.access(beside, os.X_OK) else shutil.which("hf")
    if hf:
        return (f"make it private again with `{shlex.join([hf, 'buckets', 'settings', bucket_id, '--private'])}` "
                "or in the bucket's settings on the Hub; agentmem never changes visibility")
    return ("make it private again in the bucket's settings on the Hub, or install the hf CLI (`pip install "
            f"huggingface_hub`) and run `hf buckets settings {bucket_id} --private`; agentmem never changes "
            "visibility")


def public_warning(bucket_id: str) -> errors.PublicStore:
    """The one line every search and save says about a bucket that became public."""
    again = private_again(bucket_id)
    return errors.PublicStore(f"bucket {bucket_id} is PUBLIC: anyone can read this memory, and saves to it stop; "
                              f"{again}", hint=again)


def check_bucket_id(bucket_id: str) -> str:
    """`namespace/name`, each a plain Hub name; else InvalidInput."""
    parts = bucket_id.split("/") if isinstance(bucket_id, str) else []
    ok = len(parts) == 2 and all(
        p and len(p) <= 96 and p[0].isalnum() and all(c.isalnum() or c in "-_." for c in p) and ".." not in p
        for p in parts
    )
    if not ok:
        raise errors.InvalidInput(f"invalid bucket ID {bucket_id!r}; expected 'namespace/name'")
    return bucket_id


class BucketStore:
    """A Store on `hf://buckets/<bucket_id>`. `timeout` is the invocation's network budget in seconds."""

    def __init__(self, bucket_id: str, timeout: float | None = None, *, identity: str | None = None,
                 remember: Callable[[str], None] | None = None) -> None:
        self.bucket_id = check_bucket_id(bucket_id)
        self.description = StoreDescription("bucket", bucket_id)
        self.budget = network.Budget(network.resolve_timeout(timeout))
        network.configure_xet(self.budget.seconds)
        self.expected = identity
        self.identity: str | None = None
        self._remember = remember
        self._api: HfApi | None = None
        self._feed: hubhttp.Client | None = None
        self._verified = False
        self._listed: dict = {}  # path -> BucketFile from the last listing, saves a request per get
        self._announced: dict[str, dict] = {}  # path -> the feed's entry for it (size, xetHash, dates)

    # -- plumbing -----------------------------------------------------------------------

    def client(self) -> HfApi:
        if self._api is None:
            from huggingface_hub import HfApi

            network.install()
            self._api = HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None, token=network.hub_token())
        return self._api

    def _prove(self, created: int | None) -> None:
        """Check the bucket is the one this machine knew (INV store-identity); remember it the first time."""
        found = str(created) if created is not None else None
        if found is None:
            return
        if self.expected is not None and found != self.expected:
            raise errors.Offline(
                f"bucket {self.bucket_id} was deleted and created again: it is not the bucket this machine used",
                hint=new_store_hint())
        self.identity = found
        if self.expected is None and self._remember is not None:
            remember, self._remember = self._remember, None
            remember(found)

    def call(self, fn: Callable[..., _T], *args: Any, xet: str | None = None, **kwargs: Any) -> _T:
        """Run one Hub call within the budget, translating its failures.

        `xet` ("read"/"write") marks a call that moves bytes through hf_xet, whose
        failures need the token probe in `_explain_xet_failure`.
        """
        try:
            if xet is not None:
                return _within(self.budget, fn, *args, **kwargs)
            with network.spending(self.budget):
                return fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - every failure is classified
            if xet is not None and _is_xet_failure(exc):
                raise self._explain_xet_failure(exc, write=xet == "write") from None
            raise network.classify(exc, self.bucket_id) from None

    def verify(self) -> None:
        """Check once per store that the bucket exists, is reachable with these credentials, and is private.

        Done before writing (memory never goes into a public bucket). Reads skip it,
        so a refresh with nothing new costs only the listing requests.
        """
        if self._verified:
            return
        api = self.client()
        info = self.call(api.bucket_info, self.bucket_id)
        created = getattr(info, "created_at", None)
        self._prove(round(created.timestamp() * 1000) if created is not None else None)
        if info.private is not True:
            raise errors.UnsafeBucket(
                f"bucket {self.bucket_id} is public; agentmem keeps memory only in private buckets",
                hint=f"{private_again(self.bucket_id)}, or choose another bucket",
            )
        self._verified = True

    def _remote(self, path: str) -> BucketFile | None:
        found = self.call(lambda: list(self.client().get_bucket_paths_info(self.bucket_id, [path])))
        return next((f for f in found if f.path == path), None)

    # -- Store --------------------------------------------------------------------------

    def info(self, path: str) -> ObjectInfo | None:
        check_object_path(path)
        remote = self._remote(path)
        return None if remote is None else ObjectInfo(path, int(remote.size))

    def put(self, path: str, data: bytes) -> None:
        """Upload `data` to `path` unless it is already there. INV append-only.

        Offline or RemoteError here means the outcome is unknown: the caller keeps
        the note pending and retries with the same bytes, which is then a no-op.
        """
        check_object_path(path)
        self.verify()
        remote = self._remote(path)
        if remote is not None:
            try:
                same = _same_content(data, remote)
            except Exception as exc:  # noqa: BLE001 - a local hashing failure, not the Hub's
                raise errors.AgentmemError(
                    f"could not compare {path} with the stored object: {type(exc).__name__}") from None
            if same:
                return
            raise errors.Conflict(f"{self.description.label()}/{path} already holds different bytes")
        self.call(self.client().batch_bucket_files, self.bucket_id, add=[(bytes(data), path)], xet="write")

    def delete(self, path: str) -> bool:
        """Delete the object (a purge) with one `deleteFile` batch operation; True if it was there.
        The bucket's events feed then reports the delete to every machine."""
        check_object_path(path)
        self.verify()
        if self._remote(path) is None:
            return False
        self.call(self.client().batch_bucket_files, self.bucket_id, delete=[path])
        self._listed.pop(path, None)
        self._announced.pop(path, None)
        return True

    def get(self, path: str, limit: int = MAX_OBJECT) -> bytes:
        found = self.get_many([path], limit)[path]
        if isinstance(found, errors.AgentmemError):
            raise found
        return found

    def get_many(self, paths: _Paths, limit: int = MAX_OBJECT) -> dict[str, bytes | errors.AgentmemError]:
        """The bytes of each of `paths`, in one hf_xet transfer: what `get` would return or raise, per path.

        Objects the last listing or the feed described cost no request; the others, one paths-info
        request for all of them. The transfer costs one metadata request and one read token whatever
        the count (a refresh of k notes: k + 3 requests at most, instead of 2 + 3k one by one). A
        failure of the transfer itself raises, as `get` would.
        """
        from pathlib import Path

        out: dict[str, bytes | errors.AgentmemError] = {}
        remote = {}
        for path in paths:
            check_object_path(path)
            known = self._listed.pop(path, None) or self._from_feed(path)
            if known is not None:
                remote[path] = known
        unknown = [p for p in paths if p not in remote]
        if unknown:
            found = self.call(lambda: list(self.client().get_bucket_paths_info(self.bucket_id, unknown)))
            remote.update((f.path, f) for f in found if f.path in unknown)
        label = self.description.label()
        for path in paths:
            if path not in remote:
                out[path] = errors.NotFound(f"{label}/{path} does not exist")
            elif int(remote[path].size) > limit:
                size = remote.pop(path).size
                unit = f"{limit // (1024 * 1024)} MiB" if limit >= 1024 * 1024 else f"{limit} bytes"
                out[path] = errors.Unreadable(f"{label}/{path} is too large ({size} bytes, over {unit}); "
                                              "not downloaded", too_large=True)
        if not remote:
            return out
        with tempfile.TemporaryDirectory(prefix="agentmem-get-") as tmp:
            targets = {path: Path(tmp) / f"object-{n}" for n, path in enumerate(remote)}
            self.call(self.client().download_bucket_files, self.bucket_id,
                      [(remote[path], targets[path]) for path in remote], xet="read")
            for path, target in targets.items():
                out[path] = _downloaded(target, int(remote[path].size), f"{label}/{path}")
        return out

    def list(self, prefix: str) -> list[ObjectInfo]:
        """Every file under `prefix/`, reading every page, or raise. INV complete-listing."""
        check_object_path(prefix)
        api = self.client()
        entries = self.call(lambda: _tree_or_empty(api, self.bucket_id, prefix))
        under = prefix + "/"
        found: dict[str, ObjectInfo] = {}
        for entry in entries:
            if getattr(entry, "type", None) != "file" or not entry.path.startswith(under):
                continue
            try:
                check_object_path(entry.path)
            except errors.InvalidInput:
                continue  # hand-made names agentmem could not address anyway
            found[entry.path] = ObjectInfo(entry.path, int(entry.size))
            self._listed[entry.path] = entry
        return [found[p] for p in sorted(found)]

    def _from_feed(self, path: str) -> BucketFile | None:
        """A BucketFile built from what the feed said about `path`, saving a paths-info request."""
        entry = self._announced.pop(path, None)
        if not entry or not isinstance(entry.get("xetHash"), str) or not isinstance(entry.get("size"), int):
            return None
        from huggingface_hub import BucketFile

        try:
            return BucketFile(type="file", path=path, size=entry["size"], xetHash=entry["xetHash"],
                              mtime=entry.get("mtime"), uploadedAt=entry.get("uploadedAt"))
        except (ValueError, TypeError):
            return None

    def changes(self, prefix: str, token: dict | None, *, wait: float | None = None) -> Changes:
        """What changed below `prefix`: one info request when nothing did; the feed, else a listing.

        `updatedAt` equal to the token's, observed long enough after it (SETTLE_SECONDS by the
        Hub's clock), means nothing changed. A token is only ever read for the bucket it was taken
        from (its creation time, the identity, is in it). Otherwise the events feed from the token's cursor
        (or `since`) gives the changes; a feed that is missing, refuses the resume point or
        answers `reset` falls back to a complete listing.

        `wait` bounds the check (the info request and the feed read, not a listing or a download):
        a Hub that has not answered the info by then raises NoAnswer; a feed then lists instead.
        """
        check_object_path(prefix)
        self.budget.start()
        check = self.budget if wait is None else network.Budget(min(wait, max(0.0, self.budget.remaining())))
        if self._feed is None or self._feed.budget is not check:
            self._feed = hubhttp.Client(check, self.description.label())
        info = hubfeed.bucket_info(self._feed, self.bucket_id)
        self._prove(hubfeed.iso_ms(info.get("createdAt")))
        updated = info.get("updatedAt") if isinstance(info.get("updatedAt"), str) else None
        # The info a search asks anyway says whether the bucket is still private (setup refused a public one).
        warnings: list[str] = [public_warning(self.bucket_id)] if info.get("private") is False else []
        old = token if isinstance(token, dict) and token.get("v") == 1 else {}
        if old.get("store") != self.identity:
            old = {}  # INV store-identity: another bucket's cursor says nothing about this one: list it whole
        fresh = {"v": 1, "store": self.identity, "updated_at": updated,
                 "settled": _settled(updated, info.get("_server_time"))}
        if updated is not None and old.get("updated_at") == updated and old.get("settled") is True:
            return Changes(Changes.SAME, old, "unchanged (bucket updatedAt)", warnings=warnings)
        resume = (("cursor", old["cursor"]) if isinstance(old.get("cursor"), str)
                  else ("since", old["since"]) if isinstance(old.get("since"), str) else None)
        how = "listing (first look)"
        if resume is not None:
            feed = hubfeed.read_feed(self._feed, self.bucket_id, resume)
            if feed.outcome == "ready":
                added, removed = self._net_changes(prefix, feed.changes)
                kept = {"cursor": feed.cursor} if feed.cursor else {k: old[k] for k in ("cursor", "since") if k in old}
                return Changes(Changes.DELTA, fresh | kept, f"events feed ({len(feed.changes)} change(s))",
                               added=added, removed=removed, warnings=warnings)
            how = f"listing (the events feed {feed.detail})"
        listing = [Listed(o.path, o.size) for o in self.list(prefix)]
        since = updated or _iso_before(info.get("_server_time"))
        return Changes(Changes.FULL, fresh | ({"since": since} if since else {}), how, listing=listing,
                       warnings=warnings)

    def _net_changes(self, prefix: str, changes: _Changes) -> tuple[_Listed, _Paths]:
        """The feed's changes below `prefix/`, last one per path winning: what to fetch and what to drop."""
        final: dict[str, dict] = {}
        for change in changes:
            if change["path"].startswith(prefix + "/"):
                final[change["path"]] = change
        added: _Listed = []
        removed: _Paths = []
        for path, change in sorted(final.items()):
            if change["op"] == "delete":
                removed.append(path)
                continue
            size = change.get("size") if isinstance(change.get("size"), int) else None
            added.append(Listed(path, size))
            self._announced[path] = change
        return added, removed

    # -- classification of hf_xet failures ---------------------------------------------

    def _explain_xet_failure(self, exc: BaseException, *, write: bool) -> errors.AgentmemError:
        """hf_xet reports an unreachable Hub and a refused Xet token alike; ask the token endpoint why."""
        from huggingface_hub.utils._xet import (
            XetTokenType,
            _fetch_xet_connection_info_with_url,
            xet_connection_info_refresh_url,
        )

        api = self.client()
        url = xet_connection_info_refresh_url(
            token_type=XetTokenType.WRITE if write else XetTokenType.READ,
            repo_id=self.bucket_id,
            repo_type="bucket",
            endpoint=api.endpoint,
        )
        try:
            self.call(_fetch_xet_connection_info_with_url, url, api._build_hf_headers())
        except errors.AgentmemError as probe:
            return probe
        return errors.RemoteError(f"{self.description.label()}: the Xet transfer failed ({type(exc).__name__})")


def _downloaded(target: Path, size: int, label: str) -> bytes | errors.AgentmemError:
    """The bytes a transfer wrote to `target`, or the RemoteError of a file missing or of another size."""
    try:
        data = target.read_bytes()
    except FileNotFoundError:
        return errors.RemoteError(f"{label}: download produced no file")
    if len(data) != size:
        return errors.RemoteError(f"{label}: downloaded {len(data)} bytes, expected {size}")
    return data


def _settled(updated: str | None, server_time: float | None) -> bool:
    """Whether `updatedAt` is old enough, by the Hub's clock, to trust "nothing since"."""
    stamp = hubfeed.iso_ms(updated)
    return stamp is not None and server_time is not None and server_time - stamp / 1000 >= SETTLE_SECONDS


def _iso_before(server_time: float | None) -> str | None:
    """A `since=` instant safely before a listing that had no `updatedAt` to start from."""
    if server_time is None:
        return None
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(server_time - SETTLE_SECONDS))


def _tree_or_empty(api: HfApi, bucket_id: str, prefix: str) -> list:
    """All tree entries under `prefix`. A folder nobody wrote yet is empty, whether the Hub
    answers an empty page or a 404 for it (a missing bucket stays an error)."""
    from huggingface_hub.errors import BucketNotFoundError, HfHubHTTPError

    try:
        return list(api.list_bucket_tree(bucket_id, prefix, recursive=True))
    except BucketNotFoundError:
        raise
    except HfHubHTTPError as exc:
        if exc.response is not None and exc.response.status_code == 404:
            return []
        raise


def _within(budget: network.Budget, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run an hf_xet transfer in a worker thread and stop waiting when the budget is spent.

    hf_xet's timeouts apply per attempt and its token requests do not pass through
    our HTTP transport, so this is the backstop that keeps the deadline. A transfer
    left behind may still finish: that is an unknown outcome, and the caller keeps
    the note pending (a retry with the same bytes is then a no-op).
    """

    def run() -> Any:
        with network.spending(budget):
            return fn(*args, **kwargs)

    return network.call_within(budget, run)


def _is_xet_failure(exc: BaseException) -> bool:
    """hf_xet raises built-in ConnectionError/RuntimeError or its own classes, never huggingface_hub's."""
    from_xet = type(exc).__module__.startswith(("hf_xet", "builtins"))
    if from_xet and isinstance(exc, (ConnectionError, RuntimeError, OSError)):
        return True
    return type(exc).__name__.startswith("Xet")


def _same_content(data: bytes, remote: BucketFile) -> bool:
    """Whether `data` is what the bucket holds, by size and Xet hash (computed locally, nothing uploaded)."""
    if len(data) != int(remote.size):
        return False
    from pathlib import Path

    import hf_xet

    with tempfile.TemporaryDirectory(prefix="agentmem-hash-") as tmp:
        local = Path(tmp) / "object"
        local.write_bytes(data)
        (digest,) = hf_xet.hash_files([str(local)])
    return digest.hash == remote.xet_hash
