"""A loopback stand-in for the Hugging Face Hub's bucket endpoints, for driving the real clients.

It speaks the requests huggingface_hub 2.4.0 and hf_xet 1.8.0 make for buckets
(see /work/shared/reference/hf-buckets.md): create, info (with `updatedAt`),
whoami-v2, tree with Link pagination, paths-info, batch (ndjson), resolve
GET/HEAD, the xet read/write token endpoints, and the bucket events feed
(server-sent events: `changes` batches, `ready`, `reset`, `reconnect`), which
`Hub.feed` can make answer 404/501/400, `reset`, stall before `ready`, or end a
first stream with `reconnect`. The token endpoints answer `casUrl: local:///<dir>`,
so the real hf_xet client chunks, uploads and reconstructs file bytes in a
folder: no Xet server is involved.

Users, tokens (write, read-only or fine-grained), organisations with members' roles
(tests/hubstub_rights.py, which decides every bucket request), private and public
buckets, injectable faults and a request log live on `Hub`. It runs as a thread of the
test process (`Hub.start()`), bound to 127.0.0.1 only.
"""

from __future__ import annotations

import json
import re
import secrets
import socket
import struct
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from tests.hubstub_feed import FeedHandler
from tests.hubstub_misbehave import MisbehaveHandler
from tests.hubstub_rights import Decision, Rights, Token

# ----------------------------------------------------------------------------- state


@dataclass
class StoredFile:
    path: str
    size: int
    xet_hash: str
    mtime_ms: int
    uploaded_ms: int


@dataclass
class Bucket:
    id: str
    private: bool
    created_ms: int
    files: dict[str, StoredFile] = field(default_factory=dict)
    updated_ms: int = 0  # the last change (the info's updatedAt); the creation until then
    events: list[dict] = field(default_factory=list)  # every change, in order: {"seq", "at_ms", "change"}


@dataclass
class Fault:
    """One injected failure. `route` names an endpoint (see `_route`), or "*" for any.

    action: "status" (answer `status`), "drop" (close the connection with no reply),
    "drop-after-apply" (batch only: apply the batch, then drop the reply),
    "slow" (sleep `delay` seconds, then answer normally), and the misbehaviours of
    tests/hubstub_misbehave.py: "trickle" (a byte every `delay` seconds), "endless" (one line
    that never ends), "hang" (never answer).
    """

    route: str
    action: str
    status: int = 500
    times: int | None = None  # None: every matching request
    page: int | None = None  # tree only: 1-based page number
    delay: float = 0.0
    after: int = 0  # let this many matching requests through first
    hits: int = 0
    seen: int = 0
    sent: int = 0  # trickle/endless: body bytes written


@dataclass
class LoggedRequest:
    method: str
    route: str
    path: str
    status: int
    bytes_in: int
    bytes_out: int
    file_bytes: int = 0  # for resolve: the size of the file the client is about to download


def _iso_ms(ms: int) -> str:
    dt = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _now_ms() -> int:
    return int(time.time() * 1000)


def _xet_hex(raw: bytes) -> str:
    """Xet prints a 32-byte hash as four little-endian u64 words."""
    return "".join(raw[i : i + 8][::-1].hex() for i in range(0, 32, 8))


_BOOKEND = b"\xff" * 32
_FLAG_VERIFICATION = 0x80000000
_FLAG_METADATA_EXT = 0x40000000


def shard_file_sizes(shard: bytes) -> dict[str, int]:
    """Read the file-info section of an Xet shard: xet hash -> file size.

    Layout (MDB shard v2): a 48-byte header, then per file a 48-byte header
    (hash, flags u32, entry count u32, 8 spare bytes), that many 48-byte segment
    entries (xorb hash, flags, unpacked bytes u32, chunk range), optional
    verification entries and a metadata extension, until a bookend of 0xff bytes.
    """
    sizes: dict[str, int] = {}
    off = 48
    while off + 48 <= len(shard):
        raw_hash = shard[off : off + 32]
        if raw_hash == _BOOKEND:
            break
        flags, count = struct.unpack_from("<II", shard, off + 32)
        off += 48
        total = 0
        for i in range(count):
            total += struct.unpack_from("<I", shard, off + i * 48 + 36)[0]
        off += 48 * count
        if flags & _FLAG_VERIFICATION:
            off += 48 * count
        if flags & _FLAG_METADATA_EXT:
            off += 48
        sizes[_xet_hex(raw_hash)] = total
    return sizes


class Hub:
    """The stand-in's state and its server thread."""

    def __init__(self, root: Path, *, page_size: int = 50):
        self.root = Path(root)
        self.cas_dir = self.root / "cas"
        self.cas_dir.mkdir(parents=True, exist_ok=True)
        self.page_size = page_size
        self.missing_prefix_404 = False  # answer a tree request for an unused prefix with 404, not []
        self.users: set[str] = set()
        self.rights = Rights()  # organisations and their members' roles
        self.tokens: dict[str, Token] = {}
        self.buckets: dict[str, Bucket] = {}
        self.faults: list[Fault] = []
        self.log: list[LoggedRequest] = []
        self.lock = threading.RLock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.port: int | None = None
        self._known_sizes: dict[str, int] = {}
        self._connections: set[socket.socket] = set()
        self.released = threading.Event()  # set by stop(): misbehaving answers end
        # The events feed: "ok", "404", "501", "400", "reset", "stall" (pings, never `ready`),
        # "reconnect" (the first stream ends with `reconnect` after one batch), "malformed"
        # (every `changes` batch's data breaks off; `ready` follows as usual).
        self.feed = "ok"
        self.feed_batch = 2  # changes per `changes` event
        self.feed_keep: int | None = None  # replay buffer: a cursor older than the last N changes gets `reset`
        self.info_updated_at = True  # False: the info omits updatedAt, as an older deployment might
        self._reconnected = False

    # -- setup ------------------------------------------------------------------------

    def add_user(self, name: str, *, orgs: tuple[str, ...] = ()) -> str:
        """Create a user (a `write` member of each of `orgs`) and return a write token for it."""
        with self.lock:
            self.users.add(name)
            for org in orgs:
                self.rights.add_member(org, name, "write")
        return self.add_token(name, write=True)

    def add_member(self, org: str, user: str, role: str) -> None:
        """Make `user` a member of `org` (created on first use) with `role`: read, contributor, write, admin."""
        with self.lock:
            self.users.add(user)
            self.rights.add_member(org, user, role)

    def add_token(self, user: str, *, write: bool = True, scoped: dict[str, str] | None = None) -> str:
        """A classic token (`write` or read-only), or with `scoped` a fine-grained one:
        `{bucket ID or namespace: "read" | "write"}`, and nothing else."""
        kind = "fg" if scoped is not None else "rw" if write else "ro"
        token = f"hf_stub_{user}_{kind}_{secrets.token_hex(6)}"
        with self.lock:
            self.tokens[token] = Token(user, write, dict(scoped) if scoped is not None else None)
        return token

    def add_bucket(self, bucket_id: str, *, private: bool = True) -> Bucket:
        with self.lock:
            now = _now_ms()
            bucket = Bucket(bucket_id, private, now, updated_ms=now)
            self.buckets[bucket_id] = bucket
            return bucket

    def record(self, bucket: Bucket, op: str, path: str, stored: StoredFile | None = None) -> None:
        """Note one change for the info's updatedAt and the events feed (call with the lock held)."""
        now = _now_ms()
        change: dict = {"path": path, "op": op}
        if stored is not None:
            change.update(size=stored.size, xetHash=stored.xet_hash, uploadedAt=_iso_ms(stored.uploaded_ms),
                          mtime=_iso_ms(stored.mtime_ms))
        seq = bucket.events[-1]["seq"] + 1 if bucket.events else 1
        bucket.events.append({"seq": seq, "at_ms": now, "change": change})
        bucket.updated_ms = max(now, bucket.updated_ms)

    def delete_file(self, bucket_id: str, path: str) -> None:
        """Remove a file server-side (as its owner might), recording the change."""
        with self.lock:
            bucket = self.buckets[bucket_id]
            if bucket.files.pop(path, None) is not None:
                self.record(bucket, "delete", path)

    def inject(self, route: str, action: str = "status", **kwargs) -> Fault:
        fault = Fault(route, action, **kwargs)
        with self.lock:
            self.faults.append(fault)
        return fault

    def clear_faults(self) -> None:
        with self.lock:
            self.faults.clear()

    def clear_log(self) -> None:
        with self.lock:
            self.log.clear()

    def requests(self, route: str | None = None, method: str | None = None) -> list[LoggedRequest]:
        with self.lock:
            return [
                r for r in self.log if (route is None or r.route == route) and (method is None or r.method == method)
            ]

    # -- server lifecycle -------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Hub:
        self.released.clear()
        if self.port is None:
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                self.port = probe.getsockname()[1]
        handler = type("BoundHandler", (_Handler,), {"hub": self})
        self._server = _QuietServer(("127.0.0.1", self.port), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="hubstub", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening: connections to the port are refused until `start()` again."""
        self.released.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
            self._thread = None
        with self.lock:
            open_connections, self._connections = list(self._connections), set()
        for conn in open_connections:  # kept-alive connections would otherwise still be served
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    # -- storage helpers --------------------------------------------------------------

    def file_size_for(self, xet_hash: str) -> int | None:
        """Size of the file with this hash, read from the shards the client uploaded."""
        with self.lock:
            if xet_hash in self._known_sizes:
                return self._known_sizes[xet_hash]
            for shard in self.cas_dir.rglob("*.mdb"):
                try:
                    self._known_sizes.update(shard_file_sizes(shard.read_bytes()))
                except (OSError, struct.error):
                    continue
            return self._known_sizes.get(xet_hash)

    def read_file_bytes(self, bucket_id: str, path: str) -> bytes:
        """Reconstruct a stored file's bytes from the local CAS with hf_xet."""
        import hf_xet

        stored = self.buckets[bucket_id].files[path]
        if stored.size == 0:
            return b""
        # A fresh session, dropped on return: the local CAS is a database one
        # process holds at a time, and a CLI run as a subprocess may need it next.
        session = hf_xet.XetSession()
        with tempfile.TemporaryDirectory(dir=self.root) as tmp:
            out = Path(tmp) / "file"
            expiry = int(time.time()) + 3600
            with session.new_file_download_group(
                endpoint=f"local://{self.cas_dir}", token="stub", token_expiry_unix_secs=expiry
            ) as group:
                group.start_download_file(hf_xet.XetFileInfo(stored.xet_hash, stored.size), str(out))
            data = out.read_bytes()
        del session
        return data

    def put_file(self, bucket_id: str, path: str, data: bytes) -> None:
        """Place a file server-side (as another machine would), through hf_xet's local CAS."""
        import hf_xet

        expiry = int(time.time()) + 3600
        session = hf_xet.XetSession()
        with session.new_upload_commit(
            endpoint=f"local://{self.cas_dir}", token="stub", token_expiry_unix_secs=expiry
        ) as commit:
            handle = commit.start_upload_bytes(data, sha256=hf_xet.SKIP_SHA256)
        info = handle.result().xet_info
        del handle, commit, session  # release the local CAS for other processes
        now = _now_ms()
        with self.lock:
            self._known_sizes[info.hash] = info.file_size
            bucket = self.buckets[bucket_id]
            op = "update" if path in bucket.files else "add"
            bucket.files[path] = StoredFile(path, info.file_size, info.hash, now, now)
            self.record(bucket, op, path, bucket.files[path])


# ----------------------------------------------------------------------------- HTTP


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        """Clients that hang up (timeouts, dropped faults) are expected here, not worth a traceback."""
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError, OSError)):
            super().handle_error(request, client_address)


class _Dropped(Exception):
    """Close the connection without a reply."""


_BUCKET = r"/api/buckets/(?P<ns>[^/]+)/(?P<name>[^/?]+)"
_ROUTES = [
    ("whoami", "GET", re.compile(r"^/api/whoami-v2$")),
    ("agent-harnesses", "GET", re.compile(r"^/api/agent-harnesses$")),
    ("xet-token", "GET", re.compile(_BUCKET + r"/xet-(?P<kind>read|write)-token(?:/[^/]*)?$")),
    ("tree", "GET", re.compile(_BUCKET + r"/tree(?:/(?P<prefix>.*))?$")),
    ("events", "GET", re.compile(_BUCKET + r"/events$")),
    ("paths-info", "POST", re.compile(_BUCKET + r"/paths-info$")),
    ("batch", "POST", re.compile(_BUCKET + r"/batch$")),
    ("create", "POST", re.compile(_BUCKET + r"$")),
    ("info", "GET", re.compile(_BUCKET + r"$")),
    ("settings", "PUT", re.compile(_BUCKET + r"/settings$")),
    ("resolve", "HEAD", re.compile(r"^/buckets/(?P<ns>[^/]+)/(?P<name>[^/]+)/resolve/(?P<path>.+)$")),
    ("resolve", "GET", re.compile(r"^/buckets/(?P<ns>[^/]+)/(?P<name>[^/]+)/resolve/(?P<path>.+)$")),
]


class _Handler(FeedHandler, MisbehaveHandler, BaseHTTPRequestHandler):
    hub: Hub
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        with self.hub.lock:
            self.hub._connections.add(self.connection)

    def finish(self):
        with self.hub.lock:
            self.hub._connections.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    def log_message(self, format, *args):  # noqa: A002 - silence the default stderr log
        pass

    # One entry point for every method.
    def do_GET(self):
        self._serve("GET")

    def do_HEAD(self):
        self._serve("HEAD")

    def do_POST(self):
        self._serve("POST")

    def do_PUT(self):
        self._serve("PUT")

    def do_DELETE(self):
        self._serve("DELETE")

    # -- plumbing ---------------------------------------------------------------------

    def _serve(self, method: str) -> None:
        split = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        route, match = "unknown", None
        for name, verb, pattern in _ROUTES:
            if verb == method and (m := pattern.match(split.path)):
                route, match = name, m
                break
        self._route = route
        self._file_bytes = 0
        query = parse_qs(split.query)
        page = int(query.get("cursor", ["0"])[0]) // max(self.hub.page_size, 1) + 1 if route == "tree" else None
        try:
            fault = self._take_fault(route, page)
            if fault is not None and fault.action == "slow":
                time.sleep(fault.delay)
                fault = None
            if fault is not None and fault.action in ("trickle", "endless", "hang"):
                self._misbehave(fault, method, split.path)
                return
            if fault is not None and fault.action == "drop":
                raise _Dropped()
            if fault is not None and fault.action == "status":
                self._send_json(fault.status, {"error": f"injected {fault.status}"})
                return
            if match is None:
                self._send_json(404, {"error": f"no route for {method} {split.path}"})
                return
            handler = getattr(self, "_h_" + route.replace("-", "_"))
            handler(method, match, query, body, split, drop_reply=fault is not None)
        except _Dropped:
            self._log(method, split.path, 0, len(body), 0)
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _take_fault(self, route: str, page: int | None) -> Fault | None:
        with self.hub.lock:
            for fault in self.hub.faults:
                if fault.route not in ("*", route):
                    continue
                if fault.page is not None and fault.page != page:
                    continue
                fault.seen += 1
                if fault.seen <= fault.after:
                    continue
                if fault.times is not None and fault.hits >= fault.times:
                    continue
                fault.hits += 1
                return fault
        return None

    def _log(self, method: str, path: str, status: int, bytes_in: int, bytes_out: int) -> None:
        with self.hub.lock:
            self.hub.log.append(
                LoggedRequest(method, self._route, path, status, bytes_in, bytes_out, self._file_bytes)
            )

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None, *, head: bool = False):
        # logged before the reply goes out: a client that has its answer finds the request in the log
        length = int(self.headers.get("Content-Length") or 0)
        self._log(self.command, urlsplit(self.path).path, status, length, 0 if head else len(body))
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if "Content-Length" not in (headers or {}):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _send_json(self, status: int, payload, headers: dict[str, str] | None = None):
        extra = {"Content-Type": "application/json", **(headers or {})}
        if status >= 400 and isinstance(payload, dict) and "error" in payload:
            extra.setdefault("X-Error-Message", payload["error"])
        self._send(status, json.dumps(payload).encode(), extra, head=self.command == "HEAD")

    def _base(self) -> str:
        return f"http://{self.headers.get('Host') or f'127.0.0.1:{self.hub.port}'}"

    # -- auth -------------------------------------------------------------------------

    def _caller(self) -> Token | None:
        """The caller's token, None if anonymous. Answers 401 itself for a bad token (returns False)."""
        auth = self.headers.get("Authorization") or ""
        if not auth:
            return None
        token = auth.removeprefix("Bearer ").strip()
        with self.hub.lock:
            return self.hub.tokens.get(token, False)  # type: ignore[return-value]

    def _deny_bad_token(self) -> None:
        self._send_json(401, {"error": "Invalid credentials in Authorization header"})

    def _refuse(self, decision: Decision) -> None:
        headers = {"X-Error-Code": "RepoNotFound"} if decision.status == 404 else None
        self._send_json(decision.status, {"error": decision.error}, headers)

    def _bucket_for(self, match, *, write: bool) -> Bucket | None:
        """The bucket named in the URL if the caller may read it (or `write` it); otherwise answer and
        return None. Every bucket route asks this (tests/hubstub_rights.py decides)."""
        caller = self._caller()
        if caller is False:
            self._deny_bad_token()
            return None
        bucket_id = f"{match['ns']}/{match['name']}"
        with self.hub.lock:
            bucket = self.hub.buckets.get(bucket_id)
            decision = (Decision(404, "Repository not found") if bucket is None
                        else self.hub.rights.bucket(caller, bucket_id, bucket.private, write=write))
        if not decision.allowed:
            self._refuse(decision)
            return None
        return bucket

    # -- endpoints --------------------------------------------------------------------

    def _h_whoami(self, method, match, query, body, split, drop_reply):
        caller = self._caller()
        if caller is False or caller is None:
            self._deny_bad_token()
            return
        with self.hub.lock:
            answer = self.hub.rights.whoami(caller)
        self._send_json(200, answer)

    def _h_agent_harnesses(self, method, match, query, body, split, drop_reply):
        # huggingface_hub fetches this registry once a day (cached under HF_HOME) to name the agent in its user agent.
        self._send_json(200, {"standardEnvVars": [], "harnesses": {}})

    def _h_create(self, method, match, query, body, split, drop_reply):
        caller = self._caller()
        if caller is False:
            self._deny_bad_token()
            return
        if caller is None:
            self._send_json(401, {"error": "Unauthorized"})
            return
        namespace = caller.user if match["ns"] == "me" else match["ns"]
        bucket_id = f"{namespace}/{match['name']}"
        url = f"{self._base()}/buckets/{bucket_id}"
        with self.hub.lock:
            decision = self.hub.rights.create(caller, namespace)
        if not decision.allowed:
            self._refuse(decision)
            return
        payload = json.loads(body or b"{}")
        with self.hub.lock:
            if bucket_id in self.hub.buckets:
                self._send_json(409, {"error": "You already created this bucket", "url": url})
                return
            self.hub.buckets[bucket_id] = Bucket(bucket_id, payload.get("visibility") != "public", _now_ms())
        self._send_json(200, {"url": url, "name": match["name"], "id": bucket_id})

    def _h_info(self, method, match, query, body, split, drop_reply):
        bucket = self._bucket_for(match, write=False)
        if bucket is None:
            return
        with self.hub.lock:
            files = list(bucket.files.values())
            updated = bucket.updated_ms
        info = {
            "id": bucket.id,
            "private": bucket.private,
            "createdAt": _iso_ms(bucket.created_ms),
            "size": sum(f.size for f in files),
            "totalFiles": len(files),
        }
        if self.hub.info_updated_at:
            info["updatedAt"] = _iso_ms(updated)
        self._send_json(200, info)

    def _h_settings(self, method, match, query, body, split, drop_reply):
        """`HfApi.update_bucket_settings` (`hf buckets settings ID --private`): the visibility, by a writer."""
        bucket = self._bucket_for(match, write=True)
        if bucket is None:
            return
        payload = json.loads(body or b"{}")
        if not isinstance(payload.get("private"), bool):
            self._send_json(400, {"error": "private must be a boolean"})
            return
        with self.hub.lock:
            bucket.private = payload["private"]
        self._send_json(200, {})

    def _file_json(self, f: StoredFile) -> dict:
        return {
            "type": "file",
            "path": f.path,
            "size": f.size,
            "xetHash": f.xet_hash,
            "mtime": _iso_ms(f.mtime_ms),
            "uploadedAt": _iso_ms(f.uploaded_ms),
        }

    def _h_tree(self, method, match, query, body, split, drop_reply):
        bucket = self._bucket_for(match, write=False)
        if bucket is None:
            return
        prefix = unquote(match["prefix"] or "").strip("/")
        recursive = query.get("recursive", ["false"])[0].lower() == "true"
        under = prefix + "/" if prefix else ""
        entries: dict[str, dict] = {}
        with self.hub.lock:
            files = sorted(bucket.files.values(), key=lambda f: f.path)
        for f in files:
            if not f.path.startswith(under):
                continue
            rest = f.path[len(under) :]
            parts = rest.split("/")
            for depth in range(1, len(parts)):
                folder = under + "/".join(parts[:depth])
                if recursive or depth == 1:
                    entries.setdefault(folder, {"type": "directory", "path": folder, "uploadedAt": _iso_ms(f.uploaded_ms)})
            if recursive or len(parts) == 1:
                entries[f.path] = self._file_json(f)
        items = [entries[k] for k in sorted(entries)]
        if not items and prefix and self.hub.missing_prefix_404:
            self._send_json(404, {"error": "Entry not found"}, {"X-Error-Code": "EntryNotFound"})
            return
        cursor = int(query.get("cursor", ["0"])[0])
        page = items[cursor : cursor + self.hub.page_size]
        headers = {}
        if cursor + self.hub.page_size < len(items):
            nxt = f"{self._base()}{split.path}?recursive={'true' if recursive else 'false'}&cursor={cursor + self.hub.page_size}"
            headers["Link"] = f'<{nxt}>; rel="next"'
        self._send_json(200, page, headers)

    def _h_paths_info(self, method, match, query, body, split, drop_reply):
        bucket = self._bucket_for(match, write=False)
        if bucket is None:
            return
        paths = json.loads(body or b"{}").get("paths", [])
        with self.hub.lock:
            found = [self._file_json(bucket.files[p]) for p in paths if p in bucket.files]
        self._send_json(200, found)

    def _h_xet_token(self, method, match, query, body, split, drop_reply):
        bucket = self._bucket_for(match, write=match["kind"] == "write")
        if bucket is None:
            return
        exp = int(time.time()) + 3600
        cas = f"local://{self.hub.cas_dir}"
        token = "xet_" + secrets.token_hex(8)
        self._send_json(
            200,
            {"accessToken": token, "exp": exp, "casUrl": cas},
            {"X-Xet-Cas-Url": cas, "X-Xet-Access-Token": token, "X-Xet-Token-Expiration": str(exp)},
        )

    def _h_batch(self, method, match, query, body, split, drop_reply):
        bucket = self._bucket_for(match, write=True)
        if bucket is None:
            return
        failed = []
        ops = [json.loads(line) for line in body.splitlines() if line.strip()]
        now = _now_ms()
        for op in ops:
            path = op.get("path", "")
            if op.get("type") == "addFile":
                size = self.hub.file_size_for(op.get("xetHash", ""))
                if size is None:
                    failed.append({"path": path, "error": "unknown xet hash"})
                    continue
                with self.hub.lock:
                    change = "update" if path in bucket.files else "add"
                    bucket.files[path] = StoredFile(path, size, op["xetHash"], int(op.get("mtime") or now), now)
                    self.hub.record(bucket, change, path, bucket.files[path])
            elif op.get("type") == "deleteFile":
                with self.hub.lock:
                    if bucket.files.pop(path, None) is not None:
                        self.hub.record(bucket, "delete", path)
            else:
                failed.append({"path": path, "error": f"unsupported operation {op.get('type')!r}"})
        if drop_reply:
            raise _Dropped()
        if failed:
            self._send_json(422 if len(failed) == len(ops) else 200, {"failed": failed})
        else:
            self._send_json(200, {"success": True, "processed": len(ops)})

    def _h_resolve(self, method, match, query, body, split, drop_reply):
        bucket = self._bucket_for(match, write=False)
        if bucket is None:
            return
        path = unquote(match["path"])
        with self.hub.lock:
            stored = bucket.files.get(path)
        if stored is None:
            self._send_json(404, {"error": "Entry not found"}, {"X-Error-Code": "EntryNotFound"})
            return
        self._file_bytes = stored.size
        headers = {
            "X-Xet-Hash": stored.xet_hash,
            "X-Linked-Size": str(stored.size),
            "Link": f'<{self._base()}/api/buckets/{bucket.id}/xet-read-token>; rel="xet-auth"',
            "ETag": f'"{stored.xet_hash}"',
        }
        if method == "HEAD":
            self._send(200, b"", {**headers, "Content-Length": str(stored.size)}, head=True)
            return
        self._send(200, self.hub.read_file_bytes(bucket.id, path), headers)
