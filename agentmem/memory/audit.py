"""Auditing the store for credentials: every note in it, not only the cache (what `agentmem audit` runs).

A note can reach the store without passing save's screening (by hand, an older
version, another tool, a sync). The cache and every output already withhold what
it holds (`replica/redacted_copies.py`); the audit finds it in the store itself: it lists
and reads every note of the projects asked for through the store interface (a
folder or a bucket alike) and scans each with the same step, reporting the note,
the place and the kind, never the value.

`save_copy` saves a redacted copy of a note as a new note (same project, kind
and tags; title and body redacted; `corrects` the original; a source naming the
original); `audit --fix` then purges the original (`memory/curation.purge`: from
the store and every machine's cache). A copy an earlier fix saved is found and
reused, so a fix interrupted between the two steps saves one copy.

INV no-credentials.
"""

from __future__ import annotations

from agentmem import errors
from agentmem.errors import Command
from agentmem.note import document
from agentmem.store import layout

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Iterable

    from agentmem.config import Config
    from agentmem.memory.save import Saved
    from agentmem.store.base import ObjectInfo

SOURCE_PREFIX = "agentmem audit: redacted copy of "  # the source a copy names its original by


class Finding:
    """A note in the store holding credentials: where each one is (never its value)."""

    __slots__ = ("project", "id", "path", "withheld", "copy", "named", "title")

    def __init__(self, project: str, note_id: str, path: str, withheld: list[dict], named: bool = False,
                 title: str | None = None):
        self.project, self.id, self.path, self.withheld = project, note_id, path, withheld
        self.copy: str | None = None  # the redacted copy an earlier fix saved, if any
        self.named = named  # the note's ID itself holds the credential (id and path are shown redacted)
        self.title = title  # its title as every output shows it (each credential redacted); None if unread

    def purge_step(self) -> Command | None:
        """The command that deletes the original for good (issue P's `purge`); none for a note named by a
        credential, since no printed command may carry its name."""
        return None if self.named else Command("purge", self.id, "--project", self.project)

    def to_json(self) -> dict:
        step = self.purge_step()
        purge = step.line() if step is not None else None
        return {"project": self.project, "id": self.id, "path": self.path, "title": self.title,
                "withheld": self.withheld, "redacted_copy": self.copy, "purge": purge}


class Audit:
    """What one audit saw: how many notes it read, what it found, what it could not read."""

    def __init__(self, store: dict, projects: list[str]):
        self.store, self.projects = store, projects
        self.scanned = 0
        self.findings: list[Finding] = []
        self.unreadable: list[dict] = []  # [{id, project, error, message}]

    def to_json(self) -> dict:
        return {"status": "found" if self.findings else "clean", "store": self.store, "projects": self.projects,
                "scanned": self.scanned, "findings": [f.to_json() for f in self.findings],
                "unreadable": self.unreadable}


def _notes_of(listing: Iterable[ObjectInfo], project: str | None) -> list[tuple[str, str, str]]:
    """(project, note id, path) of every note object in a listing (of one project, or of all)."""
    out = []
    for obj in listing:
        found = layout.parse(obj.path)
        if found is not None and found[1] == layout.NOTE and (project is None or found[0] == project):
            out.append((found[0], found[2], obj.path))
    return sorted(out)


def audit(machine: str, cfg: Config, project: str | None, *, timeout: float | None = None) -> Audit:
    """Scan every note of `project` (None: of every project) in the configured store."""
    from agentmem.replica import redacted_copies
    from agentmem.replica.fetch_plan import MAX_CACHED_OBJECT
    from agentmem.store import identity

    store = identity.open_known(machine, cfg.store, timeout=timeout)
    listing = store.list(layout.notes_prefix(project) if project else layout.PROJECTS)
    found = _notes_of(listing, project)
    result = Audit(cfg.store.to_dict(), [project] if project else sorted({p for p, _, _ in found}))
    copies: dict[tuple[str, str], str] = {}  # (project, original id) -> the copy an earlier fix saved
    for proj, note_id, path in found:
        if redacted_copies.names_a_credential(note_id):  # never printed: neither its ID nor its path
            from agentmem.safety import credentials, redaction

            named: list[dict] = []
            shown_id = redaction.redact_text(note_id, "note ID", credentials.env_secrets(), named)
            result.findings.append(Finding(proj, shown_id, layout.note_path(proj, shown_id), named, True))
            continue
        try:
            data = store.get(path, MAX_CACHED_OBJECT)
        except (errors.Unreadable, errors.NotFound) as exc:
            result.unreadable.append({"id": note_id, "project": proj, "error": exc.kind, "message": exc.one_line()})
            continue
        result.scanned += 1
        parsed = document.parse(data)
        original = _copy_of(parsed)
        if original is not None:
            copies[(proj, original)] = note_id
        shown, held = redacted_copies.clean(data)
        if held:
            result.findings.append(Finding(proj, note_id, path, held, title=document.parse(shown).title))
    for f in result.findings:
        f.copy = None if f.named else copies.get((f.project, f.id))
    return result


def _copy_of(parsed: document.Parsed) -> str | None:
    """The original a redacted copy made by `fix` stands for (its `corrects`, named in its sources)."""
    corrects = parsed.meta.get("corrects")
    sources = parsed.meta.get("sources")
    if isinstance(corrects, str) and isinstance(sources, list) and SOURCE_PREFIX + corrects in sources:
        return corrects
    return None


def save_copy(machine: str, cfg: Config, finding: Finding, *, timeout: float | None = None) -> Saved:
    """Save the redacted copy of one finding's note as a new note; returns what `save` returned.

    The store's note is read again (the audit kept no content) and passes the same redaction as every
    output; a tag that was only a credential is dropped, a redacted one kept.
    """
    from agentmem.memory import save
    from agentmem.replica import redacted_copies
    from agentmem.replica.fetch_plan import MAX_CACHED_OBJECT
    from agentmem.store import identity

    store = identity.open_known(machine, cfg.store, timeout=timeout)
    shown, _ = redacted_copies.clean(store.get(finding.path, MAX_CACHED_OBJECT))
    parsed = document.parse(shown)
    meta = parsed.meta

    def strings(key: str) -> list[str]:
        value = meta.get(key)
        items = value if isinstance(value, list) else [value] if isinstance(value, str) else []
        return [v for v in items if isinstance(v, str) and v.strip() and not _only_redacted(v)]

    title = meta.get("title") if isinstance(meta.get("title"), str) else None
    body = parsed.body if parsed.body.strip() else "(the note's body was empty)\n"
    return save.save(machine, cfg, finding.project, body, title=title, kind=parsed.kind,
                     tags=strings("tags")[: document.MAX_LIST_ITEMS],
                     sources=(strings("sources") + [SOURCE_PREFIX + finding.id])[-document.MAX_LIST_ITEMS:],
                     corrects=finding.id, redact=True, timeout=timeout,
                     author=document.author_of(meta))  # its words are the original's author's (else the auditor's)


def _only_redacted(value: str) -> bool:
    return value.startswith("[REDACTED:") and value.endswith("]") and value.count("[") == 1
