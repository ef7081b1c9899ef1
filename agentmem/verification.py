"""The setup verification note: save one note, read it back from the store, find it by search.

The note's ID is stable for a (store, project, machine) triple, so a rerun of
setup finds the note it saved before instead of adding another one. A note
whose upload did not go through stays pending and is retried with its
original bytes (INV same-bytes-retry).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from agentmem import errors
from agentmem.store.base import StoreDescription

TITLE = "Memory setup verification"


def setup_note_id(home: Path, store: StoreDescription, project: str) -> str:
    """`setup-verification-<12 hex>` from the store, project and machine folder."""
    key = f"{store.kind}:{store.location}|{project}|{Path(home).expanduser().resolve()}"
    return "setup-verification-" + hashlib.sha256(key.encode()).hexdigest()[:12]


@dataclass
class Verification:
    id: str
    path: str
    upload: str  # "saved" | "already-saved" | "pending"
    read_back: bool
    found_by_search: bool
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.upload != "pending" and self.read_back and self.found_by_search

    def to_json(self) -> dict:
        return {
            "status": "ok" if self.ok else ("pending" if self.upload == "pending" else "failed"),
            "id": self.id,
            "path": self.path,
            "upload": self.upload,
            "read_back": self.read_back,
            "found_by_search": self.found_by_search,
            "problem": self.problem,
        }


def verify(home: Path, store_desc: StoreDescription, project: str, agent: str, *, timeout: float | None = None) -> Verification:
    """Save (once), read back bypassing the cache, and search for the setup note."""
    from agentmem import cache, notes, pending, search
    from agentmem.store import open_store

    note_id = setup_note_id(home, store_desc, project)
    path = notes.note_path(project, note_id)
    store = open_store(store_desc, timeout=timeout)

    def left() -> float | None:  # the upload shares this invocation's one network budget
        budget = getattr(store, "budget", None)
        return timeout if budget is None else max(0.1, budget.remaining())

    upload = "already-saved"
    try:
        entry, data = pending.load(home, note_id)
        outcome = pending.deliver(home, entry, data, timeout=left())
        upload = "saved" if outcome.status == "saved" else "pending"
    except errors.NotFound:
        if store.info(path) is None:
            note = notes.build(
                body=f"# {TITLE}\n\nSaved by agentmem setup to check that this machine can save, "
                "read back and search shared memory.\n",
                title=TITLE,
                kind="note",
                project=project,
                agent=agent,
                tags=["agentmem-setup"],
                note_id=note_id,
            )
            data = note.render()
            entry = pending.Entry(id=note_id, store=store_desc, project=project, path=path, created=note.created)
            pending.persist(home, entry, data)  # INV nothing-lost
            outcome = pending.deliver(home, entry, data, timeout=left())
            upload = "saved" if outcome.status == "saved" else "pending"
    if upload == "pending":
        return Verification(note_id, path, upload, False, False, "the upload is pending; retry with "
                            f"`agentmem save --retry {note_id}`")

    parsed = notes.parse(store.get(path))  # straight from the store, not the cache; failures raise as what they are
    read_back = parsed.title == TITLE

    status = cache.refresh(home, store_desc, project, store=store)
    found = any(r.id == note_id for r in search.literal(search.candidates(home, store_desc, project), TITLE, 200))
    problem = None if found else (status.reason or "search did not find the setup note")
    return Verification(note_id, path, upload, read_back, found, problem)
