"""A member's two stores: their own (scope "personal") and, with a `[team]`, the team's ("team").

Search, read and save across them, each store through the same library call on a config scoped to it
(`cfg.scoped(scope)`), so each keeps its own freshness, hold-off, catch-up and network budget, and one
that cannot be asked never hides the other's notes: it is reported as what it is (`scopes` in a search's
answer). A machine without a team gets exactly what `memory/recall.py` and `memory/save.py` answer.

INV personal-stays-personal: a note reaches the team store only when saved there (`save --team`, MCP `scope`);
a pending note is searched and read in the scope of the store it is bound for (pending.project_notes
takes the store), so a member's note never shows as the team's, nor the reverse, before its upload either.
A team save the team store refuses as not allowed leaves nothing, here or pending (`save`).
"""

from __future__ import annotations

from agentmem import errors

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from agentmem.config import Config
    from agentmem.errors import Command
    from agentmem.memory.save import Saved

SCOPES = ("personal", "team", "all")  # what `--scope` takes; "all" (the default): every store configured


def asked(cfg: Config, scope: str | None) -> list[str]:
    """The scopes `scope` names on this machine: None or "all": every one configured. A team scope with no
    `[team]` is refused with the way to add one (config.TEAM_HINT)."""
    if scope in (None, "all"):
        return cfg.scopes()
    if scope not in SCOPES:
        raise errors.InvalidInput(errors.NextStep.of(errors.Option("scope"), f" must be one of {', '.join(SCOPES)}"))
    if scope == "team" and cfg.team is None:
        from agentmem.config import TEAM_HINT

        raise errors.NotConfigured("this machine has no team store", hint=TEAM_HINT)
    return [scope]


# -- search ------------------------------------------------------------------------------------------

def search(machine: str, cfg: Config, project: str, query: str, *, scope: str | None = None, limit: int = 10,
           mode: str | None = None, **options: object) -> dict:
    """`recall.search` of each store `scope` names (`asked`), merged into one list of `limit`: best score
    first when ranked, newest first for literal mode and the recent list; a correction keeps the notes it
    corrects right below it. With a team each result carries `scope`, and `scopes` says how current each
    store's answer is (`stale` at the top: any of them, `stale_reason` naming which). A store whose search
    failed is one of them, stale, with its error; only when every store asked fails is the first error raised.
    Without a team: `recall.search`'s answer, unchanged."""
    from agentmem.memory import recall

    wanted = asked(cfg, scope)
    if cfg.team is None:
        return recall.search(machine, cfg, project, query, limit=limit, mode=mode, **options)  # type: ignore[arg-type]
    answers: dict[str, dict] = {}
    failed: dict[str, errors.AgentmemError] = {}
    broke: dict[str, BaseException] = {}  # what is not a store's failure: raised as it would be without a team

    def one(name: str) -> None:
        kept = options if name == wanted[0] else {k: v for k, v in options.items() if k != "progress"}
        try:
            answers[name] = recall.search(machine, cfg.scoped(name), project, query, limit=limit, mode=mode,
                                          **kept)  # type: ignore[arg-type]
        except errors.InvalidInput as exc:  # the same arguments fail for every store
            broke[name] = exc
        except errors.AgentmemError as exc:
            failed[name] = exc
        except BaseException as exc:  # noqa: BLE001 - handed to the calling thread
            broke[name] = exc

    late = _side_by_side(one, wanted, options.get("timeout"), cfg)
    # a worker left behind may still write: only what the others answered is read, from copies
    got = {name: answers[name] for name in wanted if name in answers and name not in late}
    lost = {name: late.get(name) or failed[name] for name in wanted if name not in got and name not in broke}
    for name in wanted:
        if name in broke and name not in late:
            raise broke[name]
    if not got:
        raise lost[wanted[0]]
    labels = {name: cfg.scoped(name).store.label() for name in wanted}
    by_score = bool(query.strip()) and next(iter(got.values()))["mode"] != "literal"
    return _merged(got, lost, labels, limit, by_score)


def _side_by_side(one: Callable[[str], None], names: list[str], timeout: object,
                  cfg: Config) -> dict[str, errors.AgentmemError]:
    """`one(name)` for each name, the first on this thread and the others on their own at the same time, so a
    team store's check waits on the network while the member's own is searched (a search with a team costs
    about the slower store's wait, not the sum). Each is bounded by its own network budget; one that outlives
    it by a second more is reported as not answering (returned: name -> its error), and this search goes on
    without it."""
    if len(names) == 1:
        one(names[0])
        return {}
    import threading
    import time

    workers = [threading.Thread(target=one, args=(name,), name=f"agentmem-search-{name}", daemon=True)
               for name in names[1:]]
    for worker in workers:
        worker.start()
    one(names[0])
    from agentmem.config import timeout_or_default

    limit = (timeout if isinstance(timeout, (int, float)) else timeout_or_default(cfg)[0]) + 1.0
    deadline = time.monotonic() + limit
    late: dict[str, errors.AgentmemError] = {}
    for name, worker in zip(names[1:], workers):
        worker.join(max(0.0, deadline - time.monotonic()))
        if worker.is_alive():
            late[name] = errors.NoAnswer(f"the search of the {name} store did not end within {limit:g} s")
    return late


def _merged(answers: dict[str, dict], failed: dict[str, errors.AgentmemError], labels: dict[str, str], limit: int,
            by_score: bool) -> dict:
    first = next(iter(answers.values()))
    for name, answer in answers.items():
        for r in answer["results"]:
            r["scope"] = name
    seen: set[str] = set()  # a damaged pending note (its store unknown) is in each store's answer: listed once
    lists = []
    for answer in answers.values():
        lists.append([r for r in answer["results"] if r["id"] not in seen])
        seen.update(r["id"] for r in answer["results"])
    results = _interleaved(lists, limit, by_score)
    per_scope = [_scope_status(name, labels[name], answers.get(name), failed.get(name)) for name in labels]
    stale = [s for s in per_scope if s["stale"]]
    checked = [s["checked_at"] for s in per_scope]
    scanned = [(name, a["scan_reason"]) for name, a in answers.items() if a["scan"]]
    out = {
        "project": first["project"], "query": first["query"], "mode": first["mode"], "results": results,
        "pending_uploads": first["pending_uploads"],
        "scan": bool(scanned), "scan_reason": "; ".join(f"{name}: {why}" for name, why in scanned) or None,
        "stale": bool(stale),
        "stale_reason": "; ".join(f"the {s['scope']} store {s['store']}: {s['stale_reason']}" for s in stale) or None,
        "stale_error": stale[0]["stale_error"] if stale else None,
        "refreshed": any(s["refreshed"] for s in per_scope),
        "checked_at": None if None in checked else min(checked),  # the least current store's
        "unreadable": [u | {"scope": s["scope"]} for s in per_scope for u in s["unreadable"]],
        "not_cached": "; ".join(f"the {s['scope']} store: {s['not_cached']}" for s in per_scope
                                if s["not_cached"]) or None,
    }
    warnings = [w for a in answers.values() for w in a.get("warnings", ())]
    if warnings:
        out["warnings"] = warnings
    catching = [a["catching_up"] for a in answers.values() if a.get("catching_up")]
    if catching:
        out["catching_up"] = {"have": sum(c["have"] for c in catching), "total": sum(c["total"] for c in catching)}
    if any("more" in a for a in answers.values()):
        total = sum(a.get("more", 0) + len(a["results"]) for a in answers.values())
        out["more"] = max(0, total - len(results))
    embedding = [a["embedding"] for a in answers.values() if "embedding" in a]
    if embedding:
        out["embedding"] = {"done": sum(e["done"] for e in embedding), "total": sum(e["total"] for e in embedding)}
    if "withheld" in first:
        out["withheld"] = first["withheld"]
    out["scopes"] = per_scope
    return out


def _scope_status(name: str, label: str, answer: dict | None, failure: errors.AgentmemError | None) -> dict:
    """One store's part of a search: how current its answer is, or what stopped it."""
    out = {"scope": name, "store": label}
    if answer is not None:
        keys = ("stale", "stale_reason", "stale_error", "refreshed", "checked_at", "unreadable", "not_cached",
                "catching_up")
        return out | {k: answer[k] for k in keys if k in answer} | {"results": len(answer["results"])}
    assert failure is not None
    return out | {"stale": True, "stale_reason": failure.one_line(), "stale_error": failure.kind, "refreshed": False,
                  "checked_at": None, "unreadable": [], "not_cached": None, "results": 0}


def _interleaved(lists: list[list[dict]], limit: int, by_score: bool) -> list[dict]:
    """The stores' result lists as one of at most `limit`: each list's order kept, a note listed with the
    corrections below it as one group, groups taken best first across the lists (ties: the earlier list)."""
    queues = [_groups(results, by_score) for results in lists]
    out: list[dict] = []
    while len(out) < limit and any(queues):
        best = max((q for q in queues if q), key=lambda q: q[0][0])  # max keeps the first of equals
        out.extend(best.pop(0)[1])
    return out[:limit]


def _groups(results: list[dict], by_score: bool) -> list[tuple[Any, list[dict]]]:
    """`results` cut into (key, group): a corrected note joins the group of the correction listed above it
    (search/corrections.py puts it there), the group's key being its best score, or its newest date."""
    groups: list[tuple[Any, list[dict]]] = []
    for r in results:
        fixers = r.get("corrected_by") or ()
        if groups and fixers and fixers[0] in {g["id"] for g in groups[-1][1]}:
            groups[-1][1].append(r)
        else:
            groups.append((None, [r]))
    keyed = []
    for _, group in groups:
        if by_score:
            scores = [g["score"] for g in group if g.get("score") is not None]
            key: Any = max(scores) if scores else float("-inf")
        else:
            key = max(g["created"] for g in group)
        keyed.append((key, group))
    return keyed


# -- read --------------------------------------------------------------------------------------------

def read(machine: str, cfg: Config, project: str, note_id: str, *, scope: str | None = None, fresh: bool = False,
         timeout: float | None = None, elsewhere: Callable[[str], Command] | None = None) -> tuple[dict, bytes]:
    """`recall.read` in the member's own store first, then the team's (asked only when the first lacks the
    note, or could not be asked); `scope` limits it to one. With a team the answer carries `scope`. When no
    store has it: a note found in another project is named; else a store that could not be asked is what
    failed (the note may be there); else the first store's answer. Without a team: `recall.read`'s."""
    from agentmem.memory import recall

    wanted = asked(cfg, scope)
    if cfg.team is None:
        return recall.read(machine, cfg, project, note_id, fresh=fresh, timeout=timeout, elsewhere=elsewhere)
    failures: list[errors.AgentmemError] = []
    for name in wanted:
        try:
            out, data = recall.read(machine, cfg.scoped(name), project, note_id, fresh=fresh, timeout=timeout,
                                    elsewhere=elsewhere)
        except errors.InvalidInput:
            raise  # a malformed ID is malformed in every store
        except errors.AgentmemError as exc:
            failures.append(exc)
            continue
        out["scope"] = name
        return out, data
    located = [e for e in failures if isinstance(e, errors.NotFound) and e.located]
    unasked = [e for e in failures if not isinstance(e, errors.NotFound)]
    if not located and not unasked:
        other = other_store(machine, cfg, project, note_id, scope)
        if other is not None:
            from agentmem.errors import Command, NextStep

            raise not_in_scope(note_id, project, wanted[0], other, NextStep(
                "read it with `{}`", Command("read", note_id, "--scope", other, "--project", project)))
    raise (located or unasked or failures)[0]


def other_store(machine: str, cfg: Config, project: str, note_id: str, scope: str | None) -> str | None:
    """The member's other store ("personal" or "team") when `scope` names one and this machine holds
    `note_id` in the other (cached, or pending for it); else None. Nothing is asked of either store."""
    from agentmem.note import ids
    from agentmem.replica import cache
    from agentmem.uploads import pending

    if cfg.team is None or scope not in ("personal", "team") or not ids.ID.match(note_id):
        return None
    other = "team" if scope == "personal" else "personal"
    store = cfg.scoped("team").store if other == "team" else cfg.store
    if cache.read_cached(machine, store, project, note_id) is not None:
        return other
    return other if note_id in pending.project_notes(machine, store, project) else None


def not_in_scope(note_id: str, project: str, scope: str, other: str, hint: errors.NextStep) -> errors.NotFound:
    """A note asked for in one of the member's stores that this machine holds in the other: said as that,
    not as a note of another project (memory/locate.py)."""
    place = "the team's store" if scope == "team" else "your own store"
    what = "a team note" if other == "team" else "one of your own notes"
    return errors.NotFound(f"note {note_id} is not in {place} of project {project}: it is {what}", hint=hint)


# -- save --------------------------------------------------------------------------------------------

def save(machine: str, cfg: Config, project: str, body: str, *, scope: str = "personal",
         **options: object) -> Saved:
    """`save.save` to the member's own store (`scope` "personal", the default) or the team's ("team").

    A team store that refuses the upload as not allowed (a member with the read role) is no pending note:
    nothing is left anywhere, and the refusal is the one every team write gives (memory/team_writes.py).
    Any other failure leaves the note pending, bound for the team store, as every save does (`save --retry`,
    the Stop hook deliver it there)."""
    from agentmem.memory import save as saving
    from agentmem.memory import team_writes

    if scope == "personal":
        return saving.save(machine, cfg, project, body, **options)  # type: ignore[arg-type]
    if scope != "team":
        raise errors.InvalidInput(errors.NextStep.of(errors.Option("scope"), " must be personal or team"))
    asked(cfg, scope)  # no team store: refused with the way to add one
    if options.get("propose"):  # a proposal is the member's own note; a team note never is one
        raise errors.InvalidInput(errors.NextStep.of(
            errors.Option("propose"), " marks one of your own notes for the team, and ", errors.Option("team"),
            " saves the note as the team's already: give one of them; nothing was written"))
    team = cfg.scoped("team")
    saved = saving.save(machine, team, project, body, **options)  # type: ignore[arg-type]
    team_writes.settle(machine, team, saved.outcome, "saved")
    return saved


def saved_scope(cfg: Config, scope: str) -> dict:
    """What a save's answer says of its store with a team on this machine: {"scope"}; without: nothing."""
    return {"scope": scope} if cfg.team is not None else {}

