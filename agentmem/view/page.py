"""The memory view as ONE self-contained HTML file: the data of `data.py` as inert JSON, the page's own
style and script (`page.css`, `page.js`, package files beside this one), and a Content-Security-Policy
that lets nothing else run or load.

Safety of the page (INV view-inert):
- the data sits in `<script type="application/json">`, which the browser never runs, with `<`, `>`,
  `&`, U+2028 and U+2029 written as JSON `\\uXXXX` escapes, so no note text can close that element
  (`</script>`), open a comment, or end any other element;
- `page.js` builds every element with DOM calls and puts note text in with `textContent`, never as
  markup; a link is made only for an `http:`/`https:` URL;
- the policy is `default-src 'none'`: no fetch, frame, form, font, media or image from anywhere but
  `data:`, and no script or style but the two in the file, named by their SHA-256.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from importlib import resources

# What JSON keeps raw but an HTML parser or an old JavaScript engine would read: written as escapes
# (the same characters JSON.parse reads back).
_INERT = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})
_TITLE = "agentmem: what your agents remember"


def asset(name: str) -> str:
    """One of the page's own files (`page.css`, `page.js`), shipped beside this module."""
    return resources.files("agentmem.view").joinpath(name).read_text(encoding="utf-8")


def inert_json(data: dict) -> str:
    """`data` as JSON that is safe as the content of a `<script type="application/json">` element."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).translate(_INERT)


def _digest(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def policy(script: str, style: str) -> str:
    """The page's Content-Security-Policy: nothing from anywhere, but its own script and style."""
    return ("default-src 'none'; " f"script-src {_digest(script)}; " f"style-src {_digest(style)}; "
            "img-src data:; base-uri 'none'; form-action 'none'")


def render(data: dict) -> bytes:
    """The whole page, as UTF-8 bytes."""
    script, style = asset("page.js"), asset("page.css")
    if "</" in script or "</" in style:  # would end its element early: a defect of the package, never data
        raise RuntimeError("page.js or page.css holds '</'")
    head = (
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{policy(script, style)}\">\n"
        "<meta name=\"referrer\" content=\"no-referrer\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{_TITLE}</title>\n<style>{style}</style>\n</head>\n"
    )
    body = (
        "<body>\n<noscript><p class=\"noscript\">This page needs JavaScript to show the notes (its own "
        "script only: it loads nothing).</p></noscript>\n"
        f"<script type=\"application/json\" id=\"memory-data\">{inert_json(data)}</script>\n"
        f"<script>{script}</script>\n</body>\n</html>\n"
    )
    return (head + body).encode("utf-8")


def default_path(machine: str) -> str:
    """Where `agentmem view` writes the page unless told: inside the machine folder (not tracked by git)."""
    return os.path.join(machine, "view", "index.html")


def write(path: str, data: dict) -> int:
    """Write the page to `path` atomically (a reader sees the old page or the new one); returns its size."""
    from agentmem.fsutil import write_atomic

    html = render(data)
    write_atomic(path, html, durable=False)  # derived: rewritten by the next `agentmem view`
    return len(html)
