"""The Hugging Face Storage Bucket backend of the storage interface.

Built on huggingface_hub's bucket API (pinned in pyproject.toml). Buckets are
mutable and unversioned; append-only is this client's discipline: a paths-info
check before each write, and identical bytes (same Xet hash and size) again is
a no-op. Every call is charged to one network budget (see network.py), and every
failure is raised as an `agentmem.errors` class.

Credentials come from HF_TOKEN or the local HF login (huggingface_hub's
`get_token`), are resolved on each store opening, and never leave this module.
"""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path
from typing import Any

from agentmem.store import network  # first: it sets the environment huggingface_hub reads at import

# isort: split
from huggingface_hub import HfApi, get_token

from agentmem import errors
from agentmem.store.base import ObjectInfo, StoreDescription, check_object_path


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


def hub_token() -> str:
    """The local HF credential, or NotAuthenticated with login instructions (never a request for it)."""
    token = get_token()
    if not token:
        raise errors.NotAuthenticated("no Hugging Face credentials on this machine", hint=network.LOGIN_HINT)
    return token


class BucketStore:
    """A Store on `hf://buckets/<bucket_id>`. `timeout` is the invocation's network budget in seconds."""

    def __init__(self, bucket_id: str, timeout: float | None = None):
        self.bucket_id = check_bucket_id(bucket_id)
        self.description = StoreDescription("bucket", bucket_id)
        self.budget = network.Budget(network.resolve_timeout(timeout))
        network.configure_xet(self.budget.seconds)
        network.install()
        self._api: HfApi | None = None
        self._verified = False
        self._listed: dict[str, Any] = {}  # path -> BucketFile from the last listing, saves a request per get

    # -- plumbing -----------------------------------------------------------------------

    def client(self) -> HfApi:
        if self._api is None:
            self._api = HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None, token=hub_token())
        return self._api

    def call(self, fn, *args, xet: str | None = None, **kwargs):
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
        if info.private is not True:
            raise errors.UnsafeBucket(
                f"bucket {self.bucket_id} is public; agentmem keeps memory only in private buckets",
                hint="make it private yourself on the Hub, or choose another bucket; agentmem never changes visibility",
            )
        self._verified = True

    def _remote(self, path: str):
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

    def get(self, path: str) -> bytes:
        check_object_path(path)
        remote = self._listed.pop(path, None) or self._remote(path)
        if remote is None:
            raise errors.NotFound(f"{self.description.label()}/{path} does not exist")
        with tempfile.TemporaryDirectory(prefix="agentmem-get-") as tmp:
            target = Path(tmp) / "object"
            self.call(self.client().download_bucket_files, self.bucket_id, [(remote, target)], xet="read")
            try:
                data = target.read_bytes()
            except FileNotFoundError:
                raise errors.RemoteError(f"{self.description.label()}/{path}: download produced no file") from None
        if len(data) != int(remote.size):
            raise errors.RemoteError(
                f"{self.description.label()}/{path}: downloaded {len(data)} bytes, expected {remote.size}"
            )
        return data

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


def _within(budget: network.Budget, fn, *args, **kwargs):
    """Run an hf_xet transfer in a worker thread and stop waiting when the budget is spent.

    hf_xet's timeouts apply per attempt and its token requests do not pass through
    our HTTP transport, so this is the backstop that keeps the deadline. A transfer
    left behind may still finish: that is an unknown outcome, and the caller keeps
    the note pending (a retry with the same bytes is then a no-op).
    """
    box: dict = {}

    def run():
        try:
            with network.spending(budget):
                box["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            box["error"] = exc

    worker = threading.Thread(target=run, name="agentmem-xet-transfer", daemon=True)
    worker.start()
    worker.join(max(0.0, budget.remaining()))
    if worker.is_alive():
        raise errors.BudgetSpent()
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _is_xet_failure(exc: BaseException) -> bool:
    """hf_xet raises built-in ConnectionError/RuntimeError or its own classes, never huggingface_hub's."""
    from_xet = type(exc).__module__.startswith(("hf_xet", "builtins"))
    if from_xet and isinstance(exc, (ConnectionError, RuntimeError, OSError)):
        return True
    return type(exc).__name__.startswith("Xet")


def _same_content(data: bytes, remote) -> bool:
    """Whether `data` is what the bucket holds, by size and Xet hash (computed locally, nothing uploaded)."""
    if len(data) != int(remote.size):
        return False
    import hf_xet

    with tempfile.TemporaryDirectory(prefix="agentmem-hash-") as tmp:
        local = Path(tmp) / "object"
        local.write_bytes(data)
        (digest,) = hf_xet.hash_files([str(local)])
    return digest.hash == remote.xet_hash
