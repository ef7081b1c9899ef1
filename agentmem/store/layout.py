"""Where things are in a store: the one home of its object paths.

```text
projects/<project>/notes/<note-id>.md                          a note
projects/<project>/notes/<record-id>.<kind>.json               a record naming a note (note/records.py)
skills/<skill-name>/<revision>/<file>                          a skill revision's files (SKILL.md written last)
```

Every module that names an object in a store asks this one: a note's or a record's path, a project's
prefix, a skill revision's folder; and what an object path is (`parse`, `parse_skill`). The machine
folder's own layout (the cache of these objects among it) is `agentmem/paths.py`.

Imports only agentmem/patterns.py: its two patterns are compiled when first used, which a search on a
fresh cache never does.
"""

from agentmem import patterns

PROJECTS = "projects"  # the folder of every project's notes
NOTES = "notes"  # a project's folder of notes and records
SKILLS = "skills"  # the folder of every shared skill
NOTE_SUFFIX = ".md"
RECORD_SUFFIX = ".json"
RECORD_KINDS = ("retract", "pin", "unpin", "purge")

# An object's ID in its file name: letters, digits, '_' and '-' (note/ids.py checks IDs by the same rule).
ID_PATTERN = "[A-Za-z0-9][A-Za-z0-9_-]{0,127}"
NOTE_FILE = patterns.compile(rf"^({ID_PATTERN})\.md$")  # <id>.md, in a store or a cache
# <record id>.<kind>.json, beside the notes; never a note's name (it has a dot)
RECORD_FILE = patterns.compile(rf"^({ID_PATTERN})\.({'|'.join(RECORD_KINDS)})\.json$")
NOTE = "note"  # the kind `parse` gives a note


def note_file(note_id: str) -> str:
    """The file name of a note: `<id>.md`."""
    return f"{note_id}{NOTE_SUFFIX}"


def record_file(record_id: str, kind: str) -> str:
    """The file name of a record: `<id>.<kind>.json` (the caller checked both)."""
    return f"{record_id}.{kind}{RECORD_SUFFIX}"


def project_prefix(project: str) -> str:
    """Everything of one project: `projects/<project>`."""
    return f"{PROJECTS}/{project}"


def notes_prefix(project: str) -> str:
    """A project's notes and records: `projects/<project>/notes` (what a refresh asks the store about)."""
    return f"{PROJECTS}/{project}/{NOTES}"


def note_path(project: str, note_id: str) -> str:
    return f"{notes_prefix(project)}/{note_file(note_id)}"


def record_path(project: str, record_id: str, kind: str) -> str:
    return f"{notes_prefix(project)}/{record_file(record_id, kind)}"


def journal_file(folder: str) -> str:
    """A folder store's journal of a notes folder (store/journal.py), beside it: `.notes.journal` for `notes`.
    Hidden, so no listing of the store shows it."""
    return f".{folder}.journal"


def object_path(prefix: str, name: str) -> str:
    """An object below a prefix this module gave, by its file name."""
    return f"{prefix}/{name}"


def parse(path: str) -> tuple[str, str, str] | None:
    """(project, kind, id) of a note's or a record's object path (`kind`: NOTE, or a record's kind);
    None for any other path."""
    parts = path.split("/")
    if len(parts) != 4 or parts[0] != PROJECTS or parts[2] != NOTES or not parts[1]:
        return None
    if m := NOTE_FILE.match(parts[3]):
        return parts[1], NOTE, m.group(1)
    if m := RECORD_FILE.match(parts[3]):
        return parts[1], m.group(2), m.group(1)
    return None


def notes_project(path: str) -> str | None:
    """The project whose notes folder holds the object at `path` (any file directly in it), else None."""
    parts = path.split("/")
    return parts[1] if len(parts) == 4 and parts[0] == PROJECTS and parts[2] == NOTES and parts[1] else None


def is_record_name(name: str) -> bool:
    """Whether an object's file name (or path) is a record's."""
    return RECORD_FILE.match(name.rpartition("/")[2]) is not None


def skill_prefix(name: str) -> str:
    return f"{SKILLS}/{name}"


def revision_prefix(name: str, revision: str) -> str:
    """The store folder of one skill revision: `skills/<name>/<revision>`."""
    return f"{SKILLS}/{name}/{revision}"


def skill_file(name: str, revision: str, rel: str) -> str:
    """A file of a skill revision, by its path inside the revision."""
    return f"{revision_prefix(name, revision)}/{rel}"


def parse_skill(path: str) -> tuple[str, str, str] | None:
    """(skill name, revision, file path inside the revision) of a skill object's path; None otherwise."""
    parts = path.split("/", 3)
    if len(parts) != 4 or parts[0] != SKILLS or not all(parts[1:]):
        return None
    return parts[1], parts[2], parts[3]
