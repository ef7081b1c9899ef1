"""Records: retractions, pins, unpins and purges, each a new append-only object naming one note.

INV append-only: a record never changes the note it names, and is itself never replaced.
A record is a small JSON object (kind, the note's ID, who, when, why) stored beside the notes,
as `projects/<project>/notes/<record id>.<kind>.json`, so the change signal every search already
asks for (the notes folder's stat, the bucket's feed below the notes prefix) carries records too,
with no second request. Record IDs are allocated like note IDs, so they sort by time.

What the records of a project mean, their *states*:
- retracted: the note's earliest retraction. It stays (there is no unretract).
- pins: the latest pin or unpin per note (by record ID); a note is pinned when that is a pin.
- purged: the note's earliest purge record: the note must not exist anywhere.

On a machine, records are cached in `<project cache>/records/` and their states kept in
`records.json` beside it (derived: the records folder's mtime says it is current; rebuilt from
the records otherwise). This machine's pending records take effect at once (`with_pending`).
"""

from __future__ import annotations

import json
import os
import time

from agentmem import patterns
from agentmem.errors import InvalidInput
from agentmem.fsutil import read_bytes, write_atomic
from agentmem.note import ids
from agentmem.paths import RECORD_STATES_FILE, records_folder
from agentmem.store import layout

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from datetime import datetime

    from agentmem.errors import AgentmemError
    from agentmem.store.base import Changes, Store

MAX_REASON = 500  # characters: one line saying why; the note itself holds the detail
MAX_RECORD_BYTES = 4096
# What a record's one-line fields may hold (as config.py's AGENT_NAME and PROJECT_NAME, and utc_timestamp).
_AGENT = patterns.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$")
_PROJECT = patterns.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_DIGEST = patterns.compile(r"^[0-9a-f]{64}$")
_CREATED = patterns.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$")
# A folder mtime younger than this may hide a change made in the same clock tick (as in corrections.py).
_RACY_NS = 2_000_000_000


class Record:
    """One record. `agent` is the identity notes carry (`<runtime>@<host>`), `created` UTC ISO 8601."""

    __slots__ = ("id", "kind", "note", "project", "agent", "created", "reason", "digest")

    def __init__(self, *, id: str, kind: str, note: str, project: str, agent: str, created: str,
                 reason: str | None = None, digest: str | None = None):
        self.id, self.kind, self.note, self.project = id, kind, note, project
        self.agent, self.created, self.reason = agent, created, reason
        self.digest = digest  # a purge's: content_digest of the purged note's body, when it could be read

    @property
    def file(self) -> str:
        return ids.record_file(self.id, self.kind)

    def path(self) -> str:
        """The record's object path in a store."""
        return record_path(self.project, self.id, self.kind)

    def to_json(self) -> dict:
        out = {"agentmem": "record", "id": self.id, "kind": self.kind, "note": self.note, "project": self.project,
               "agent": self.agent, "created": self.created, "reason": self.reason}
        if self.digest is not None:
            out["digest"] = self.digest
        return out

    def render(self) -> bytes:
        return (json.dumps(self.to_json(), sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")

    def summary(self) -> dict:
        """What a note's state shows of the record: {record, kind, agent, created, reason}."""
        return {"record": self.id, "kind": self.kind, "agent": self.agent, "created": self.created,
                "reason": self.reason}


def record_path(project: str, record_id: str, kind: str) -> str:
    return layout.object_path(layout.notes_prefix(project), ids.record_file(record_id, kind))  # checked: ids


def is_record_path(path: str) -> bool:
    return layout.is_record_name(path)


def text_key(text: str) -> str:
    """A memory's text as `import` matches it: whitespace runs made one space, case folded."""
    return " ".join(text.split()).casefold()


def content_digest(text: str) -> str:
    """What a purge record keeps of the purged note, so that no copy of it comes back (INV purged-stays-gone):
    the SHA-256 of its `text_key`, the key `import` matches memories by. A hash of the whole text: it names
    the note's content without holding any of it."""
    import hashlib

    return hashlib.sha256(text_key(text).encode("utf-8")).hexdigest()


def build(kind: str, note_id: str, project: str, agent: str, reason: str | None = None,
          now: datetime | None = None, digest: str | None = None) -> Record:
    """A new record of `kind` naming `note_id`. The reason is one line (credentials: screened by the caller);
    `digest` only for a purge (`content_digest` of the note's body)."""
    from agentmem.note import document

    if kind not in ids.RECORD_KINDS:
        raise InvalidInput(f"invalid record kind {kind!r}")
    ids.check_id(note_id)
    if reason is not None:
        reason = " ".join(reason.split())
        if not reason:
            reason = None
        elif len(reason) > MAX_REASON:
            raise InvalidInput(f"the reason is too long: at most {MAX_REASON} characters")
    from datetime import UTC, datetime

    now = now or datetime.now(UTC)
    return Record(id=ids.new_id(now), kind=kind, note=note_id, project=project, agent=agent,
                  created=document.utc_timestamp(now), reason=reason, digest=digest if kind == "purge" else None)


def parse(data: bytes, name: str | None = None) -> Record | None:
    """A record read back, or None when the bytes are not one agentmem wrote (checked against `name`)."""
    if len(data) > MAX_RECORD_BYTES:
        return None
    try:
        raw = json.loads(data.decode("utf-8"))
        if not isinstance(raw, dict) or raw.get("agentmem") != "record" or raw.get("kind") not in ids.RECORD_KINDS:
            return None
        fields: dict[str, str] = {k: v for k in ("id", "note", "project", "agent", "created")
                                  if isinstance(v := raw.get(k), str) and v}
        if len(fields) != 5:
            return None
        ids.check_id(fields["id"])
        ids.check_id(fields["note"])
        shapes = ((_AGENT, "agent"), (_CREATED, "created"), (_PROJECT, "project"))
        if not all(rule.match(fields[key]) for rule, key in shapes):
            return None
        reason, digest = raw.get("reason"), raw.get("digest")
        if digest is not None and not (raw["kind"] == "purge" and isinstance(digest, str) and _DIGEST.match(digest)):
            return None
        record = Record(kind=raw["kind"], reason=reason if isinstance(reason, str) else None, digest=digest,
                        **fields)
    except (ValueError, UnicodeDecodeError, InvalidInput):
        return None
    if name is not None and name != record.file:
        return None
    return record


# -- states ---------------------------------------------------------------------------------------

class States:
    """What the records say about a project's notes (see the module docstring); maps note ID -> summary."""

    __slots__ = ("retracted", "pins", "purged")

    def __init__(self, retracted: dict | None = None, pins: dict | None = None, purged: dict | None = None):
        self.retracted: dict[str, dict] = retracted or {}
        self.pins: dict[str, dict] = pins or {}
        self.purged: dict[str, dict] = purged or {}

    def add(self, record: Record) -> None:
        """Fold one record in, whatever the order records arrive in."""
        summary = record.summary()
        if record.kind == "retract":
            _keep(self.retracted, record.note, summary, earliest=True)
        elif record.kind == "purge":
            _keep(self.purged, record.note, summary, earliest=True)
        else:
            _keep(self.pins, record.note, summary, earliest=False)

    def pinned(self) -> dict[str, dict]:
        """Pinned notes (latest record a pin), neither retracted nor purged: note ID -> the pin."""
        return {n: s for n, s in self.pins.items()
                if s["kind"] == "pin" and n not in self.retracted and n not in self.purged}

    def to_json(self) -> dict:
        return {"retracted": self.retracted, "pins": self.pins, "purged": self.purged}


def _keep(table: dict, note_id: str, summary: dict, *, earliest: bool) -> None:
    held = table.get(note_id)
    if held is None or (summary["record"] < held["record"] if earliest else summary["record"] > held["record"]):
        table[note_id] = summary


def records_dir(pdir: str) -> str:
    return records_folder(pdir)


def cached_files(pdir: str) -> set[str]:
    try:
        return {n for n in os.listdir(records_dir(pdir)) if ids.RECORD_FILE.match(n)}
    except FileNotFoundError:
        return set()


def cached(pdir: str) -> list[Record]:
    """Every readable cached record of the project, oldest first."""
    folder = records_dir(pdir)
    out = []
    for name in sorted(cached_files(pdir)):
        try:
            record = parse(read_bytes(os.path.join(folder, name), MAX_RECORD_BYTES + 1), name)
        except OSError:
            continue
        if record is not None:
            out.append(record)
    return out


def states(pdir: str) -> States:
    """The states of the cached records: `records.json` while the records folder is unchanged, else rebuilt.
    One stat when the project has no records."""
    try:
        mtime = os.stat(records_dir(pdir)).st_mtime_ns
    except OSError:
        return States()
    try:
        kept = json.loads(read_bytes(os.path.join(pdir, RECORD_STATES_FILE)))
        if isinstance(kept, dict) and kept.get("dir_mtime") == mtime and mtime:
            return States(kept["retracted"], kept["pins"], kept["purged"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    found = States()
    for record in cached(pdir):
        found.add(record)
    trusted = mtime if time.time_ns() - mtime > _RACY_NS else 0
    try:
        write_atomic(os.path.join(pdir, RECORD_STATES_FILE),
                     json.dumps({"dir_mtime": trusted, **found.to_json()}, sort_keys=True).encode(), durable=False)
    except OSError:
        pass  # derived: rebuilt next time (a read-only sandbox)
    return found


def with_pending(pdir: str, pending_records: Iterable[bytes]) -> States:
    """The cached states with this machine's pending records of the project folded in."""
    found = states(pdir)
    for data in pending_records:
        record = parse(data)
        if record is not None:
            found.add(record)
    return found


def purged_digests(pdir: str, pending_records: Iterable[bytes]) -> set[str]:
    """The content digests the project's purge records carry, cached and pending here (what `import` refuses)."""
    found = {r.digest for r in cached(pdir) if r.kind == "purge" and r.digest}
    found.update(r.digest for r in map(parse, pending_records) if r is not None and r.kind == "purge" and r.digest)
    return found


def add_cached(pdir: str, record: Record, data: bytes) -> bool:
    """Place a record in the cache (one the store confirmed), cleaned (`clean`); False if it was there already."""
    target = os.path.join(records_dir(pdir), record.file)
    if os.path.exists(target):
        return False
    write_atomic(target, clean(record, data))
    return True


def clean(record: Record, data: bytes) -> bytes:
    """The bytes the cache keeps of a record: `data` itself, unless its reason or agent holds a credential
    (a record another tool wrote: `retract` refuses one). INV no-credentials: the reason then keeps each
    credential as `[REDACTED:<kind>]`, and an agent holding one is `redacted`."""
    from agentmem.safety import credentials, screening

    known = credentials.env_secrets()
    reason, held = screening.withhold(record.reason, known) if record.reason else (record.reason, [])
    agent_held = screening.withhold(record.agent, known)[1]
    if not held and not agent_held:
        return data
    shown = Record(id=record.id, kind=record.kind, note=record.note, project=record.project,
                   agent="redacted" if agent_held else record.agent, created=record.created, reason=reason,
                   digest=record.digest)
    return shown.render()


def rescreen(pdir: str) -> bool:
    """Clean every cached record again (a cache written before records were cleaned, or by an older scanner);
    True if any changed (the states file is then rebuilt: the folder's mtime moved)."""
    folder = records_dir(pdir)
    changed = False
    for name in sorted(cached_files(pdir)):
        try:
            data = read_bytes(os.path.join(folder, name), MAX_RECORD_BYTES + 1)
        except OSError:
            continue
        record = parse(data, name)
        shown = clean(record, data) if record is not None else data
        if shown != data:
            write_atomic(os.path.join(folder, name), shown)
            changed = True
    if changed:
        try:
            os.unlink(os.path.join(pdir, RECORD_STATES_FILE))
        except FileNotFoundError:
            pass
    return changed


# -- following the store (what a refresh calls, before it fetches notes) ---------------------------

def to_fetch(changes: Changes, prefix: str, pdir: str, unmatched: set[str] | None = None) -> tuple[dict, set[str]]:
    """({record file name: Listed} new to this cache, {cached record files the store no longer holds}).
    `unmatched`: the listed names the notes cache lacks, all the records among them (Plan.unmatched), so
    that a listing of 100k notes is not walked name by name for its few records."""
    from agentmem.store.base import Changes, Listed

    head = prefix + "/"
    if changes.kind == Changes.FULL and changes.names is not None:  # names alone: a folder store
        have = cached_files(pdir)
        pool = changes.names if unmatched is None else unmatched
        listed = {name for name in pool if name.endswith(".json") and ids.RECORD_FILE.match(name)}
        fresh = listed - have
        if fresh and changes.regular is not None:
            fresh = changes.regular(fresh)
        return {name: Listed(f"{prefix}/{name}", None) for name in fresh}, have - listed
    seen = changes.listing if changes.kind == Changes.FULL else changes.added
    have = cached_files(pdir) if seen or changes.kind != Changes.SAME else set()
    wanted, listed = {}, set()
    for obj in seen:
        name = obj.path[len(head):] if obj.path.startswith(head) else ""
        if ids.RECORD_FILE.match(name):
            listed.add(name)
            if name not in have and (obj.size is None or obj.size <= MAX_RECORD_BYTES):
                wanted[name] = obj
    if changes.kind == Changes.FULL:
        return wanted, have - listed
    return wanted, {p[len(head):] for p in changes.removed if p.startswith(head)} & have


def fetch(store: Store, wanted: dict, gone: set[str], pdir: str) -> tuple[set[str], AgentmemError | None]:
    """Download `wanted` records into the cache and drop `gone` ones. Returns (the notes new purge records
    name, the store or cache failure that stopped it, or None)."""
    from agentmem import errors

    folder = records_dir(pdir)
    purges: set[str] = set()
    refused = None  # INV loud-unwritable: a read-only sandbox still reads every record (its purges hold)
    try:
        for name, obj in sorted(wanted.items()):
            try:
                data = store.get(obj.path, MAX_RECORD_BYTES)
            except (errors.NotFound, errors.Unreadable):
                continue  # deleted since it was listed, or not a record agentmem wrote: nothing to follow
            except errors.AgentmemError as exc:
                return purges, exc
            record = parse(data, name)
            if record is not None:
                if record.kind == "purge":
                    purges.add(record.note)
                if refused is None:
                    try:
                        add_cached(pdir, record, data)
                    except OSError as exc:
                        if not errors.cannot_write(exc):
                            raise
                        refused = exc
        for name in sorted(gone) if refused is None else ():
            try:
                os.unlink(os.path.join(folder, name))
            except FileNotFoundError:
                pass
    except OSError as exc:
        if not errors.cannot_write(exc):
            raise
        refused = exc
    if refused is not None:
        return purges, errors.NotWritable(f"cannot write the cache in {folder} ({refused.strerror})",
                                          hint=errors.UNWRITABLE_HINT)
    return purges, None
