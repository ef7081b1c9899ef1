"""The machine folder: where one machine's config, cache and pending uploads live; and the helper itself.

Two different AGENTMEM_HOMEs on one host behave as two machines.

The helper's own command (`helper_command`) is here too: every printed `agentmem ...`
line names it (`agentmem/shell.py`), since `agentmem` is not on PATH. The installed
launcher passes its absolute path to `launch.main`, which records it (`started_by`), so
finding it costs nothing, even in a hook.

Paths on the per-turn path (this module, config, cache, pending, search, the
index) are plain strings built with os.path: importing pathlib is a measurable
share of each helper start (docs/benchmarks.md). Functions accept str or any
os.PathLike.
"""

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Mapping


# The machine folder's layout (docs/ARCHITECTURE.md "Machine folder"): every name below is spelled here
# only; the modules that read and write these files ask this one (tests/test_layout_home.py). The store's
# own layout, which the cache mirrors, is store/layout.py.
CONFIG_FILE = "config.toml"
PENDING_DIR = "pending"
CACHE_DIR = "cache"
SETUP_VERIFICATION_FILE = "setup-verification.json"  # the setup note of each store and project (setup/verification)
VIEW_DIR = "view"
VIEW_PAGE = "index.html"  # in view/: where `view` writes unless told
VIEW_REGISTRY = "written.json"  # in view/: the view pages this machine wrote (view/written.py)

PENDING_SKILLS_DIR = "pending-skills"  # <name>/<revision>/: a frozen skill publication until confirmed
PENDING_SKILL_ENTRY = "entry.json"  # in a frozen publication, beside its files/ (skills/publish.py)

# In pending/ (uploads/pending.py): a folder per entry holding the entry itself, and the payload: a note's
# bytes, or a record's when it is a record. Named here for the session-start reminder too, which reads them
# without the pending module. Receipts of what a retry confirmed: pending/.confirmed/<id>.json.
PENDING_ENTRY_FILE = "entry.json"
PENDING_NOTE_FILE = "note.md"
PENDING_RECORD_FILE = "record.json"
RECEIPTS_DIR = ".confirmed"

# In a store's cache, cache/<store key>/:
PROJECTS_DIR = "projects"  # a folder per project (below)
SKILLS_DIR = "skills"  # <name>/<revision>/SKILL.md: discovered revisions' entry files
STORE_IDENTITY_FILE = "store.json"  # the identity this machine proved for the store (store/identity.py)
NO_ANSWER_FILE = "no-answer.json"  # when the store last did not answer a search in time (replica/backoff.py)

# In a project's cache, cache/<store key>/projects/<project>/:
NOTES_DIR = "notes"  # cached notes, <id>.md as the store names them
RECORDS_DIR = "records"  # cached records (note/records.py); the reminder looks for any (replica/pins.py)
RECORD_STATES_FILE = "records.json"  # the notes' states from those records, derived
STATE_FILE = "state.json"  # the last check of the store, its change token, unreadable objects (replica/cache.py)
SCREENED_FILE = "screened"  # the fingerprint of the scanner that screened the cached notes (replica/redacted_copies.py)
WITHHELD_DIR = "withheld"  # <id>.json: a cached note that held a credential (replica/redacted_copies.py)
NAMES_FILE = "names"  # what the notes folder holds, by name (replica/kept_names.py)
NAMES_LOCK = "names.lock"  # held shared by every writer of the notes folder while it writes
NAMES_GEN = "names.gen"  # the generation of the writer that began last
REVIEW_FILE = "review.json"  # what the review queue keeps of each note: title, dates (memory/review.py)
CORRECTIONS_FILE = "corrections.json"  # which cached note corrects which, derived (search/corrections.py)
CORRECTIONS_SEEN_FILE = "corrections-seen.json"  # the note IDs corrections.json has looked at
INDEX_DIR = "index"  # the ranked index's folder (search/index.py), holding:
INDEX_FILE = "ranked.sqlite"  # the index
VECTORS_FILE = "vectors.bin"  # the snapshot of every note's vectors (search/vectors.py)
REBUILD_LOCK = "rebuild.lock"  # held shared by writers of temp files in the folder (search/build.py)
CHECKED_FILE = "checked.json"  # what doctor found when the index's integrity check last passed

# The installed launcher's absolute path, when it started this process (see `started_by`).
_launcher: str | None = None


def started_by(launcher: str) -> None:
    """Record that the installed launcher at `launcher` started this process (`launch.main` calls it)."""
    global _launcher
    _launcher = launcher


def helper_command() -> list[str]:
    """The absolute command that runs this helper: what setup records as `[helper] command`.

    The installed launcher; else a venv's `agentmem` console script (a checkout's editable
    install); else this interpreter with `-m agentmem`. No config is read.
    """
    if _launcher:
        return [_launcher]
    script = os.path.join(sys.prefix, "Scripts" if sys.platform == "win32" else "bin",
                          "agentmem.exe" if sys.platform == "win32" else "agentmem")
    if sys.prefix != sys.base_prefix and os.path.isfile(script):
        return [script]
    return [sys.executable, "-m", "agentmem"]


def machine_dir(env: "Mapping[str, str] | None" = None) -> str:
    """`AGENTMEM_HOME` when set, else the platform's user config folder + `agentmem`."""
    env = os.environ if env is None else env
    explicit = env.get("AGENTMEM_HOME")
    if explicit:
        return os.path.expanduser(explicit)
    user = os.path.expanduser("~")
    if sys.platform == "win32":
        base = env.get("APPDATA") or os.path.join(user, "AppData", "Roaming")
    elif sys.platform == "darwin":
        base = os.path.join(user, "Library", "Application Support")
    else:
        base = env.get("XDG_CONFIG_HOME") or os.path.join(user, ".config")
    return os.path.join(base, "agentmem")


def config_path(machine: str | os.PathLike) -> str:
    return os.path.join(machine, CONFIG_FILE)


def pending_dir(machine: str | os.PathLike) -> str:
    return os.path.join(machine, PENDING_DIR)


def receipts_dir(machine: str | os.PathLike) -> str:
    return os.path.join(machine, PENDING_DIR, RECEIPTS_DIR)


def cache_root(machine: str | os.PathLike) -> str:
    return os.path.join(machine, CACHE_DIR)


def setup_verification_path(machine: str | os.PathLike) -> str:
    return os.path.join(machine, SETUP_VERIFICATION_FILE)


def view_dir(machine: str | os.PathLike) -> str:
    return os.path.join(machine, VIEW_DIR)


def listed(folder: str) -> list[str]:
    """The names in `folder` not starting with "." (temp files, markers), or [] if it cannot be listed."""
    try:
        return [n for n in os.listdir(folder) if not n.startswith(".")]
    except OSError:
        return []


def store_cache(machine: str | os.PathLike, store_key: str) -> str:
    """Everything this machine keeps of one store: cache/<store key>."""
    return os.path.join(cache_root(machine), store_key)


def projects_cache(machine: str | os.PathLike, store_key: str) -> str:
    """The folder of one store's project caches (listed to find the projects this machine cached of it)."""
    return os.path.join(cache_root(machine), store_key, PROJECTS_DIR)


def project_caches(machine: str | os.PathLike, store_key: str | None = None) -> list[str]:
    """Every project cache folder on this machine of one store (`store_key`), or of every store (None), found by
    listing only (no glob: the session-start reminder avoids importing `re`)."""
    cache = cache_root(machine)
    stores = listed(cache) if store_key is None else [store_key]
    return [os.path.join(cache, store, PROJECTS_DIR, project)
            for store in stores for project in listed(os.path.join(cache, store, PROJECTS_DIR))]


def project_cache(machine: str | os.PathLike, store_key: str, project: str) -> str:
    """One project's cache of one store (`replica/cache.project_dir`; records keep theirs inside it)."""
    return os.path.join(cache_root(machine), store_key, PROJECTS_DIR, project)


def skill_cache(machine: str | os.PathLike, store_key: str, name: str, revision: str) -> str:
    """The folder of one skill revision's cached files of one store."""
    return os.path.join(cache_root(machine), store_key, SKILLS_DIR, name, revision)


def notes_folder(pdir: str | os.PathLike) -> str:
    """A project cache's notes (`pdir`: `project_cache`)."""
    return os.path.join(pdir, NOTES_DIR)


def records_folder(pdir: str | os.PathLike) -> str:
    return os.path.join(pdir, RECORDS_DIR)


def withheld_folder(pdir: str | os.PathLike) -> str:
    return os.path.join(pdir, WITHHELD_DIR)


def index_folder(pdir: str | os.PathLike) -> str:
    return os.path.join(pdir, INDEX_DIR)
