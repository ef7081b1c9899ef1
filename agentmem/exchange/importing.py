"""`agentmem import`: bring memories in from an agentmem export or another tool's own files.

A dry run by default: every item is listed with what would happen (`save`, `present`, `refused`) and
nothing is written. With `apply`, each item to save goes through the one save path (persisted as
pending before its upload: INV nothing-lost), credentials refused or redacted as `save` does.

Idempotent by content: an item whose text a note of the project already holds (in the store, as the
refreshed cache shows it, or pending on this machine) is `present`, so a second `--apply` saves nothing.
An agentmem export keeps IDs and bytes: its notes are sent as they are, under their own IDs, and a note
whose ID the project already has is `present`.
"""

from __future__ import annotations

import hashlib
import os

from agentmem import errors
from agentmem.config import check_project_name
from agentmem.errors import InvalidInput
from agentmem.exchange import export, native
from agentmem.memory import ids, notes

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from types import ModuleType

    from agentmem.config import Config


class Planned:
    """One item and what import does with it: `action` is save, present or refused (with `reason`)."""

    __slots__ = ("item", "project", "action", "reason", "note_id", "data")

    def __init__(self, item: native.Item, project: str, action: str, reason: str | None = None,
                 note_id: str | None = None, data: bytes | None = None):
        self.item, self.project, self.action, self.reason = item, project, action, reason
        self.note_id, self.data = note_id, data  # an agentmem note's own ID and bytes

    def to_json(self) -> dict:
        from agentmem.safety import credentials, screening

        title = screening.withhold(self.item.title, credentials.env_secrets())[0]  # INV no-credentials
        out = {"action": self.action, "project": self.project, "title": title, "source": self.item.source}
        if self.note_id:
            out["id"] = self.note_id
        if self.reason:
            out["reason"] = self.reason
        return out


def _key(text: str) -> str:
    return " ".join(text.split()).casefold()


Source = tuple[native.Item, str, "str | None", "bytes | None"]  # item, project, own ID and bytes (agentmem)


def agentmem_notes(folder: str, only: str | None) -> list[Source]:
    """An export's notes as (item, project, ID, bytes), checked against its manifest."""
    manifest = export.read_manifest(folder)
    if manifest is None:
        raise InvalidInput(f"{folder} holds no {export.MANIFEST}: not an agentmem export")
    out: list[Source] = []
    for entry in manifest["notes"]:
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str)
                                                 for k in ("id", "project", "path", "sha256")):
            raise InvalidInput(f"{folder}/{export.MANIFEST} has a malformed entry; nothing was imported")
        if only is not None and entry["project"] != only:
            continue
        note_id = ids.check_id(entry["id"])
        if not export._inside(entry["path"]):
            raise InvalidInput(f"{folder}/{export.MANIFEST} names a path outside the export: {entry['path']!r}")
        path = os.path.join(folder, entry["path"])
        from agentmem import fsutil

        data = fsutil.read_bytes(path, notes.MAX_NOTE_BYTES + 1)
        parsed = notes.parse(data)
        item = native.Item(parsed.title, parsed.body, [], path)
        if hashlib.sha256(data).hexdigest() != entry["sha256"]:
            out.append((item, entry["project"], note_id, b""))  # edited since export: refused below
        else:
            out.append((item, entry["project"], note_id, data))
    return out


def plan(machine: str, cfg: Config, fmt: str, path: str, project: str | None, *, redact: bool = False,
         timeout: float | None = None) -> dict:
    """What importing `path` would do, item by item, after refreshing each project as search does."""
    from agentmem.memory import cache, pending
    from agentmem.safety import credentials
    from agentmem.search import follow

    if fmt not in native.FORMATS:
        raise InvalidInput(f"unknown import format {fmt!r}: one of {', '.join(native.FORMATS)}")
    raw: list[Source]
    if fmt == "agentmem":
        raw = agentmem_notes(path, project)
    else:
        if project is None:
            raise InvalidInput("import needs the project to save into: pass --project or run it inside a "
                               "mapped directory")
        raw = [(item, project, None, None) for item in native.read_items(fmt, path)]
    known: dict[str, tuple[set[str], set[str]]] = {}
    stale: dict[str, str] = {}
    planned = []
    for item, proj, note_id, data in raw:
        check_project_name(proj)
        if proj not in known:
            status = cache.ensure_fresh(machine, cfg.store, proj, max_age=cfg.cache_max_age, timeout=timeout,
                                        index=follow.update)
            if status.stale:
                stale[proj] = status.reason or "the store could not be checked"
            known[proj] = _known(machine, cfg, proj, cache, pending)
        have_ids, have_texts = known[proj]
        text = f"{item.title}\n{item.body}"
        if len(item.body.encode("utf-8", errors="replace")) > notes.MAX_NOTE_BYTES:
            planned.append(Planned(item, proj, "refused", f"larger than a note may be ({notes.MAX_NOTE_BYTES} "
                                   "bytes)", note_id))
        elif data == b"":
            planned.append(Planned(item, proj, "refused", "its file changed since the export (SHA-256 differs "
                                   "from the manifest), so its ID no longer names these bytes", note_id))
        elif note_id in have_ids or (note_id is None and _key(item.body) in have_texts):
            planned.append(Planned(item, proj, "present", None, note_id))
        elif (found := credentials.scan(text, credentials.env_secrets())) and (data is not None or not redact):
            why = "cannot be redacted: its bytes are kept" if data is not None else "pass --redact to save it redacted"
            planned.append(Planned(item, proj, "refused", f"holds a credential ({found[0].kind}); {why}", note_id))
        else:
            planned.append(Planned(item, proj, "save", None, note_id, data))
            have_texts.add(_key(item.body))  # the same memory twice in one source is saved once
            if note_id:
                have_ids.add(note_id)
    return {"format": fmt, "path": path, "items": planned, "stale": bool(stale), "stale_projects": stale}


def _known(machine: str, cfg: Config, project: str, cache: ModuleType,
           pending: ModuleType) -> tuple[set[str], set[str]]:
    """The IDs and the body texts (normalised) the project already holds, cached or pending."""
    found: dict[str, bytes] = dict(pending.project_notes(machine, project))
    for note_id in cache.cached_ids(machine, cfg.store, project):
        if note_id not in found:
            data = cache.read_cached(machine, cfg.store, project, note_id)
            if data is not None:
                found[note_id] = data
    return set(found), {_key(notes.parse(data).body) for data in found.values()}


def apply(machine: str, cfg: Config, planned: list[Planned], *, redact: bool = False,
          timeout: float | None = None) -> list[dict]:
    """Save every item planned `save`; returns one outcome a saved item (`saved` or `pending`)."""
    from agentmem.memory import delivery, pending, save
    from agentmem.search import follow

    outcomes = []
    for p in planned:
        if p.action != "save":
            continue
        if p.data is not None and p.note_id is not None:  # an agentmem note: its own bytes under its own ID
            entry = pending.Entry(id=p.note_id, store=cfg.store, project=p.project,
                                  path=notes.note_path(p.project, p.note_id),
                                  created=notes.parse(p.data).created)
            pending.persist(machine, entry, p.data)
            outcome = delivery.deliver(machine, entry, p.data, timeout=timeout, index=follow.update)
        else:
            try:
                outcome = save.save(machine, cfg, p.project, p.item.body, title=p.item.title, tags=p.item.tags,
                                    sources=[p.item.source], redact=redact, timeout=timeout).outcome
            except (errors.SecretFound, InvalidInput) as exc:
                p.action, p.reason = "refused", exc.one_line()
                continue
        p.note_id = outcome.entry.id
        outcomes.append(outcome.to_json())
        if outcome.status != "saved":
            p.reason = "saved locally, upload not confirmed (pending)"
    return outcomes


def summary(result: dict) -> dict:
    """The JSON of a plan (and what was applied)."""
    items = result["items"]
    counts = {a: sum(1 for p in items if p.action == a) for a in ("save", "present", "refused")}
    return {"format": result["format"], "path": result["path"], "counts": counts,
            "items": [p.to_json() for p in items], "stale": result["stale"],
            "stale_projects": result["stale_projects"]}
