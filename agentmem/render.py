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
    from agentmem.errors import AgentmemError, ToolName


def command(step: Command, tool: ToolName | None = None) -> str:
    """One command as the front end names it: its tool call, else its command line."""
    named = tool(step) if tool is not None else None
    return step.line() if named is None else named


def error_line(exc: AgentmemError, tool: ToolName | None = None) -> str:
    """An error as one line, fit to print: its next step spelt for the front end, and any credential
    it echoes (a mistyped ID, a project) replaced by `[REDACTED:<kind>]` (INV no-credentials). Failures
    only: the scanner is not imported otherwise."""
    from agentmem.safety import credentials, screening

    return screening.withhold(exc.one_line(tool), credentials.env_secrets())[0]


def pending_text(entries: list, broken: list[dict], tool: ToolName | None = None) -> str:
    """What waits for upload, for a person, each with how to retry it."""
    if not entries and not broken:
        return "no pending uploads"
    lines = [f"{len(entries)} pending upload(s):"] if entries else []
    for e in entries:
        if e.store is None:  # a damaged entry: its destination is not guessed
            lines.append(f"  {e.id}  {e.project}  -> destination unknown: {e.damaged}")
            lines.append(f"    send it to this machine's configured store: {command(e.retry_step(), tool)}")
            continue
        why = f" - last error: {e.last_error['message']}" if e.last_error else ""
        lines.append(f"  {e.id}  {e.project}  -> {e.store.label()}{why}")
        lines.append(f"    retry: {command(e.retry_step(), tool)}")
    if broken:
        lines.append(f"{len(broken)} pending folder(s) hold no note that can be sent (left untouched):")
        lines.extend(f"  {b['id']}: {b['problem']}" for b in broken)
    return "\n".join(lines)


def freshness_lines(out: dict, what: str) -> list[str]:
    """The lines that say an answer could miss notes (INV read-your-writes: say it whenever it can), after
    what the store says a person must hear (a bucket that became public)."""
    lines = [f"warning: {w}" for w in out.get("warnings") or ()]
    if out.get("stale"):
        lines.append(f"warning: {what} may be stale - {out['stale_reason']}")
    skipped = out.get("unreadable") or []
    if skipped:
        named = "; ".join(f"{u['id']}: {u['message']}" for u in skipped[:2])
        more = f"; and {len(skipped) - 2} more" if len(skipped) > 2 else ""
        lines.append(f"warning: {len(skipped)} note(s) in the store could not be read and are missing here "
                     f"({named}{more})")
    return lines


def search_text(out: dict, explicit_project: str | None = None, *, tool: ToolName | None = None,
                read_hint: str | None = None) -> str:
    """Search results as text, note content framed as data. `read_hint`: the front end's own last line
    (the MCP server names its read tool); else the command that reads the first result."""
    from agentmem.safety.framing import frame_lines

    lines = freshness_lines(out, "results")
    if out.get("scan"):
        words_only = ", ranked by words only" if out["mode"] == "hybrid" else ""
        lines.append(f"note: searched without the index{words_only} - {out['scan_reason']}")
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
        held = " [credential withheld]" if r.get("withheld") else ""
        found.append(f"- {r['id']}  {r['created'][:16].replace('T', ' ')}  {r['kind']}: {r['title']}{flag}{corr}"
                     f"{held}")
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
    return "\n".join(lines)


def read_text(out: dict, data: bytes) -> str:
    """A note read in full, framed as data, with what the reader should know about where it came from."""
    from agentmem.safety.framing import frame_note

    note_id = out["id"]
    text = frame_note(data.decode("utf-8", errors="replace").rstrip("\n"), note_id=note_id).rstrip("\n")
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
