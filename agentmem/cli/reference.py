"""The CLI reference, docs/cli.md, generated from the parsers and the tables below.

    python -m agentmem.cli.reference > docs/cli.md      # tests/test_cli_reference.py fails on drift

The JSON shapes are written here once: docs/cli.md is rendered from them, and the
contract test (tests/test_json_contract.py) runs every command with --json and
checks its keys against them, so neither the docs nor the code can drift alone.
A key ending in `?` is present only sometimes; every object also carries `status`.
"""

from __future__ import annotations

import argparse

from agentmem import config, errors, status
from agentmem.cli import main

_RECORD_SHAPE = ("saved | pending | unchanged", {
    "kind": "retract | pin | unpin", "note": "the note's ID", "project": "its project",
    "record": "{record, kind, agent, created, reason}: the record saved (or, unchanged, the one already there)",
    "path?": "the record's path in the store", "store?": "{kind, location}",
    "retry?": "pending only: the command that retries it", "reason?": "pending only: {error, message}",
    "scope?": "with a team store: personal | team, the store acted on (a note only the team's store holds here: team)",
})
# command -> (the values `status` takes, {key: what it holds}).
JSON_SHAPES: dict[str, tuple[str, dict[str, str]]] = {
    "save": ("saved | pending", {
        "id": "the note's ID", "project": "its project", "path": "its path in the store",
        "store": "{kind, location}", "retry?": "pending only: the command that retries it",
        "reason?": "pending only: {error, message}, why the upload is not confirmed",
        "redacted?": "with --redact: [{where, kind}] of what was replaced",
        "already_confirmed?": "a retry of a note another retry confirmed first: true",
        "confirmed_at?": "with already_confirmed: when it was confirmed",
        "repaired?": "--retry ID --repair of a damaged entry: {problem, store, label}",
        "purges?": "--retry of a purge record: {note, deleted_from_store}; saved only once the store no longer "
                   "holds the note",
        "scope?": "with a team store configured: personal | team, where the note was saved (--team, or --retry "
                  "of a note bound for the team: the team's)",
        "moved_from?": "--retry ID --personal: {kind, location}, the team store the note was bound for",
        "already_personal?": "--retry ID --personal of a note no longer pending that this machine's cache of your "
                             "own store holds (an earlier --personal delivered it): true, nothing sent",
        "already_in_team?": "--retry ID --personal: true when the team store already held these very bytes (an "
                            "earlier upload reached it): the note is saved there, nothing sent to your own store",
        "next?": "--retry of a team note the team refused you: [{text, argv, command}], the write role then a "
                 "retry, or keeping it as your own note (--retry ID --personal)",
    }),
    "pending": ("ok", {
        "pending": "[{id, store, project, path, created, attempts, last_error, retry, damaged?, purges?, waits?, "
                   "next?}], oldest first; a damaged entry has store null; `purges`: an unfinished purge's record, "
                   "naming its note; `waits` {error, message} and `next`: a team note the team refused you, with "
                   "both ways out (the Stop hook no longer retries it)",
        "unreadable?": "[{id, problem}] pending folders without a readable note",
    }),
    "search": ("ok", {
        "project": "the project searched", "query": "the query", "mode": "ranked | literal | hybrid",
        "results": "[{id, title, created, kind, pending, matches: [{line, text}], withheld, author?, corrects?, "
                   "corrected_by?, score?, retracted?, review_due?, pinned?}], best first; `author`: who saved it "
                   "(notes saved before authors were stamped have none); a corrected note right below its newest "
                   "correction; retracted notes only with --include-retracted (`retracted`: {record, kind, agent, "
                   "created, reason}); a note past its review date ranks below an equal match; `withheld`: "
                   "[{where, kind, line?}] credentials the note holds, shown as [REDACTED:<kind>]; with a "
                   "team store configured each result also has `scope`: personal | team, the store it is from "
                   "(both stores' results merged: best score, or newest, first)",
        "pending_uploads": "notes of this machine waiting for upload",
        "stale": "true when the store could not be checked (with a team: either store): results may miss notes",
        "stale_reason": "why (null when fresh); with a team, each stale store named: `the team store LABEL: ...`",
        "stale_error": "the error kind (null when fresh)",
        "refreshed": "whether this search refreshed the cache",
        "checked_at": "when this machine last checked the store (seconds since the epoch), or null; with a team: "
                      "the less current store's",
        "unreadable?": "[{id, error, message}] objects in the store that could not be read (skipped)",
        "not_cached": "why nothing was cached (a read-only sandbox), or null: the store still answered and what "
                      "it sent was searched in memory, so `stale` stays false",
        "scan": "true when the index could not be used and every note was scanned (not the same as stale)",
        "scan_reason": "why (null when the index was used)",
        "withheld?": "[{where: query, kind}] when the query held a credential (then `query` shows it redacted)",
        "more?": "an empty query: how many of the project's notes the list left out (raise --limit to see them)",
        "catching_up?": "{have, total} when this machine is still downloading the store's notes (a new machine "
                        "joining a big store: each search fetches a few seconds' worth; `sync` fetches the rest)",
        "embedding?": "hybrid mode, while notes lack sentence vectors: {done, total}, the notes that had them of "
                      "all; the others were ranked by their words alone (each hybrid search embeds `[search] "
                      "embed_budget` seconds' worth first; `sync --embed` embeds the rest)",
        "scopes?": "with a team store configured: [{scope: personal | team, store: its label, stale, stale_reason, "
                   "stale_error, refreshed, checked_at, unreadable, not_cached, results, catching_up?}], each store "
                   "searched (--scope), how current its answer is; a store that could not be searched at all is "
                   "stale with its error, and the other's notes still come",
    }),
    "sync": ("ok", {
        "project": "the project brought up to date", "notes": "notes in this machine's cache now",
        "added": "notes downloaded", "removed": "notes the store no longer holds, dropped here",
        "rounds": "refreshes it took (each within one network budget)",
        "stale": "true when it could not finish: the store could not be asked, or a download failed",
        "stale_reason": "why (null when the cache matches the store)", "stale_error": "the error kind, or null",
        "refreshed": "whether the store was asked", "checked_at": "when the cache last matched the store, or null",
        "unreadable": "[{id, error, message}] objects in the store that could not be read (skipped)",
        "not_cached": "why nothing could be cached (a read-only sandbox), or null",
        "warnings?": "[lines] what the store says a person must hear (a bucket that became public)",
        "embedding?": "with --embed: {done, total, embedded}: the cached notes with sentence vectors of all, and "
                      "how many this run embedded",
    }),
    "read": ("ok", {
        "id": "the note's ID", "project": "its project", "source": "pending | cache | store",
        "meta": "the frontmatter", "body": "the Markdown body",
        "withheld": "[{where: title | tags | sources | body | <key>, kind, line?}] credentials the note holds, "
                    "each shown as [REDACTED:<kind>] (the audit command finds them in the store)",
        "stale": "true when the store could not be asked what changed (a retraction or purge made elsewhere "
                 "may be missing)", "stale_reason": "why (null when fresh)",
        "stale_error": "the error kind (null when fresh)", "refreshed": "whether the cache was refreshed",
        "checked_at": "when this machine last checked the store, or null",
        "retracted": "the note's retraction {record, kind, agent, created, reason}, or null",
        "review_due": "true when its review date has passed", "review_by": "its review date (YYYY-MM-DD) or null",
        "pinned": "whether it is pinned into the session-start reminder",
        "scope?": "with a team store configured: personal | team, the store the note was read from (your own is "
                  "asked first)",
    }),
    "retract": _RECORD_SHAPE,
    "pin": _RECORD_SHAPE,
    "unpin": _RECORD_SHAPE,
    "review": ("ok", {
        "project": "the project", "notes": "how many notes were looked at",
        "items": "[{kind: review-due | near-duplicate | corrected-repeatedly | retracted | proposed-for-team (a "
                 "machine with a team: your notes saved with --propose that no team note came from yet), notes: "
                 "[ids], summary, titles: {id: title}, commands: [{argv, command, note?}], review_by?, record?, "
                 "scope?}], in that order of kinds, each sorted by note ID (with a team store: the member's own "
                 "items, then the team's, each with `scope`); `command` is `argv` as a line to run (a capitalised "
                 "word is yours to fill in)",
        "left_out": "{kind: count} of items past 200 of a kind",
        "stale": "true when the store could not be checked", "stale_reason": "why (null when fresh)",
        "stale_error": "the error kind (null when fresh)", "refreshed": "whether the cache was refreshed",
        "checked_at": "when this machine last checked the store, or null",
        "not_cached?": "why nothing could be cached (a read-only sandbox): the queue covers what the store sent",
        "catching_up?": "{have, total} while a new machine catches up with a large store",
    }),
    "promote": ("promoted | pending | already-promoted", {
        "note": "your note's ID", "project": "its project",
        "team_note": "the team note's ID: the one made now, or the one an earlier promote made from it",
        "save?": "the team note's save, as `save --json` gives it (absent when already promoted)",
        "pending?": "already-promoted only: true while that team note is still pending on this machine, not "
                    "confirmed in the team store (then the exit status is 10, as a pending save's)",
    }),
    "purge": ("purged | pending", {
        "note": "the purged note's ID", "project": "its project",
        "record": "the purge record {record, kind, agent, created, reason}",
        "deleted_from_store": "true: deleted now; false: the store did not hold it; null: not asked yet",
        "removed_here": "[cache, index, pending, view]: where this machine held its bytes (all gone now)",
        "reason?": "pending only: {error, message}, what the store did not do",
        "next?": "pending only: the command that finishes the purge",
        "other_purges?": "[{note, project, record, status: purged | pending, reason?}] this machine's earlier "
                         "unfinished purges, finished after this one",
        "scope?": "with a team store: personal | team, the store purged from",
    }),
    "audit": ("clean | found (then the exit status is 12) | fixed (--fix purged every note found)", {
        "store": "{kind, location}", "projects": "the projects scanned", "scanned": "notes read from the store",
        "findings": "[{project, id, path, title, withheld: [{where, kind, line?}], redacted_copy, purge}]: `title` as "
                    "every output shows it (each credential redacted; null for a note named by one); `redacted_copy` "
                    "is the ID of a copy a fix saved (or null), `purge` the command that deletes the original "
                    "(null when the note's ID itself holds the credential: then id and path are shown redacted)",
        "unreadable": "[{id, project, error, message}] notes that could not be read (not scanned)",
        "fixed?": "with --fix: [{id, copy, status: purged | copied | pending | skipped | failed, error?, message?, "
                  "next?}]: purged (the copy is in the store, the original gone everywhere); copied (the purge did "
                  "not finish) and pending (the copy's upload is not confirmed, the original kept) with `next`, "
                  "the command that finishes it",
    }),
    "export": ("ok", {
        "path": "the export folder (absolute)", "projects": "{project: notes exported}",
        "team_projects?": "with a team store: {project: the team's notes exported, under @team/<project>/}",
        "notes": "notes exported",
        "records": "retract, pin, unpin and purge records exported (the notes' states)",
        "written": "files written (new or changed)", "unchanged": "files left as they were",
        "removed": "files an earlier export wrote whose note is gone", "stale": "true when a project's store "
        "could not be checked: the export may miss notes", "stale_projects": "{project: why}",
        "withheld": "[{id, where, kind}] credentials exported as [REDACTED:<kind>]",
    }),
    "import": ("ok | pending", {
        "format": "agentmem | claude-code | codex | gemini | cline", "path": "what was read",
        "counts": "{save, present, refused}", "items": "[{action: save | present | refused, project (null: none "
        "to go to), title, source, id?, kind? and note? (a record: its kind and the note it names), reason?}], the "
        "notes in the source's order, then an export's records", "applied": "whether --apply saved the items",
        "saved": "[save outcomes] with --apply (status pending: the upload is not confirmed; a purge not finished "
        "carries `next`, the command that finishes it)",
        "stale": "true when the store could not be checked (an item reported new may be there)",
        "stale_projects": "{project: why}",
        "other_scope?": "with --from agentmem, an export's notes and records of the other scope, left out (not "
        "items): {scope: team (without --team) | personal (with it), notes, records}",
        "next": "[steps], as an error's: with other_scope, the import that takes them (--team added, or left "
        "out); empty otherwise",
    }),
    "doctor": ("ok | broken", {
        "checks": f"[{{name, status: {' | '.join(map(status.check_word, status.CHECK_STATUSES))}, detail, fix, "
                  "command}] in the order to fix them (each status spelt as a check: see Statuses above); command: "
                  "the helper command that fixes it, or null",
        "failed": "checks that failed (then the exit status is 12)", "warned": "checks that need a look",
    }),
    "view": ("ok", {
        "path": "the HTML file written", "notes": "how many notes it shows",
        "projects": "[names] of the projects it shows", "bytes": "the file's size",
        "files": "the folder beside it holding its note files (read when a note is opened or searched for)",
        "files_bytes": "their size",
        "stale": "true when something could not be checked (a project's store answer, the skills): the page says what",
        "stale_reasons": "[lines] why it may be stale (empty when current)",
        "opened?": "with --open: whether a browser was started",
    }),
    "map": ("ok", {
        "directory": "the canonical directory mapped", "project": "its project",
        "changed": "whether config.toml changed",
        "replaced": "the project it was mapped to before (--replace), or null",
        "committed": "whether the change was committed in the machine folder's git",
        "commit_problem?": "why it was not committed",
    }),
    "unmap": ("ok", {
        "directory": "the canonical directory unmapped", "project": "the project it was mapped to",
        "changed": "whether config.toml changed (always true)",
        "committed": "whether the change was committed in the machine folder's git",
        "commit_problem?": "why it was not committed",
    }),
    "where": ("ok", {
        "home": "the machine folder", "project": "the current directory's project",
        "store": "{kind, location}", "agent": "the identity written into notes",
    }),
    "setup": ("confirmed | pending | failed", {
        "home": "the machine folder",
        "steps": f"[{{name, status: {' | '.join(status.Status)}, detail}}] in order (each status spelt as a step: "
                 "see Statuses above)",
        "store?": "the store chosen and who can reach it",
    }),
    "upgrade": ("updated | current (a failure is the error envelope)", {
        "home": "the machine folder", "committed_local_edits": "whether the folder's own edits were committed first",
        "from": "the template revision recorded before", "to": "where the upgrade went (or already is)",
        "why": "why that one: as asked, the newest release tag, or the checkout's HEAD (no tags)",
        "repaired": "what was mended first (a recorded revision that exists nowhere), or null",
        "command": "the copier command run (null when already current)", "copier_exit_status?": "its exit status",
    }),
    "bucket": ("ok (connect, create, ensure); ok | pending | failed (verify)", {
        "bucket?": "connect/create/ensure: the bucket ID", "action?": "connected | created | reused",
        "user?": "the Hugging Face user", "private?": "always true", "saved_to_config?": "with --save",
        "id?": "verify: the setup note's ID", "path?": "verify: its path", "upload?": "saved | already-saved | pending",
        "read_back?": "verify: read back from the store", "found_by_search?": "verify: found by search",
        "problem?": "verify: what failed, or null",
    }),
    "publish-skill": ("published | pending", {
        "name": "the skill", "revision": "the new revision", "store": "where", "files": "[paths] uploaded",
        "skipped": "[paths] hidden entries left out", "pending": "the frozen folder kept for --resume, or null",
        "message": "one line for a person", "scope?": "with a team store: personal | team (--team)",
    }),
    "skills": ("ok", {
        "store": "where", "query": "the query or null",
        "skills": "[{name, installed: [{runtime, revision}], revisions: [{revision, description, files, bytes, "
                  "problem}], scope?}], newest revision first; with a team store each says its store's scope "
                  "(the member's own listed first)",
        "stores?": "with a team store: {scope: store label} of the stores listed",
        "pending": "[{name, revision, store, created}] interrupted publications",
        "withheld?": "[{where: query, kind}] when the query held a credential (then `query` shows it redacted)",
    }),
    "read-skill": ("ok", {
        "name": "the skill", "revision": "the revision", "path": "the file", "content": "its text",
        "files": "[paths] of the revision", "scope?": "with a team store: the store it was read from",
    }),
    "install-skill": ("ok", {
        "name": "the skill", "revision": "the revision", "dry_run": "true with --diff alone",
        "runtimes": "[{runtime, target, state: absent | same | different, action: installed | replaced | "
                    "unchanged | none, backup, diff}]",
        "scope?": "with a team store: the store it was installed from",
    }),
    "mcp": ("none: it speaks JSON-RPC on stdin and stdout until the client ends (`--json` is refused)", {}),
    "hooks": ("ok | error", {
        "hooks?": "status: [{runtime, file, installed, events, current, reflect, note?}]; reflect: on | off | "
                  "needs hooks | not available: why",
        "action?": "install | remove", "changes?": "[{runtime, file, changed, detail, error?}]",
        "recorded?": "install/remove: what was written to config.toml ({hooks.enabled: ..., hooks.reflect?: ...}) "
                     "or null",
        "reflect?": "install: {runtime: on | off | needs hooks | not available: why}",
        "committed?": "install/remove: whether that was committed",
        "error?": "a runtime's file was left alone (read-only, a dangling link): the error kind",
        "message?": "with error: what happened",
        "codex_trust?": "install with Codex: how to trust the hooks",
        "runtime?": "trust: codex", "file?": "trust: the hooks file", "trusted?": "trust: [hook keys]",
    }),
}
# What a command's entry shows after its JSON keys (docs/cli.md sits beside docs/view.png).
COMMAND_NOTES = {
    "view": ["", "![The memory view: notes of two projects, a correction, a pin and a pending upload](view.png)"],
}
ERROR_SHAPE = {"status": "error", "error": "the error kind (below)", "message": "one line, also on stderr",
               "next": "what to do, as steps (below; empty when there is nothing to suggest)"}
# Any command's JSON may also carry `warnings`: [lines], e.g. while config.toml holds conflict markers,
# and then `warning_details`: each one's class and next steps.
COMMON_KEYS = {"status", "warnings", "warning_details"}
# A next step, in an error's `next` and a warning's (render.next_data); the MCP server's tool errors carry the same.
STEP_SHAPE = {
    "text": "the step in words, its command spelt as a line to run",
    "argv?": "when the step runs one helper command: its arguments (without the helper's path)",
    "command?": "with argv: the line to run (the absolute helper, quoted for a POSIX shell)",
}
_WARNINGS: list[type[errors.AgentmemWarning]] = [errors.AgentmemWarning, *errors.AgentmemWarning.__subclasses__()]
WARNING_SHAPE = {"warning": "its class: " + ", ".join(f"`{cls.kind}`" for cls in _WARNINGS),  # each, as defined
    "message": "the line, as in `warnings`", "next": "[steps], as an error's"}

# config.toml: (table, key, default, meaning). Defaults come from the code that applies them.
CONFIG_KEYS = [
    ("", "agent", "`<first runtime>@<host>` (setup fills it)", "identity written into each note's frontmatter"),
    ("store", "kind", "`folder`", "`folder`, or `bucket` for a Hugging Face Storage Bucket"),
    ("store", "location", "`~/agent-memory`", "the folder (absolute), or the bucket ID `namespace/name`"),
    ("", "author", "empty", "your name on the notes you save; empty: your Hub user name on a bucket store, your "
     "login name on a folder store"),
    ("team", "kind", "none", "the team's shared store beside your own: `bucket` (in the team's organization) or "
     "`folder` (a folder the team shares); no `[team]` table: no team"),
    ("team", "location", "none", "the team bucket's ID `org/name`, or the shared folder (absolute)"),
    ("network", "timeout", f"`{config.DEFAULT_NETWORK_TIMEOUT:g}`",
     f"seconds: the network budget of one helper call (`{config.ENV_NETWORK_TIMEOUT}` overrides)"),
    ("network", "check_timeout", f"`{config.DEFAULT_CHECK_TIMEOUT:g}`",
     "seconds: how long a search waits for the store to say what changed; past it the search answers from "
     "the cache marked stale, and searches in the next minute answer so at once (saves keep the whole budget)"),
    ("cache", "max_age", f"`{config.DEFAULT_CACHE_MAX_AGE:g}`",
     "seconds: a search this soon after the last check of the store skips asking it again (and says so)"),
    ("search", "mode", f"`{config.SEARCH_MODES[0]}`", "default search mode: " + ", ".join(config.SEARCH_MODES)),
    ("search", "embed_budget", f"`{config.DEFAULT_EMBED_BUDGET:g}`",
     "seconds: how long a hybrid search embeds notes that lack sentence vectors before it answers, newest first "
     "(kept for the next search); the rest are ranked by their words alone until then (0: only `sync --embed` "
     "and setup embed)"),
    ("memory", "review_after", "none", "days: a note without `--review-by` is due for review this long after it "
     "was created (none: never)"),
    ("memory", "pin_budget", f"`{config.DEFAULT_PIN_BUDGET}`", "characters of pinned notes the session-start "
     "reminder carries; over it the newest pins win and the reminder names the rest"),
    ("projects", '"DIR"', "the directory copier ran in", "directory -> project; the longest containing directory wins"),
    ("runtimes", "enabled", "`[\"codex\"]`", "where setup puts the skill, the block and the hooks"),
    ("hooks", "enabled", "`false`", "install the optional hooks: `true`, `false`, or the runtimes that get them "
     "(`agentmem hooks install|remove` write it)"),
    ("hooks", "reflect", "`false`", "with the hooks on: once per session, the stop hook asks the agent for one more "
     "turn to save durable decisions and findings (Codex, Claude Code, Gemini CLI, Copilot CLI; not OpenCode); "
     "`hooks install --reflect|--no-reflect` write it"),
    ("trust", "projects", "`false`", "for the `[projects]` folders, write what the CLIs' own trust prompts write "
     "(Codex: `trust_level = \"trusted\"`, so `codex exec` runs there workspace-write; Gemini CLI: "
     "`TRUST_FOLDER`; Copilot CLI: a hook approving only the helper's commands there); false takes out "
     "only agentmem's entries (`setup --trust-projects` and `--no-trust-projects` write it)"),
    ("mcp", "enabled", "`false`", "register `agentmem mcp` with the runtimes that take MCP servers"),
    ("skills", "install", "`[]`", "shared skill revisions setup installs, as `name@revision`"),
    ("helper", "command", "recorded by setup", "the helper's absolute command; hooks and the skill use it"),
]


class _Formatter(argparse.HelpFormatter):
    def __init__(self, prog: str):
        super().__init__(prog, width=100, max_help_position=30)


def _parser(name: str) -> argparse.ArgumentParser:
    parser = main.build_parser(name)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    command = sub.choices[name]
    command.formatter_class = _Formatter
    command.prog = f"agentmem {name}"
    return command


def _command(name: str) -> list[str]:
    help_text = main.COMMANDS[name][1]
    lines = [f"### `agentmem {name}`", "", help_text[0].upper() + help_text[1:] + ".", "", "```text"]
    lines += _parser(name).format_help().rstrip("\n").splitlines()
    lines += ["```", ""]
    status, keys = JSON_SHAPES[name]
    lines += [f"JSON: `status` {status}; " + ", ".join(f"`{k}`" for k in keys) + ".", ""]
    lines += [f"- `{k.rstrip('?')}`{' (sometimes)' if k.endswith('?') else ''}: {v}" for k, v in keys.items()]
    lines += COMMAND_NOTES.get(name, [])
    return [*lines, ""]


def render() -> str:
    out = [
        "# agentmem command reference",
        "",
        "Generated by `python -m agentmem.cli.reference > docs/cli.md` from the parsers and the tables in",
        "`agentmem/cli/reference.py`; `tests/test_cli_reference.py` fails when this file drifts from them.",
        "",
        "Every command takes `--json` and then prints one JSON object on stdout that always carries `status`.",
        "Keys are only ever added to a command's JSON, never removed; any of them may also carry `warnings` "
        "(lines also printed on stderr, e.g. while config.toml holds conflict markers). A failure prints "
        + "`{" + ", ".join(f'"{k}"' for k in ERROR_SHAPE) + "}` "
        + "on stdout with `--json`, and one line on stderr either way.",
        "",
        "An error's `next` and each warning's lists what to do as steps: `{"
        + ", ".join(f'"{k.rstrip("?")}"' for k in STEP_SHAPE) + "}`, " + "; ".join(
            f"`{k.rstrip('?')}`{' (sometimes)' if k.endswith('?') else ''}: {v}" for k, v in STEP_SHAPE.items())
        + ". With `warnings`, `warning_details` holds each warning, in the same order, as `{"
        + ", ".join(f'"{k}"' for k in WARNING_SHAPE) + "}`: " + "; ".join(
            f"`{k}`: {v}" for k, v in WARNING_SHAPE.items()) + ". The MCP server's tool errors carry the same "
        "`next`, a step it runs as a tool call as `tool`: `{name, arguments}` instead of `argv` and `command`, "
        "and leave out a step that needs a flag its tools lack.",
        "",
        "Statuses: every report of checks or steps takes its `status` from one vocabulary, "
        + ", ".join(f"`{s}`" for s in status.Status) + " (`agentmem/status.py`), spelt by one rule: a step "
        "(setup's `steps`) as the word, a check (doctor's `checks`) as its first four letters, "
        + ", ".join(f"`{status.check_word(s)}`" for s in status.CHECK_STATUSES) + " (a check is never "
        "changed, skipped or pending). A command's own `status` is its verdict or an operation's outcome "
        "(listed with each command), not a check's.",
        "",
        "## Commands",
        "",
    ]
    for name in main.COMMANDS:
        out += _command(name)
    out += ["## Exit statuses", "", "| status | meaning |", "|---|---|"]
    out += [f"| {code} | {meaning} |" for code, meaning in sorted(errors.EXIT_MEANINGS.items())]
    kinds = sorted({(cls.kind, cls.exit_code) for cls in _error_classes()}, key=lambda k: (k[1], k[0]))
    out += ["", "Error kinds in `--json` (`error`), with their status: "
            + ", ".join(f"`{kind}` ({code})" for kind, code in kinds) + ".", ""]
    out += ["## config.toml", "", "One file per machine folder (`AGENTMEM_HOME`, default `~/.config/agentmem`).",
            "agentmem edits it with tomlkit, so comments survive; a malformed file is reported and never rewritten.",
            "", "| table | key | default | meaning |", "|---|---|---|---|"]
    out += [f"| {f'[{t}]' if t else '(top)'} | `{k}` | {d} | {m} |" for t, k, d, m in CONFIG_KEYS]
    return "\n".join(out) + "\n"


def _error_classes() -> list[type[errors.AgentmemError]]:
    found, todo = [], [errors.AgentmemError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


if __name__ == "__main__":
    import sys

    sys.stdout.write(render())
