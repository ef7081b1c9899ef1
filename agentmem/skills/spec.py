"""What a shareable skill is: its name, its revision IDs, its SKILL.md frontmatter and its size limits.

Shared by publication (`publish.py`), discovery (`catalog.py`) and installation (`install.py`).
Every limit here applies both when publishing and when installing, so a revision
that could be published can always be installed.
"""

from __future__ import annotations

import re

from agentmem.errors import InvalidInput
from agentmem.note.ids import new_id
from agentmem.store import layout
from agentmem.store.base import check_object_path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from datetime import datetime

CORE_SKILL = "agent-memory"  # reserved: only the Space/template distributes it (machine/core_skill.py)
ENTRYPOINT = "SKILL.md"
MAX_NAME = 64  # Agent Skills format: the name is the folder name, at most 64 characters
MAX_DESCRIPTION = 1024  # Agent Skills format

# Size limits: a skill is Markdown instructions plus small scripts and
# references; these leave ample room for that while keeping one installation well
# inside the 20 s network budget of an invocation on a slow (~1 MB/s) link (each file
# is one transfer; figures: docs/benchmarks.md, "Figures behind choices in the code").
MAX_FILE_BYTES = 1024 * 1024  # one file
MAX_TOTAL_BYTES = 8 * 1024 * 1024  # all files of one revision
MAX_FILES = 200  # files of one revision
MAX_FRONTMATTER_BYTES = 16 * 1024  # the YAML block at the top of SKILL.md

# Agent Skills naming: lowercase letters, digits and single inner hyphens. Also a safe folder name.
_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def is_valid_name(name: object) -> bool:
    return isinstance(name, str) and len(name) <= MAX_NAME and bool(_NAME.match(name))


def check_name(name: object) -> str:
    """Return `name` if it can name a shared skill, else raise InvalidInput."""
    if not is_valid_name(name):
        raise InvalidInput(
            f"invalid skill name {name!r}",
            hint=f"use lowercase letters, digits and single hyphens, at most {MAX_NAME} characters",
        )
    if name == CORE_SKILL:
        raise InvalidInput(
            f"{CORE_SKILL!r} is the reserved core memory skill",
            hint="it is installed only by agentmem setup and cannot be shared, published or replaced",
        )
    return name  # type: ignore[return-value]


def check_revision(revision: object) -> str:
    """A revision names one folder segment. Revisions we allocate match `ids.ALLOCATED`; others
    (placed in the store by hand) are accepted if they are a single safe path segment."""
    if not isinstance(revision, str) or "/" in revision:
        raise InvalidInput(f"invalid skill revision {revision!r}")
    check_object_path(revision)
    return revision


def new_revision(now: datetime | None = None) -> str:
    """A fresh, globally unique, time-sortable revision ID (allocated like a note ID)."""
    return new_id(now)


def check_file_path(rel: str) -> str:
    """A file path inside a skill: relative, '/'-separated, no '..', no hidden segments."""
    try:
        return check_object_path(rel)
    except InvalidInput:
        raise InvalidInput(
            f"unsafe file path {rel!r} in skill",
            hint="each path part must start with a letter, digit or '_' and use only letters, digits and ._@+-",
        ) from None


def parse_skill_md(data: bytes) -> dict:
    """Return {"name", "description"} from SKILL.md's YAML frontmatter, or raise InvalidInput."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput("SKILL.md is not UTF-8 text") from None
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise InvalidInput("SKILL.md must start with a '---' frontmatter block holding name and description")
    block, closed = [], False
    for line in lines[1:]:
        if line.strip() == "---":
            closed = True
            break
        block.append(line)
    if not closed:
        raise InvalidInput("SKILL.md frontmatter is not closed by a '---' line")
    raw = "".join(block)
    if len(raw.encode()) > MAX_FRONTMATTER_BYTES:
        raise InvalidInput(f"SKILL.md frontmatter is larger than {MAX_FRONTMATTER_BYTES} bytes")
    import yaml  # lazy: only skill commands parse YAML

    try:
        meta = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise InvalidInput(f"SKILL.md frontmatter is not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(meta, dict):
        raise InvalidInput("SKILL.md frontmatter must be a mapping with name and description")
    name, description = meta.get("name"), meta.get("description")
    if not isinstance(name, str) or not name:
        raise InvalidInput("SKILL.md frontmatter has no 'name'")
    if not isinstance(description, str) or not description.strip():
        raise InvalidInput("SKILL.md frontmatter has no 'description'")
    if len(description) > MAX_DESCRIPTION:
        raise InvalidInput(f"SKILL.md description is longer than {MAX_DESCRIPTION} characters")
    return {"name": name, "description": description.strip()}


class Budget:
    """Counts files and bytes against the per-revision limits; raises InvalidInput when one is exceeded."""

    def __init__(self) -> None:
        self.files = 0
        self.bytes = 0

    def add(self, rel: str, size: int) -> None:
        if size > MAX_FILE_BYTES:
            raise InvalidInput(f"{rel} is larger than {MAX_FILE_BYTES} bytes, the limit for one skill file")
        self.files += 1
        self.bytes += size
        if self.files > MAX_FILES:
            raise InvalidInput(f"a skill may hold at most {MAX_FILES} files")
        if self.bytes > MAX_TOTAL_BYTES:
            raise InvalidInput(f"a skill may hold at most {MAX_TOTAL_BYTES} bytes in all")


INSTALL_MARKER = ".agentmem-skill.json"  # written into each installed skill folder by skills/install.py


revision_prefix = layout.revision_prefix  # the store folder of one revision (store/layout.py)
