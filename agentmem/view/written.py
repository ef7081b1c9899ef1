"""The memory view pages this machine wrote, and dropping those that hold a note that must not exist.

`agentmem view` writes a page holding every note's ID and title (`page.py`), and beside it a folder of
note files holding their full text and search terms (`files.py`, named by `companion`), wherever
`--output` says. It records each page it writes in `view/written.json` in the machine folder, so that a
purge, here or learnt by a refresh (`replica/states.forget`), can delete every page holding the purged
note, with its note files (INV purged-gone): they are derived, and `agentmem view` writes them again
without the note.

Placed low (beside the cache, layer 4) because the refresh that learns of a purge calls it; it imports
nothing of the page itself.
"""

from __future__ import annotations

import json
import os

from agentmem.fsutil import read_bytes, write_atomic
from agentmem.paths import VIEW_DIR, VIEW_PAGE, VIEW_REGISTRY

REGISTRY = os.path.join(VIEW_DIR, VIEW_REGISTRY)  # in the machine folder
DEFAULT_PAGE = os.path.join(VIEW_DIR, VIEW_PAGE)  # where `view` writes unless told (page.default_path)
_MARK = b'id="memory-data"'  # what every page `view` writes holds: a file without it is not ours


def companion(path: str) -> str:
    """The folder of a page's note files: `index.html` -> `index.files` beside it."""
    stem = os.path.splitext(path)[0]
    folder = stem + ".files"
    return folder if folder != path else path + "-notes.files"


def _registry(machine: str | os.PathLike) -> str:
    return os.path.join(os.fspath(machine), REGISTRY)


def pages(machine: str | os.PathLike) -> list[str]:
    """Every page this machine recorded writing, and the default one (written before pages were recorded)."""
    found = [os.path.join(os.fspath(machine), DEFAULT_PAGE)]
    try:
        kept = json.loads(read_bytes(_registry(machine), 1 << 20))
        listed = kept.get("pages") if isinstance(kept, dict) else None
    except (OSError, ValueError):
        listed = None
    for path in listed if isinstance(listed, list) else []:
        if isinstance(path, str) and os.path.isabs(path) and path not in found:
            found.append(path)
    return found


def remember(machine: str | os.PathLike, path: str) -> None:
    """Record a page `view` just wrote (best effort: the default page is found without it)."""
    default, *listed = pages(machine)
    known = [p for p in listed if os.path.exists(p)]
    if path in known or path == default:
        return
    try:
        write_atomic(_registry(machine), json.dumps({"pages": known + [path]}, indent=1).encode(), durable=False)
    except OSError:
        pass


def holding(machine: str | os.PathLike, note_ids: list[str]) -> list[str]:
    """The recorded pages whose text holds one of `note_ids` (an ID is plain ASCII in the page's data)."""
    wanted = [i.encode("ascii", "replace") for i in note_ids]
    out = []
    for path in pages(machine):
        try:
            data = read_bytes(path)
        except OSError:
            continue
        if _MARK in data and any(i in data for i in wanted):
            out.append(path)
    return out


def drop_holding(machine: str | os.PathLike, note_ids: list[str]) -> list[str]:
    """Delete every page this machine wrote that holds one of `note_ids`, and its note files; returns the
    pages deleted. A page that cannot be deleted is left (the purge's other steps never wait on a page)."""
    import shutil

    dropped = []
    for path in holding(machine, note_ids):
        try:
            os.unlink(path)
        except OSError:  # gone meanwhile, or a folder that refuses: the next purge of it tries again
            continue
        shutil.rmtree(companion(path), ignore_errors=True)  # the note's text and terms are in there
        dropped.append(path)
    return dropped
