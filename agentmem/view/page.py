"""The memory view as one HTML file: the data of `data.py` as inert JSON (each note's row in the list, in
columns: `columns`), the page's own style and script (`page.css`; `markdown.js`, `search.js`,
`panels.js` and `page.js` as one script: package files beside this one), and a Content-Security-Policy
that lets nothing else run or load. What a note holds beyond its row, and the search postings, are in
script files beside the page (`files.py`), read when a note is opened or searched for; nothing is
served: the page works opened from disk.

Safety of the page (INV view-inert):
- the data sits in `<script type="application/json">`, which the browser never runs, with `<`, `>`,
  `&`, U+2028 and U+2029 written as JSON `\\uXXXX` escapes, so no note text can close that element
  (`</script>`), open a comment, or end any other element;
- the script builds every element with DOM calls and puts note text in with `textContent`, never as
  markup; a link is made only for an `http:`/`https:` URL;
- the policy is `default-src 'none'`: no fetch, frame, form, font, media or image from anywhere but
  `data:`, no style but the page's own, named by its SHA-256, and no script but the page's own (by
  SHA-256) and files (`'self'`, which for a page opened from disk is file: URLs, never a network).
"""

from __future__ import annotations

import base64
import hashlib
import os
from importlib import resources

from agentmem.paths import VIEW_PAGE, view_dir
from agentmem.view.files import inert_json

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from agentmem.view.collect import Collector
    from agentmem.view.data import Gathered

_TITLE = "agentmem: what your agents remember"


SCRIPTS = ("markdown.js", "search.js", "panels.js", "page.js")  # one script element, in this order


def asset(name: str) -> str:
    """One of the page's own files (`page.css` and the `SCRIPTS`), shipped beside this module."""
    return resources.files("agentmem.view").joinpath(name).read_text(encoding="utf-8")


def _digest(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def policy(script: str, style: str) -> str:
    """The page's Content-Security-Policy: nothing from anywhere, but its own script, style and note files."""
    return ("default-src 'none'; " f"script-src {_digest(script)} 'self'; " f"style-src {_digest(style)}; "
            "img-src data:; base-uri 'none'; form-action 'none'")


def render(data: dict) -> bytes:
    """The whole page, as UTF-8 bytes."""
    script, style = "\n".join(asset(name) for name in SCRIPTS), asset("page.css")
    if "</" in script or "</" in style:  # would end its element early: a defect of the package, never data
        raise RuntimeError("the page's script or page.css holds '</'")
    head = (
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{policy(script, style)}\">\n"
        "<meta name=\"referrer\" content=\"no-referrer\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{_TITLE}</title>\n<style>{style}</style>\n</head>\n"
    )
    body = (
        "<body>\n<noscript><p class=\"noscript\">This page needs JavaScript to show the notes (its own "
        "script only: it loads nothing but its note files beside it).</p></noscript>\n"
        f"<script type=\"application/json\" id=\"memory-data\">{inert_json(data)}</script>\n"
        f"<script>{script}</script>\n</body>\n</html>\n"
    )
    return (head + body).encode("utf-8")


def default_path(machine: str) -> str:
    """Where `agentmem view` writes the page unless told: inside the machine folder (not tracked by git)."""
    return os.path.join(view_dir(machine), VIEW_PAGE)


def write(path: str, gathered: Gathered) -> dict:
    """Write the note files, then the page at `path` atomically (a reader sees the old page or the new one,
    each with its own files), then remove the older files. Returns {bytes: the page's size, files: the
    folder of its note files, files_bytes: their size}."""
    from agentmem.fsutil import write_atomic
    from agentmem.view import files

    where = files.write(path, gathered.notes)
    html = render(gathered.meta | {"files": where, "search": search_settings(), "notes": columns(gathered.notes)})
    write_atomic(path, html, durable=False)  # derived: rewritten by the next `agentmem view`
    files.remove_old(path, where["generation"])
    return {"bytes": len(html), "files": files.companion(path), "files_bytes": where["bytes"]}


def search_settings() -> dict:
    """What the page's search needs to rank as `agentmem search` does (search/ranked.py, search/find.py)."""
    from agentmem.search import find, ranked, words
    from agentmem.search.index import TITLE_WEIGHT

    return {"k1": ranked.K1, "b": ranked.B, "pair_bonus": ranked.PAIR_BONUS, "depth": ranked.RERANK_DEPTH,
            "max_terms": ranked.MAX_QUERY_TERMS, "review_demotion": find.REVIEW_DEMOTION,
            "title_weight": TITLE_WEIGHT, "limit": 10, "stopwords": " ".join(sorted(words.STOPWORDS)),
            "fold": _casefold()}


def _casefold() -> dict[str, str]:
    """Where Python's casefold() (search/words.py) differs from lower(): the page lowers its query with
    JavaScript's toLowerCase() and then folds these (µ -> μ, ß -> ss, ς -> σ, ...). None lies past U+FFFF."""
    return {c.lower(): c.casefold() for c in map(chr, range(0x80, 0x10000))
            if not 0xD800 <= ord(c) <= 0xDFFF and c.casefold() != c.lower()}


def columns(notes: Collector) -> dict:
    """The notes' rows, one column each, compact: a page of 100k notes stays under 10 MB (W item 5).

    `id`, `title`: joined by line breaks (neither holds one); `created`: {row: time} only where it is not
    the one the ID spells; `attr`: base-36 (agent * kinds + kind) * projects + project, indexes into
    `tables`; `dl`: base-36 length in search terms; `states`: the state letters (collect.STATE_CODES);
    `tags`: {row: [tag index]}; `corrects`: {row: row, or the ID when the page lacks it}; `corrected_by`:
    {row: [rows, newest first]}.
    """
    from agentmem.view.collect import STATE_CODES, b36

    rows = notes.rows
    tables: dict[str, list[str]] = {"projects": [], "kinds": [], "agents": [], "tags": []}
    index: dict[str, dict[str, int]] = {k: {} for k in tables}

    def at(table: str, value: str) -> int:
        got = index[table].get(value)
        if got is None:
            got = index[table][value] = len(tables[table])
            tables[table].append(value)
        return got

    for r in rows:  # the tables first: `attr` needs their sizes
        at("projects", r.project), at("kinds", r.kind), at("agents", r.agent)
    np, nk = len(tables["projects"]), len(tables["kinds"])
    created, tags, corrects, corrected_by = {}, {}, {}, {}
    for i, r in enumerate(rows):
        if r.created != _id_time(r.id):
            created[i] = r.created
        if r.tags:
            tags[i] = [at("tags", t) for t in r.tags]
        if r.corrects:
            corrects[i] = r.corrects_row if r.corrects_row is not None else r.corrects
        if r.corrected_by:
            corrected_by[i] = r.corrected_by
    return {
        "count": len(rows),
        "id": "\n".join(r.id for r in rows),
        "title": "\n".join(r.title for r in rows),
        "attr": ",".join(b36((index["agents"][r.agent] * nk + index["kinds"][r.kind]) * np
                              + index["projects"][r.project]) for r in rows),
        "dl": ",".join(b36(r.dl) for r in rows),
        "states": ",".join(r.states for r in rows),
        "created": created, "tags": tags, "corrects": corrects, "corrected_by": corrected_by,
        "tables": tables | {"states": [{"code": c, "name": n} for n, c in STATE_CODES.items()]},
    }


def _id_time(note_id: str) -> str | None:
    """The creation time an allocated ID spells (`20261201T100000000Z-...` -> `2026-12-01T10:00:00.000Z`)."""
    if len(note_id) < 20 or note_id[8] != "T" or note_id[18:20] != "Z-":
        return None
    d = note_id
    return f"{d[0:4]}-{d[4:6]}-{d[6:8]}T{d[9:11]}:{d[11:13]}:{d[13:15]}.{d[15:18]}Z"
