"""Withholding credentials from what agentmem shows of a note: the one redaction step of every way out.

Save refuses credentials, but a note can reach the store another way (an older
version, a hand-written file in a folder store, another tool, a sync). Whatever
wrote it, nothing agentmem prints or returns shows the credential: each one is
replaced by `[REDACTED:<kind>]` and the answer lists what was withheld
(`{"where": "title"|"tags"|"sources"|"body"|<key>, "kind": ..., "line"?: N}`).

`redact_note` works on a parsed note (its metadata and body) and never raises:
a credential whose extent cannot be told (a key block missing its BEGIN or END
line) withholds the whole field. `replica/redacted_copies.py` applies it where a note
enters the cache, so the cache and the index never hold the raw value; the
store's own copy is left for `agentmem audit` to find.

INV no-credentials.
"""

from __future__ import annotations

from agentmem.safety.credentials import Unredactable, redact, scan

# Frontmatter keys whose values name things; shown under these names in `withheld`.
_LIST_NAMES = {"tags": "tags", "sources": "sources"}


class Redacted:
    """A note's metadata and body fit to show, and what was withheld from them."""

    __slots__ = ("meta", "body", "withheld")

    def __init__(self, meta: dict, body: str, withheld: list[dict]):
        self.meta, self.body, self.withheld = meta, body, withheld


def needs_redaction(text: str, known: tuple[str, ...] | list[str] = ()) -> bool:
    """Whether `text` (a whole note file) holds anything to withhold: one scan, the common answer no."""
    return bool(scan(text, known))


def redact_text(text: str, where: str, known: tuple[str, ...] | list[str] = (),
                withheld: list[dict] | None = None) -> str:
    """`text` with each credential replaced by `[REDACTED:<kind>]`, each one recorded in `withheld`
    under `where` (body findings with their line). Text whose credential cannot be bounded is withheld
    whole."""
    findings = scan(text, known)
    if not findings:
        return text
    if withheld is not None:
        for f in findings:
            item: dict = {"where": where, "kind": f.kind}
            if where == "body":
                item["line"] = f.line
            withheld.append(item)
    try:
        return redact(text, known)
    except Unredactable:
        return f"[REDACTED:{findings[0].kind}]"


def redact_note(meta: dict, body: str, known: tuple[str, ...] | list[str] = ()) -> Redacted:
    """The note's metadata (strings and lists of strings, as `note.document.parse` gives them) and body
    with every credential withheld."""
    withheld: list[dict] = []
    out: dict = {}
    for key, value in meta.items():
        if scan(key, known):  # a hand-written key holding a credential: dropped, it names nothing
            withheld.extend({"where": "frontmatter key", "kind": f.kind} for f in scan(key, known))
            continue
        where = _LIST_NAMES.get(key, key)
        if isinstance(value, str):
            out[key] = redact_text(value, where, known, withheld)
        elif isinstance(value, list):
            out[key] = [redact_text(v, where, known, withheld) if isinstance(v, str) else v for v in value]
        else:
            out[key] = value
    return Redacted(out, redact_text(body, "body", known, withheld), withheld)
