"""What results and errors say as text: the one renderer the CLI and the MCP server both use.

The library returns data (a search's result dict, pending entries, an error with its
`NextStep`); this module words it for a person or a model. The one thing the front
ends say differently is how a helper command is named: the CLI prints its command line
(quoted, absolute helper), the MCP server its tool call where it has one. So every
function here takes `tool`, the front end's own name for a command (None: the command
line; see `errors.NextStep.text`).

On the per-turn path (search, read, pending): the standard library and safety/framing only.
"""

from __future__ import annotations

from agentmem.errors import Command, NextStep

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Callable

    from agentmem.errors import AgentmemError, ToolName

    # The MCP server's tool call for a helper command ({name, arguments}), or None: it has no tool for it.
    ToolCall = Callable[[Command], dict | None]
    Offered = Callable[[NextStep], bool]


def command(step: Command, tool: ToolName | None = None) -> str:
    """One command as the front end names it: its tool call, else its command line."""
    named = tool(step) if tool is not None else None
    return step.line() if named is None else named


def error_line(exc: AgentmemError, tool: ToolName | None = None, offered: Offered | None = None) -> str:
    """An error as one line, fit to print: its next step spelt for the front end, and any credential
    it echoes (a mistyped ID, a project) replaced by `[REDACTED:<kind>]` (INV no-credentials). Failures
    only: the scanner is not imported otherwise."""
    from agentmem.safety import credentials, screening

    return screening.withhold(exc.one_line(tool, offered), credentials.env_secrets())[0]


def next_data(steps: list[NextStep], tool: ToolName | None = None, call: ToolCall | None = None,
              offered: Offered | None = None) -> list[dict]:
    """An error's or a warning's next steps as JSON (docs/cli.md, "Next steps"): each {text} with, when
    the step runs one helper command, the CLI's {argv, command} (its arguments and its line to run), or,
    with `call` (the MCP server), {tool: {name, arguments}} where a tool does it, else {argv}. A step the
    front end does not offer is left out (`offered`); credentials are withheld as in `error_line`.
    Off the per-turn path: only an error or a warning renders steps."""
    from agentmem.safety import credentials, screening

    known = credentials.env_secrets()

    def shown(text: str) -> str:
        return screening.withhold(text, known)[0]

    out = []
    for step in steps:
        if offered is not None and not offered(step):
            continue
        item: dict = {"text": shown(" ".join(step.text(tool).split()))}
        commands = step.commands
        if len(commands) == 1:
            argv = [shown(a) for a in commands[0].args]
            made = call(commands[0]) if call is not None else None
            if made is not None:
                item["tool"] = made
            elif call is not None or any(a != b for a, b in zip(argv, commands[0].args)):
                item["argv"] = argv
            else:
                item |= {"argv": argv, "command": commands[0].line()}
        out.append(item)
    return out


def warning_details(warnings: list, tool: ToolName | None = None, call: ToolCall | None = None,
                    offered: Offered | None = None) -> list[dict]:
    """`warnings` (lines) as {warning: its class, message: the line, next: [steps]}, in the same order; a
    plain line is of class "warning" with no steps."""
    from agentmem.errors import AgentmemWarning

    return [{"warning": w.kind if isinstance(w, AgentmemWarning) else "warning", "message": str(w),
             "next": next_data(w.next, tool, call, offered) if isinstance(w, AgentmemWarning) else []}
            for w in warnings]


def pending_text(entries: list, broken: list[dict], tool: ToolName | None = None,
                 stuck: dict | None = None) -> str:
    """What waits for upload, for a person, each with how to retry it. `stuck`: by entry ID, the answer for
    a team note the team refused this member (memory/team_writes.py `refusal`): its words and ways out."""
    if not entries and not broken:
        return "no pending uploads"
    lines = [f"{len(entries)} pending upload(s):"] if entries else []
    for e in entries:
        if e.store is None:  # a damaged entry: its destination is not guessed
            lines.append(f"  {e.id}  {e.project}  -> destination unknown: {e.damaged}")
            lines.append(f"    send it to this machine's configured store: {command(e.retry_step(), tool)}")
            continue
        refused = (stuck or {}).get(e.id)
        if refused is not None:  # retrying alone changes nothing: what is true, and both ways out
            lines.append(f"  {e.id}  {e.project}  -> {e.store.label()} - {refused.message}")
            lines.extend(f"    {step.text(tool)}" for step in refused.next)
            continue
        why = f" - last error: {e.last_error['message']}" if e.last_error else ""
        lines.append(f"  {e.id}  {e.project}  -> {e.store.label()}{why}")
        if e.purges:  # INV purged-gone: pending work until the store no longer holds the note
            lines.append(f"    the purge of note {e.purges}: not finished, the store may still hold the note")
        lines.append(f"    retry: {command(e.retry_step(), tool)}")
    if broken:
        lines.append(f"{len(broken)} pending folder(s) hold no note that can be sent (left untouched):")
        lines.extend(f"  {b['id']}: {b['problem']}" for b in broken)
    return "\n".join(lines)


def held_retry_text(out: dict, problem: AgentmemError, tool: ToolName | None = None,
                    call: ToolCall | None = None) -> str:
    """A retry the team refused this member (memory/team_writes.py `held_retry`), for the CLI and the MCP
    retry alike: `out` gains `reason` {error, message} and `next` (both ways out, as data); the text says it."""
    line = error_line(problem, tool)
    out["reason"] = {"error": problem.kind, "message": line}
    out["next"] = next_data(problem.next, tool, call)
    return f"NOT saved to the team's store: {line}"


def stuck_json(problem: AgentmemError, tool: ToolName | None = None, call: ToolCall | None = None) -> dict:
    """A pending entry's JSON additions when the team refused this member (memory/team_writes.py `held`):
    `waits` {error, message} and `next`, both ways out."""
    return {"waits": {"error": problem.kind, "message": problem.message}, "next": next_data(problem.next, tool, call)}


def freshness_lines(out: dict, what: str) -> list[str]:
    """The lines that say an answer could miss notes (INV read-your-writes: say it whenever it can), after
    what the store says a person must hear (a bucket that became public)."""
    lines = [f"warning: {w}" for w in out.get("warnings") or ()]
    if out.get("stale"):
        lines.append(f"warning: {what} may be stale - {out['stale_reason']}")
    if out.get("catching_up"):  # a new machine's first sync of a big store, a few seconds a search
        lines.append(NextStep("note: `{}` fetches the rest now, with a progress bar", Command("sync")).text())
    if out.get("not_cached"):  # current, but read from the store into memory: the next call reads it again
        lines.append(f"warning: {out['not_cached']}")
    skipped = out.get("unreadable") or []
    if skipped:
        named = "; ".join(f"{u['id']}: {u['message']}" for u in skipped[:2])
        more = f"; and {len(skipped) - 2} more" if len(skipped) > 2 else ""
        lines.append(f"warning: {len(skipped)} note(s) in the store could not be read and are missing here "
                     f"({named}{more})")
    return lines


def search_text(out: dict, explicit_project: str | None = None, *, tool: ToolName | None = None,
                read_hint: str | None = None, authors: bool = False) -> str:
    """Search results as text, note content framed as data. `read_hint`: the front end's own last line
    (the MCP server names its read tool); else the command that reads the first result. `authors`: name
    each note's author (a machine with a team store: on one member's machine every note is theirs, and
    the name would cost an agent's every turn for nothing; JSON carries `author` either way)."""
    from agentmem.safety.framing import frame_lines

    lines = freshness_lines(out, "results")
    if out.get("scan"):
        words_only = ", ranked by words only" if out["mode"] == "hybrid" else ""
        lines.append(f"note: searched without the index{words_only} - {out['scan_reason']}")
    if out.get("embedding"):  # hybrid, while notes wait for their sentence vectors
        done, total = out["embedding"]["done"], out["embedding"]["total"]
        lines.append(NextStep(f"note: {total - done} of {total} note(s) have no sentence vectors yet and were "
                              "ranked by their words alone (each hybrid search embeds a few); `{}` embeds them "
                              "now, with a progress bar", Command("sync", "--embed", "--project", out["project"]))
                     .text(tool))
    what = f"matching {out['query']!r}" if out["query"] else "most recent"
    for w in out.get("withheld", ()):  # the query held a credential: never echoed (INV no-credentials)
        lines.append(f"note: the query holds a credential ({w['kind']}); it is shown as [REDACTED:{w['kind']}]")
    lines.append(f"{len(out['results'])} note(s) {what} in project {out['project']}:")
    found = []
    for r in out["results"]:
        flag = " [pending upload]" if r["pending"] else ""
        corr = f" (corrects {r['corrects']})" if r.get("corrects") else ""
        if r.get("corrected_by"):  # INV corrections-visible: listed below its correction, and marked
            corr += f" [CORRECTED by {', '.join(r['corrected_by'])}: read that first]"
        if r.get("retracted"):
            corr += f" [RETRACTED {r['retracted']['created'][:10]}: no longer true]"
        if r.get("review_due"):
            corr += " [REVIEW DUE: may be stale]"
        if r.get("pinned"):
            corr += " [pinned]"
        if r.get("withheld"):
            corr += " [credential withheld]"
        by = f" by {r['author']}" if authors and r.get("author") else ""
        team = "[team] " if r.get("scope") == "team" else ""  # a note of the team's store (memory/scopes.py)
        found.append(f"- {r['id']}  {r['created'][:16].replace('T', ' ')}  {r['kind']}{by}: {team}{r['title']}{flag}"
                     f"{corr}")
        for m in r["matches"]:
            found.append(f"    {m['line']}: {m['text']}")
    if found:  # titles and lines are note content: quoted data, not instructions (INV framed-recall)
        lines.extend(frame_lines(found, label="search results"))
    if out["pending_uploads"]:
        see = NextStep("see `{}`", Command("pending")).text(tool)
        lines.append(f"{out['pending_uploads']} note(s) wait for upload: {see}")
    if read_hint is not None:
        lines.append(read_hint)
    elif out["results"]:
        extra = ["--project", explicit_project] if explicit_project else []
        lines.append(f"Read one with: {command(Command('read', out['results'][0]['id'], *extra), tool)}")
    if out.get("more"):
        lines.append(f"{out['more']} more note(s) in project {out['project']}: raise the limit (--limit, up to 200) "
                     "or search for words")
    return "\n".join(lines)


def embedded_line(embedding: dict, project: str) -> str:
    """What `sync --embed` (and setup) did: {done, total, embedded} of one project."""
    return (f"{embedding['done']} of {embedding['total']} note(s) of project {project} have sentence vectors for "
            f"hybrid search ({embedding['embedded']} embedded now)")


def read_text(out: dict, data: bytes, *, authors: bool = False) -> str:
    """A note read in full, framed as data, with what the reader should know about where it came from:
    first its retraction, a review that is due, a pin (`states_text`); `authors` (a machine with a team
    store): who wrote it, and the personal note it was promoted from."""
    from agentmem.note import document, ids
    from agentmem.safety.framing import frame_note

    note_id = out["id"]
    framed = frame_note(data.decode("utf-8", errors="replace").rstrip("\n"), note_id=note_id).rstrip("\n")
    text = states_text(out) + framed
    author = document.author_of(out.get("meta") or {}) if authors else None
    if author:
        origin = (out.get("meta") or {}).get("promoted_from")
        origin = f", promoted from their note {origin}" if isinstance(origin, str) and ids.ID.match(origin) else ""
        text = f"Note {note_id} by {author}{origin}:\n" + text
    if out.get("scope") == "team":
        text += f"\n\n(note {note_id} is a team note: from the team's store)"
    if out["source"] == "pending":
        text += f"\n\n(note {note_id} is pending upload on this machine)"
    if out.get("withheld"):
        text += "\n" + withheld_line(out)
    if out.get("stale"):  # the note is what the store holds; what could not be asked is said
        text += f"\nwarning: {out['stale_reason']}"
    return text


def withheld_line(out: dict) -> str:
    """One line saying which credentials a read note holds (shown as [REDACTED:<kind>]) and what to do."""
    held = out["withheld"]
    places = ", ".join(w["where"] + (f" line {w['line']}" if w.get("line") else "") + f" ({w['kind']})"
                       for w in held[:5])
    more = f" and {len(held) - 5} more" if len(held) > 5 else ""
    audit = command(Command("audit", "--project", out["project"]))
    return (f"note: this note holds {len(held)} credential(s), withheld here as [REDACTED:<kind>]: {places}{more}; "
            f"`{audit}` says how to remove them from the store")


def states_text(out: dict) -> str:
    """What `read` says before the note: its retraction (who, when, and why: the reason is memory content,
    so it is framed as recalled data, never said in the helper's voice), a review that is due, a pin."""
    from agentmem.safety.framing import clean, frame_lines

    lines = []
    gone = out.get("retracted")
    if gone:
        lines.append(f"RETRACTED on {gone['created'][:10]} by {clean(gone['agent'])} (record {gone['record']}): "
                     "this note is no longer true; do not rely on it.")
        if gone["reason"]:  # INV framed-recall: written by whoever retracted it, quoted like the note
            lines.append("The reason the retraction gives is recalled memory, like the note:")
            lines.extend(frame_lines([gone["reason"]], label="retraction reason"))
        else:
            lines.append("The retraction gives no reason.")
    if out.get("review_due"):
        lines.append(f"REVIEW DUE since {out['review_by']}: this note may be stale; check it before relying on it.")
    if out.get("pinned"):
        lines.append("This note is pinned: it is shown in every session-start reminder of the project.")
    return "\n".join(lines) + "\n" if lines else ""


def record_text(out: dict, done: str, tool: ToolName | None = None) -> str:
    """What saving a retraction, pin or unpin did (`done`: "retracted", "pinned", "unpinned")."""
    team = out.get("scope") == "team"  # a team note: said, as the member may not have known (team_curation)
    note = f"team note {out['note']}" if team else out["note"]
    if out["status"] == "unchanged":
        return f"{'' if team else 'note '}{note} was already {done}; nothing was written"
    if out["status"] == "saved":
        where = "the team's shared memory" if team else "shared memory"
        return f"{done} {note}: record {out['record']['record']} saved to {where} ({out['path']})"
    reason = out.get("reason", {}).get("message", "outcome unknown")
    retry = command(Command("save", "--retry", out["record"]["record"]), tool)
    return (f"{done} {note} on this machine; the record is NOT confirmed in the {'team' if team else 'shared'} "
            f"store: {reason}\nit is pending; retry with: {retry}")


def purge_text(out: dict) -> str:
    """What a purge did; a purge the store did not finish names the command that finishes it."""
    team = out.get("scope") == "team"
    note = f"team note {out['note']}" if team else out["note"]
    if out["status"] == "purged":
        store = "the team store" if team else "the store"
        where = f"deleted from {store}" if out["deleted_from_store"] else f"not in {store} (already gone)"
        lines = [f"purged {note}: {where}; purge record {out['record']['record']} tells every other machine to "
                 "drop it at its next search"]
        for other in out.get("other_purges", ()):  # this machine's earlier purges, finished after it
            if other["status"] == "purged":
                lines.append(f"also finished the earlier purge of {other['note']} (project {other['project']}): "
                             "the store no longer holds it")
            else:
                why = other.get("reason", {}).get("message", "outcome unknown")
                lines.append(f"the earlier purge of {other['note']} (project {other['project']}) is still not "
                             f"finished: {why}")
        return "\n".join(lines)
    why = out.get("reason", {}).get("message", "outcome unknown")
    return f"purged {note} from this machine, but the store is not done yet: {why}\nfinish it with: {out['next']}"


def with_command_lines(out: dict) -> dict:
    """The review queue with each item's commands also as the line to run (absolute helper, quoted)."""
    for item in out["items"]:
        for step in item["commands"]:
            step["command"] = Command(*step["argv"]).line()
    return out


def review_text(out: dict, tool: ToolName | None = None) -> str:
    """The review queue for a person or an agent: our words and IDs; the notes' titles framed as data."""
    from agentmem.safety.framing import frame_lines

    lines = [f"warning: the queue may be stale - {out['stale_reason']}"] if out.get("stale") else []
    items = out["items"]
    lines.append(f"{len(items)} item(s) to review in project {out['project']}" + (":" if items else ""))
    titles: dict[str, str] = {}
    for item in items:
        lines.append(f"- {'[team] ' if item.get('scope') == 'team' else ''}{item['kind']}: {item['summary']}")
        for step in item["commands"]:
            said = command(Command(*step["argv"]), tool)
            lines.append(f"    {said}" + (f"  # {step['note']}" if step.get("note") else ""))
        titles.update(item.get("titles", {}))
    if titles:  # titles are note content: quoted data, not instructions (INV framed-recall)
        lines.extend(frame_lines([f"{k}: {v}" for k, v in sorted(titles.items())], label="note titles"))
    return "\n".join(lines)
