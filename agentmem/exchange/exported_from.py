"""What each note file of an export was made from, so a rerun reads, screens and writes only what changed.

Kept in the machine folder, not in the export (which is for people and other tools): one small JSON file a
store and an export folder, `cache/<store>/exports/<digest of the folder's path>.json`. For each note file
the last run exported from a cached note it records:

- the cached note it was made from: size, modification time (ns) and inode of the cache's file (the cache
  writes a note anew, through a rename, whenever it changes);
- the exported file as that run left it: size, modification and change times (ns), inode, so a file a
  person edited, replaced or deleted since is noticed by one `stat` and written again;
- its SHA-256 (the manifest's), what the index shows of it (title, kind, created, corrects) and what the
  export's own screening withheld from it.

All of it holds only under the scanner that screened the notes: the file names the scanner's fingerprint and
rules (`replica/redacted_copies.py`) and a salted slow digest of this machine's credential values (never the values),
and an export by another scanner, or with other credential values set, screens every note again.

Derived: a missing or damaged file, or one another folder's path hashed to, only costs a full export; the
files of the KEEP folders exported last are kept, older ones removed. It is written after the manifest, so
it never speaks for a file the folder does not hold yet. Pending notes (waiting for upload: few) are read
and screened on every export and never recorded here.
"""

from __future__ import annotations

import hashlib
import json
import os

from agentmem import fsutil
from agentmem.paths import cache_root

VERSION = 2  # 2: an index line carries the author (issue X, item 5)
FOLDER = "exports"
_ROUNDS = 100_000  # PBKDF2 rounds for the credential values' digest: a short value cannot be guessed back cheaply


def state_path(machine: str, store_key: str, dest: str) -> str:
    digest = hashlib.sha256(os.fsencode(dest)).hexdigest()[:32]
    return os.path.join(cache_root(machine), store_key, FOLDER, digest + ".json")


def source_of(st: os.stat_result) -> list[int]:
    """A cached note's identity: any rewrite of it (a refresh, a rescreen) changes the inode or the time."""
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def file_of(st: os.stat_result) -> list[int]:
    """An exported file's identity; the change time moves with any write or rename and cannot be set back."""
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


class Kept:
    """An unchanged note's record: what the manifest and the index need, without reading it."""

    __slots__ = ("sha256", "fields", "withheld")

    def __init__(self, sha256: str, fields: tuple[str, str, str, str, str], withheld: list[dict]):
        self.sha256, self.fields, self.withheld = sha256, fields, withheld


class ExportedFrom:
    """The records of one store's export into `dest`: those the last run left (`reuse`), and this run's
    (`note`), saved once the export is complete (`save`)."""

    def __init__(self, machine: str, store_key: str, dest: str):
        from agentmem.replica import redacted_copies

        self.path, self.dest = state_path(machine, store_key, dest), dest
        state = fsutil.read_state(self.path)
        scanner: dict = state["scanner"] if isinstance(state.get("scanner"), dict) else {}
        salt = scanner.get("salt") if _hex(scanner.get("salt")) else ""
        self.scanner = {"fingerprint": redacted_copies.fingerprint(), "salt": salt or os.urandom(16).hex()}
        self.scanner["known"] = _known_digest(self.scanner["salt"])
        same_files = scanner.get("fingerprint") == self.scanner["fingerprint"]
        if same_files and isinstance(scanner.get("rules"), str):
            self.scanner["rules"] = scanner["rules"]  # the same files: their rules need not be read again
        else:
            self.scanner["rules"] = redacted_copies.rules()
        usable = (state.get("version") == VERSION and state.get("dest") == dest and isinstance(state.get("notes"), dict)
                  and scanner.get("rules") == self.scanner["rules"] != "unknown"
                  and scanner.get("known") == self.scanner["known"])
        self.previous: dict = state["notes"] if usable else {}
        self.notes: dict[str, list] = {}

    def reuse(self, rel: str, source: list[int]) -> Kept | None:
        """The record of `rel` if the note it was made from and the exported file are both as the last run
        left them (one `stat` of the file), else None: the note is read, screened and written again."""
        entry = self.previous.get(rel)
        if not isinstance(entry, list) or len(entry) != 5 or entry[0] != source:
            return None
        try:
            st = os.stat(f"{self.dest}/{rel}", follow_symlinks=False)  # rel: `<project>/<note file>`, checked
        except OSError:
            return None
        sha256, fields, found = entry[2], entry[3], entry[4]
        if entry[1] != file_of(st) or not isinstance(sha256, str) or not isinstance(found, list) \
                or not (isinstance(fields, list) and len(fields) == 5 and all(isinstance(f, str) for f in fields)):
            return None
        self.notes[rel] = entry
        return Kept(sha256, (fields[0], fields[1], fields[2], fields[3], fields[4]), found)

    def note(self, rel: str, source: list[int], sha256: str, fields: tuple[str, str, str, str, str],
             withheld: list[dict]) -> None:
        """Record a note this run exported from the cache; its file's identity is taken once it is written."""
        self.notes[rel] = [source, None, sha256, list(fields), withheld]

    def save(self) -> None:
        """Record every exported file's identity as it stands now, and write the file (derived: not flushed;
        where it cannot be written, the next export does everything again)."""
        notes: dict[str, list] = {}
        for rel, entry in self.notes.items():
            if entry[1] is None:
                try:
                    st = os.stat(os.path.join(self.dest, *rel.split("/")), follow_symlinks=False)
                except OSError:
                    continue
                entry = [entry[0], file_of(st), *entry[2:]]
            notes[rel] = entry
        state = {"version": VERSION, "dest": self.dest, "scanner": self.scanner, "notes": notes}
        try:
            fsutil.write_atomic(self.path, json.dumps(state, separators=(",", ":")).encode("utf-8"), durable=False)
            _prune(os.path.dirname(self.path))
        except OSError:
            pass


KEEP = 8  # the records of the export folders last written: an export into a new folder each day leaves no trail


def _prune(folder: str) -> None:
    """Keep the KEEP records written last (a few hundred bytes a note each); an older folder's next export is a
    full one."""
    found = []
    with os.scandir(folder) as entries:
        for e in entries:
            if e.name.endswith(".json") and not e.name.startswith(fsutil.TMP_PREFIX):
                found.append((e.stat().st_mtime_ns, e.path))
    for _, path in sorted(found, reverse=True)[KEEP:]:
        os.unlink(path)


def _hex(value: object) -> bool:
    try:
        return isinstance(value, str) and len(bytes.fromhex(value)) == 16
    except ValueError:
        return False


def _known_digest(salt: str) -> str:
    """A digest of this machine's credential values (HF_TOKEN...), which the export's screening withholds
    wherever they appear: when they change, every note is screened again. Salted and slow, so the file
    does not give a short value away."""
    from agentmem.safety import credentials

    known = sorted(credentials.env_secrets())
    if not known:
        return ""
    return hashlib.pbkdf2_hmac("sha256", "\0".join(known).encode("utf-8"), bytes.fromhex(salt), _ROUNDS).hex()
