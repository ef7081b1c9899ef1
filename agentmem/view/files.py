"""The memory view's note files: what a note holds beyond its row in the list, and the search postings,
in small script files beside the page, read only when the page needs them (W item 5: a page of 100k
notes stays under 10 MB; opening a note reads one file of `NOTES_PER_FILE` notes, a search one file
per word).

Opened from disk, the page may not `fetch()` a file beside it (Chromium refuses file:// fetches), but
it may run a script from there: each file is one call, `agentmemViewFile(generation, kind, number,
data)`, with `data` as inert JSON (`inert_json`: no `</script>`, U+2028/2029 escaped), so note
text is data in these files as in the page (INV view-inert). Its policy lets the page run scripts
from files only (`'self'` of a file:// page), never from a network.

Layout, beside `<name>.html`: `<name>.files/<generation>/n<k>.js` (the details of notes k*N to
k*N+N-1, in the page's order) and `t<k>.js` (the postings of the terms whose hash picks k). A new
page's files go into a new generation folder, renamed into place whole before the page is written,
and the older generations are removed after; a page and the files it names always match. A purge
deletes a page holding the note and this folder with it (`written.drop_holding`).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time

from agentmem.fsutil import TMP_PREFIX
from agentmem.view.written import companion  # the name a purge finds them by

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from agentmem.view.collect import Collector

NOTES_PER_FILE = 250
# Bytes of postings a term file holds about (a very common term alone may be more): a search of a few
# words reads a few such files; 100k notes make about 160 of them (docs/benchmarks.md, the view at 100k).
TERM_FILE_BYTES = 192 * 1024
CALLBACK = "agentmemViewFile"


def term_file(term: str, count: int) -> int:
    """Which of `count` term files holds `term`: FNV-1a over its UTF-16 code units, as the page computes it."""
    h = 0x811C9DC5
    data = term.encode("utf-16-le")
    for i in range(0, len(data), 2):
        h ^= data[i] | (data[i + 1] << 8)
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h % count


# What JSON keeps raw but an HTML parser or an old JavaScript engine would read: written as escapes
# (the same characters JSON.parse reads back).
_INERT = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def inert_json(data: object) -> str:
    """`data` as JSON that is safe as the content of a `<script type="application/json">` element, and as a
    value in a script file: no `</script>`, comment or line separator can come of note text."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).translate(_INERT)


def _script(generation: str, kind: str, number: int, data: object) -> bytes:
    return f"{CALLBACK}({inert_json(generation)},{inert_json(kind)},{number},{inert_json(data)});\n".encode()


def write(page: str, notes: Collector) -> dict:
    """Write the note files of a page about to be written at `page`; returns what the page needs to find
    them: {dir (relative URL), generation, notes_per_file, term_files, bytes (written)}."""
    from urllib.parse import quote

    folder = companion(page)
    if os.path.exists(folder) and not os.path.isdir(folder):
        from agentmem.errors import InvalidInput, NextStep, Option

        raise InvalidInput(f"{folder} is in the way: the view keeps its note files in a folder of that name",
                           hint=[NextStep.of(f"move or delete {folder}, which is not a folder"),
                                 NextStep.of("or write the page elsewhere with ", Option("output", "PATH"))])
    os.makedirs(folder, exist_ok=True)
    now = time.time_ns()  # generations sort by when they were made
    generation = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now // 10**9)) + f"{now % 10**9:09d}-{os.urandom(3).hex()}"
    staging = os.path.join(folder, f"{TMP_PREFIX}{generation}.{os.getpid()}.{os.urandom(4).hex()}")
    os.mkdir(staging)
    try:
        batch: list[dict] = []
        number = size = 0
        for detail in notes.details():
            batch.append(detail)
            if len(batch) == NOTES_PER_FILE:
                size += _put(staging, f"n{number}.js", _script(generation, "n", number, batch))
                batch, number = [], number + 1
        if batch:
            size += _put(staging, f"n{number}.js", _script(generation, "n", number, batch))
        postings = notes.postings
        count = max(1, math.ceil(postings.size / TERM_FILE_BYTES))
        groups: list[dict[str, str]] = [{} for _ in range(count)]
        for term, text in postings.text.items():
            groups[term_file(term, count)][term] = text.decode("ascii")
        postings.text.clear()  # the largest thing held: let it go file by file
        for k, group in enumerate(groups):
            size += _put(staging, f"t{k}.js", _script(generation, "t", k, group))
            groups[k] = {}
        os.rename(staging, os.path.join(folder, generation))
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return {"dir": quote(os.path.basename(folder)) + "/" + generation, "generation": generation,
            "notes_per_file": NOTES_PER_FILE, "term_files": count, "bytes": size}


def _put(folder: str, name: str, data: bytes) -> int:
    with open(os.path.join(folder, name), "xb") as fh:
        fh.write(data)
    return len(data)


def remove_old(page: str, keep: str) -> None:
    """Remove the note files of earlier pages: every generation but `keep`, except what another `agentmem
    view` may be writing or have written meanwhile (staging, or newer than `keep`, and minutes old)."""
    folder = companion(page)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        path = os.path.join(folder, name)
        if name == keep or ((name.startswith(TMP_PREFIX) or name > keep) and _young(path)):
            continue
        shutil.rmtree(path, ignore_errors=True)


def _young(path: str) -> bool:
    try:
        return time.time() - os.stat(path).st_mtime < 600
    except OSError:
        return False
