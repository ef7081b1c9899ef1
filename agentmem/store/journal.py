"""A folder store's journal: how another agentmem machine's save reaches this machine's next search without a
listing of the whole notes folder (issue W, item 1).

Beside a notes folder (`.notes.journal`, store/layout.py), each line is one link {"from": signature, "to":
signature, "add": [file names]}. An agentmem writer appends one after its upload when its witness
(store/witness.py) proved that the folder went from the first signature (store/dirwatch.py) to the second, a
settled one, by those names alone. A reader whose change token holds a settled signature follows the links from
it, and takes their names as the whole change only when they lead exactly to the folder's signature now (the one
stat every search makes). Whatever the journal does not account for (a note copied in by hand, a sync tool, a
purge's delete, a writer whose witness saw another change, a torn or garbage line, a journal started afresh)
leaves no chain to the folder's signature, so the reader lists the folder as before: the journal can make a search
cheaper; it never claims by itself that nothing else changed, and cannot hide a note.

Each append is one write() with O_APPEND, the line framed by a newline on both sides, so a line torn by a crash is
one unparsable line, skipped. A reader reads from a cursor (the journal's inode and an offset, kept in its change
token), so the cost follows the change, not the journal's length. Past MAX_BYTES a writer starts the journal
afresh (a temp file renamed over it); a reader whose links were in the old one lists once.
"""

from __future__ import annotations

import json
import os
import stat

from agentmem.store import layout

MAX_BYTES = 1 << 20  # a journal longer than this is started afresh by the next writer (~4,000 links)
MAX_READ = 256 * 1024  # bytes a reader reads from its cursor; behind by more, it lists (cheaper by then)
MAX_NAMES = 256  # file names one link may carry
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def path(folder: str) -> str:
    """The journal of the notes folder `folder` (an OS path), beside it."""
    head, name = os.path.split(folder.rstrip(os.sep))
    return os.path.join(head, layout.journal_file(name))


def cursor(folder: str) -> list[int] | None:
    """Where the journal ends now, [inode, size] ([0, 0]: no journal yet), or None where it cannot be read. A
    refresh reads it before the folder's signature: a link from that signature is appended after this point."""
    try:
        st = os.stat(path(folder), follow_symlinks=False)
    except FileNotFoundError:
        return [0, 0]
    except OSError:
        return None
    return [st.st_ino, st.st_size] if stat.S_ISREG(st.st_mode) else None


def append(folder: str, before: list, after: list, added: set[str]) -> None:
    """Record that the notes folder `folder` went from signature `before` to `after` by `added` alone (what a
    witness proved). Best effort: a link not written costs readers a listing, nothing else."""
    from agentmem.fsutil import write_atomic

    names = sorted(added)
    if before == after or not names or len(names) > MAX_NAMES or not all(map(_plain, names)):
        return
    line = b"\n" + json.dumps({"from": before, "to": after, "add": names}, separators=(",", ":")).encode() + b"\n"
    target = path(folder)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW, 0o644)
    except OSError:
        return  # a read-only share, or a link planted where the journal goes: never written through
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return
        if st.st_size + len(line) > MAX_BYTES:
            write_atomic(target, line, durable=False)  # afresh: readers' cursors name the old inode
        else:
            os.write(fd, line)  # one write at the end: concurrent appends never interleave within a line
    except OSError:
        pass
    finally:
        os.close(fd)


def follow(folder: str, start: list, end: list, at: object) -> tuple[list[str], list[int]] | None:
    """The file names that took the notes folder `folder` from signature `start` to `end`, read from the cursor
    `at`, and the cursor to keep; None unless links lead from `start` to exactly `end` (then the caller lists)."""
    try:
        fd = os.open(path(folder), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _NOFOLLOW)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        ok = isinstance(at, list) and len(at) == 2 and all(isinstance(v, int) for v in at)
        offset = at[1] if ok and at[0] == st.st_ino and 0 <= at[1] <= st.st_size else 0  # type: ignore[index]
        if st.st_size - offset > MAX_READ:
            return None
        data = os.pread(fd, st.st_size - offset, offset)
    except OSError:
        return None
    finally:
        os.close(fd)
    links: dict[tuple, tuple[list, list[str], int]] = {}  # from -> (to, names, where its line starts)
    where = offset
    for line in data.split(b"\n"):
        begun, where = where, where + len(line) + 1
        link = _link(line)
        if link is None:
            continue  # a torn or garbage line links nothing
        key = tuple(link[0])
        if key in links and links[key][:2] != link[1:]:
            return None  # two ways on from one signature: no writer's witness allows that; trust neither
        links[key] = (link[1], link[2], begun)
    names: list[str] = []
    here, seen, last = start, set(), offset
    while here != end:
        key = tuple(here)
        if key in seen or key not in links:
            return None
        seen.add(key)
        here, more, last = links[key]
        names += more
    # The next read begins at the last link followed (read again: a link appended since may have landed before it)
    return names, [st.st_ino, last]


def _link(line: bytes) -> tuple[list, list, list[str]] | None:
    if not line.startswith(b"{"):
        return None
    try:
        link = json.loads(line)
    except ValueError:  # UnicodeDecodeError too
        return None
    if not isinstance(link, dict):
        return None
    before, after, names = link.get("from"), link.get("to"), link.get("add")
    if not (isinstance(before, list) and isinstance(after, list) and _sig(before) and _sig(after)
            and before != after and isinstance(names, list) and names and len(names) <= MAX_NAMES
            and all(isinstance(n, str) and _plain(n) for n in names)):
        return None
    return before, after, names


def _sig(value: object) -> bool:
    return (isinstance(value, list) and len(value) == 5
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value))


def _plain(name: str) -> bool:
    """A file name directly in the folder, not hidden (no listing shows a hidden one)."""
    return bool(name) and not name.startswith(".") and "/" not in name and "\0" not in name and "\\" not in name
