"""Notes on this machine never hold a credential: the redacted copy the cache keeps, and what was withheld.

`clean(data)` is the step a note passes through where it enters the cache (a
refresh, a note read from the store, a confirmed save) and where it is shown
without entering it (a pending note, `read --fresh`): one scan of the file, and a
note without a credential is kept byte for byte. A note with one is kept with
each credential shown as `[REDACTED:<kind>]` (`safety/redaction.py`), its
metadata written one key per line as agentmem writes it, ID and `corrects`
intact.

Beside `notes/`, `withheld/<id>.json` records {"size": bytes of the store's copy,
"withheld": [{where, kind}...]}: a refresh compares the store's size with the
recorded one (the shorter cached copy is not damaged), and read and search say
what was withheld without scanning again.

A cache screened by an older scanner (or none: a cache written before this
step) is screened again once: `screened` beside `notes/` records the scanner's
rules (a hash of the source of `safety/`) and, to tell them cheaply, where its
files stood (names, sizes, times). When the rules differ, every cached note is
cleaned again and the ranked index is discarded, so it is rebuilt from the
cleaned notes and keeps no raw value even in its free pages. Files that moved
but hold the same rules (an upgrade, a reinstall) only update the record.

INV no-credentials: the cache and the index never hold a credential; the
store's copy is left for `agentmem audit`.
"""

from __future__ import annotations

import json
import os

from agentmem.fsutil import read_bytes, write_atomic
from agentmem.note import document, ids
from agentmem.paths import SCREENED_FILE, notes_folder, withheld_folder

_fingerprint: str | None = None
_rules: str | None = None


def clean(data: bytes, known: tuple[str, ...] | list[str] | None = None) -> tuple[bytes, list[dict]]:
    """The note's bytes fit to show or cache, and what was withheld (empty: `data` itself, unchanged)."""
    from agentmem.safety import credentials, redaction

    known = credentials.env_secrets() if known is None else known
    text = data.decode("utf-8", errors="replace")
    found = credentials.scan(text, known)
    if not found:
        return data, []
    parsed = document.parse(data)
    withheld: list[dict] = []
    if not parsed.meta and text.lstrip("\ufeff").startswith("---"):  # frontmatter no reader could parse
        return redaction.redact_text(text, "note", known, withheld).encode("utf-8"), withheld
    shown = redaction.redact_note(parsed.meta, parsed.body, known)
    withheld = shown.withheld
    out = document.render_parts(shown.meta, shown.body).decode("utf-8")
    if redaction.needs_redaction(out, known):  # never seen: a match across the fence; withhold it anyway
        out = redaction.redact_text(out, "note", known, withheld)
    if not withheld:  # the file held one no field did: say so, so the copy is never taken for damage
        withheld = [{"where": "note", "kind": found[0].kind}]
    return out.encode("utf-8"), withheld


def names_a_credential(note_id: str) -> bool:
    """Whether a note's ID (its file name in the store, written by hand) holds a credential: such a note is
    never cached, since its name would show in every listing."""
    if ids.ALLOCATED.match(note_id):
        return False  # an ID agentmem allocated holds none
    from agentmem.safety import credentials

    return bool(credentials.scan(note_id, credentials.env_secrets()))


def clean_all(found: dict[str, bytes]) -> tuple[dict[str, bytes], dict[str, list[dict]]]:
    """`clean` for several notes (pending notes a search shows): the bytes, and what each withheld."""
    if not found:
        return found, {}
    from agentmem.safety import credentials

    known = credentials.env_secrets()
    shown: dict[str, bytes] = {}
    withheld: dict[str, list[dict]] = {}
    for note_id, data in found.items():
        shown[note_id], w = clean(data, known)
        if w:
            withheld[note_id] = w
    return shown, withheld


# -- the records beside the cached notes -------------------------------------------------------


def _record_path(pdir: str, note_id: str) -> str:
    return os.path.join(withheld_folder(pdir), ids.check_id(note_id) + ".json")


def recorded_ids(pdir: str) -> set[str]:
    """The cached notes of the project that had something withheld (one listing; usually none)."""
    try:
        names = os.listdir(withheld_folder(pdir))
    except (FileNotFoundError, NotADirectoryError):
        return set()
    return {n[:-5] for n in names if n.endswith(".json") and ids.ID.match(n[:-5])}


def read_record(pdir: str, note_id: str) -> dict | None:
    try:
        record = json.loads(read_bytes(_record_path(pdir, note_id)))
    except (OSError, ValueError):
        return None
    ok = isinstance(record, dict) and isinstance(record.get("size"), int) and isinstance(record.get("withheld"), list)
    return record if ok else None


def withheld_of(pdir: str, note_id: str) -> list[dict]:
    record = read_record(pdir, note_id)
    return record["withheld"] if record else []


def write_record(pdir: str, note_id: str, size: int, withheld: list[dict]) -> None:
    """Record what was withheld from a cached note; written before the note, so a cached copy that is
    shorter than the store's always has its record."""
    os.makedirs(withheld_folder(pdir), exist_ok=True)
    data = json.dumps({"size": size, "withheld": withheld}, sort_keys=True) + "\n"
    write_atomic(_record_path(pdir, note_id), data.encode(), durable=False)


def drop_record(pdir: str, note_id: str) -> None:
    try:
        os.unlink(_record_path(pdir, note_id))
    except FileNotFoundError:
        pass


def store_size(ndir: str, note_id: str, recorded: set[str]) -> int | None:
    """The size of the store's copy of a cached note (None: not cached): the recorded one for a note with
    something withheld (in `recorded`), else the cached file's own."""
    try:
        size = os.stat(os.path.join(ndir, ids.note_file(note_id))).st_size
    except OSError:
        return None
    if note_id in recorded:
        record = read_record(os.path.dirname(ndir), note_id)
        if record is not None:
            return record["size"]
    return size


def put(pdir: str, note_id: str, data: bytes, *, durable: bool = True) -> None:
    """Place a note from the store into the cache, cleaned (the one way notes enter it). `durable=False`:
    without its fsyncs (a refresh flushes what it wrote at once: memory/sync.py `durable`)."""
    shown, withheld = clean(data)
    if withheld:
        write_record(pdir, note_id, len(data), withheld)
    else:
        drop_record(pdir, note_id)
    write_atomic(os.path.join(notes_folder(pdir), ids.note_file(note_id)), shown, durable=durable)


# -- screening a cache again when the scanner changed ------------------------------------------


def _safety_folder() -> str:
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "safety")


def fingerprint() -> str:
    """Where the scanner's files stand: the names, sizes and modification times of `safety/*.py`. One
    listing, nothing read or imported: a search asks on every turn. It only says whether `rules()` must be
    asked again; a copy of the same files (an upgrade, a reinstall) has another fingerprint and the same rules."""
    global _fingerprint
    if _fingerprint is None:
        try:
            with os.scandir(_safety_folder()) as found:
                parts = sorted(f"{e.name}:{e.stat().st_size}.{e.stat().st_mtime_ns}" for e in found
                               if e.name.endswith(".py"))
        except OSError:
            parts = []
        _fingerprint = ";".join(parts) or "unknown"
    return _fingerprint


def rules() -> str:
    """What the scanner finds and how it redacts: a SHA-256 of the bytes of every `safety/*.py`, by name.
    Read only when the fingerprint changed (a few small files); any edit of a rule module changes it."""
    global _rules
    if _rules is None:
        import hashlib

        digest = hashlib.sha256()
        try:
            with os.scandir(_safety_folder()) as found:
                names = sorted(e.name for e in found if e.name.endswith(".py"))
            for name in names:
                data = read_bytes(os.path.join(_safety_folder(), name))
                digest.update(f"{name}\0{len(data)}\0".encode() + data)
        except OSError:
            names = []
        _rules = "sha256:" + digest.hexdigest() if names else "unknown"
    return _rules


def _marker(fingerprint_: str, rules_: str) -> bytes:
    """The `screened` file: the fingerprint on its first line (all an older agentmem wrote there, so a
    cache it screened with these very files is known as screened), the rules on the second."""
    return f"{fingerprint_}\n{rules_}".encode()


def _record(marker: str) -> None:
    """Write the marker where that can be done (derived: a read-only sandbox skips it)."""
    try:
        write_atomic(marker, _marker(fingerprint(), rules()), durable=False)
    except OSError:
        pass


def ensure_screened(pdir: str) -> bool:
    """Clean the project's cached notes again if a scanner with other rules than this one's screened them.

    The files' fingerprint as recorded: screened by this scanner (one read, the per-turn cost). Else the
    rules as recorded: the same rules from other files (an upgrade that left `safety/` as it was), so
    only the marker is rewritten. Else every cached note is cleaned again.
    False when that could not be done (a read-only sandbox): the caller then cleans what it shows."""
    marker = os.path.join(pdir, SCREENED_FILE)
    try:
        recorded = read_bytes(marker, 65536).decode("utf-8", errors="replace").split("\n")
    except OSError:
        recorded = []
    if recorded and recorded[0] == fingerprint():
        if len(recorded) < 2:  # an older agentmem's record of these very files: the rules added, once
            _record(marker)
        return True
    same_rules = len(recorded) > 1 and recorded[1] == rules() != "unknown"
    try:  # nothing cached yet costs one listing: the first refresh cleans every note it brings
        if not same_rules:
            rescreen(pdir)
        write_atomic(marker, _marker(fingerprint(), rules()), durable=False)  # derived: lost, it is redone
    except OSError as exc:
        from agentmem import errors

        if not errors.cannot_write(exc):
            raise
        return same_rules
    return True


def rescreen(pdir: str) -> bool:
    """Clean every cached note and record of the project again; discard the index if a note changed. True
    if any did."""
    from agentmem.note import records

    cleaned = records.rescreen(pdir)
    ndir = notes_folder(pdir)
    try:
        names = os.listdir(ndir)
    except FileNotFoundError:
        return cleaned
    changed = False
    for note_id in ids.note_ids(names):
        try:
            data = read_bytes(os.path.join(ndir, ids.note_file(note_id)))
        except OSError:
            continue
        shown, withheld = clean(data)
        if not withheld:
            continue
        before = read_record(pdir, note_id)
        size = before["size"] if before else len(data)
        write_record(pdir, note_id, size, (before["withheld"] if before else []) + withheld)
        write_atomic(os.path.join(ndir, ids.note_file(note_id)), shown)
        changed = True
    if changed:
        from agentmem.search import index

        index.discard(pdir)
    return changed or cleaned
