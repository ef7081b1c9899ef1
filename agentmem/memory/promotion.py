"""Promotion (issue X, item 4): a personal note copied into the team store, as a curator decides.

INV personal-stays-personal: a personal note reaches the team store only by `promote` (here) or
`save --team`; nothing here runs on its own, and the personal note stays where it was.

A promoted note is a new team note with the original's title, body, kind, tags and sources; it names
the note it came from (`promoted_from`) and the original's author (the promoter's when it has none),
while `agent` names the promoter's tool. It is saved through the one save path, so it is screened,
pending until the team store confirms it, and retried like any note. Promoting the same note again
names the team note that already came from it (found by `promoted_from` in the team store's cache and
this machine's pending notes) and writes nothing; one still pending here is said to be.

Proposals: a member marks a personal note for the team with `save --propose` (frontmatter
`propose: "team"`); `review` lists each such note no team note was promoted from yet
(`proposed-for-team`), with the command that promotes it.
"""

from __future__ import annotations

from agentmem import errors
from agentmem.note import document
from agentmem.replica import cache
from agentmem.uploads import pending

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from agentmem.config import Config
    from agentmem.memory.save import Saved


class Promoted:
    """What one promote did: `saved` (the team note's save), or the team note an earlier promote made
    (`waiting`: that one is still pending on this machine, not confirmed in the team store)."""

    __slots__ = ("note", "project", "team_note", "saved", "waiting")

    def __init__(self, note: str, project: str, team_note: str, saved: Saved | None = None, waiting: bool = False):
        self.note, self.project, self.team_note, self.saved, self.waiting = note, project, team_note, saved, waiting

    @property
    def status(self) -> str:
        if self.saved is None:
            return "already-promoted"
        return "promoted" if self.saved.outcome.status == "saved" else "pending"

    def to_json(self) -> dict:
        out: dict = {"status": self.status, "note": self.note, "project": self.project, "team_note": self.team_note}
        if self.saved is not None:
            out["save"] = self.saved.outcome.to_json()
        elif self.waiting:
            out["pending"] = True
        return out


def team_config(cfg: Config, doing: str) -> Config:
    """The team-scoped config, or NotConfigured (with the way to add a team) on a machine without one."""
    from agentmem.config import TEAM_HINT

    if cfg.scope != "personal":
        raise errors.InvalidInput(f"{doing} works from the member's own store, not from the team's")
    if cfg.team is None:
        raise errors.NotConfigured(f"this machine has no team store, so there is nothing to {doing} into; "
                                   "nothing was written", hint=TEAM_HINT)
    return cfg.scoped("team")


def promoted_from(machine: str, team: Config, project: str) -> dict[str, str]:
    """{personal note ID: the team note promoted from it} of what this machine knows of the team store
    (its cache, and its pending notes bound there); the oldest team note wins."""
    from agentmem.memory.heads import notes_of
    from agentmem.replica.states import project_states

    store = team.store
    states = project_states(machine, store, project)
    known = notes_of(cache.project_dir(machine, store, project), pending.project_notes(machine, store, project),
                          set(states.purged))
    out: dict[str, str] = {}
    for team_id, note in known.items():  # sorted by ID: oldest first
        origin = note.meta.get("promoted_from")
        if isinstance(origin, str) and team_id not in states.retracted:
            out.setdefault(origin, team_id)
    return out


def _refresh(machine: str, team: Config, project: str, timeout: float | None) -> None:
    """Bring the team cache up to date when the team store answers; else what is cached is what is known."""
    from agentmem.search import follow

    try:
        cache.ensure_fresh(machine, team.store, project, max_age=team.cache_max_age, timeout=timeout,
                           index=follow.update)
    except errors.AgentmemError:
        pass  # the save says what is wrong with the team store, if anything


def _is_team_note(machine: str, team: Config, project: str, note_id: str) -> bool:
    return (cache.read_cached(machine, team.store, project, note_id) is not None
            or note_id in pending.project_notes(machine, team.store, project))


def promote(machine: str, cfg: Config, project: str, note_id: str, *, timeout: float | None = None) -> Promoted:
    """Copy personal note `note_id` of `project` into the team store (see the module docstring)."""
    from agentmem.memory import recall, save, team_writes
    from agentmem.store.timeout import Deadline

    document.check_id(note_id)
    team = team_config(cfg, "promote")
    deadline = Deadline(timeout)
    _refresh(machine, team, project, deadline.left())
    if _is_team_note(machine, team, project, note_id):
        raise errors.InvalidInput(f"note {note_id} is already the team's (it is in the team store); only a "
                                  "personal note is promoted; nothing was written")
    already = promoted_from(machine, team, project).get(note_id)
    if already is not None:  # said pending while its upload is not confirmed (the first promote's was not)
        return Promoted(note_id, project, already,
                        waiting=already in pending.project_notes(machine, team.store, project))
    out, _ = recall.read(machine, cfg, project, note_id, timeout=deadline.left(),
                         elsewhere=lambda other: errors.Command("promote", note_id, "--project", other))
    gone = out.get("retracted")
    if gone:
        raise errors.InvalidInput(
            f"note {note_id} was retracted on {str(gone.get('created', ''))[:10]}: it is no longer true, so it is "
            "not promoted; nothing was written",
            hint=errors.NextStep("save what holds now with {}, then promote that note",
                                 errors.Command("save", "--project", project, "--corrects", note_id,
                                                "--text", "MARKDOWN")))
    if out.get("withheld"):
        raise errors.InvalidInput(
            f"note {note_id} holds a credential (withheld when read), so it is not promoted; nothing was written",
            hint=errors.NextStep("remove it from your store first: {}", errors.Command("audit", "--project", project)))
    meta = out["meta"]
    saved = save.save(machine, team, project, out["body"], title=document.Parsed(meta, "").title or None,
                      kind=document.Parsed(meta, "").kind, tags=_strings(meta.get("tags")),
                      sources=_strings(meta.get("sources")), author=document.author_of(meta),
                      promoted_from=note_id, timeout=deadline.left())
    team_writes.settle(machine, team, saved.outcome, "promoted")  # a reader: one line, nothing kept
    return Promoted(note_id, project, saved.outcome.entry.id, saved)


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def proposed(machine: str, cfg: Config, project: str, known: dict, hidden: set[str], *,
             timeout: float | None = None) -> list[dict]:
    """The review queue's `proposed-for-team` items: personal notes marked for the team (`known`: the
    queue's notes, memory/review.py), neither retracted nor purged (`hidden`), not promoted yet."""
    marked = sorted(i for i, n in known.items() if n.meta.get("propose") == document.PROPOSE_TEAM and i not in hidden)
    if not marked:
        return []  # nothing proposed: the team store is not asked
    team = cfg.scoped("team")
    _refresh(machine, team, project, timeout)
    done = promoted_from(machine, team, project)
    out = []
    for note_id in marked:
        if note_id in done:
            continue
        title = known[note_id].meta.get("title")
        out.append({
            "kind": "proposed-for-team", "notes": [note_id],
            "titles": {note_id: title} if isinstance(title, str) else {},
            "summary": f"{note_id} is proposed for the team and not promoted yet",
            "commands": [{"argv": ["promote", note_id, "--project", project],
                          "note": "a writer of the team store copies it there (yours stays)"}],
        })
    return out
