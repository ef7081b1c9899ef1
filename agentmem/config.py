"""config.toml: the store, the agent's identity, and the directory-to-project mapping.

Reading uses the standard library's tomllib (fast); writing goes through
tomlkit so the user's comments and layout survive, and is atomic.

INV explicit-project: a project is only ever the one configured for the
longest matching ancestor directory (compared as canonical paths on directory
boundaries) or one named explicitly; never a guess. A hand-written `[projects]`
key that is not an absolute directory is refused, naming the key (INV config-edit-alone).
"""

from __future__ import annotations

import os

from agentmem import patterns
from agentmem.errors import (
    AgentmemError,
    BadSetting,
    Command,
    InvalidInput,
    NextStep,
    NotConfigured,
    Option,
    StaleConfig,
)
from agentmem.fsutil import read_bytes, write_atomic
from agentmem.paths import config_path
from agentmem.store.base import StoreDescription
from agentmem.store.timeout import DEFAULT_NETWORK_TIMEOUT, ENV_NETWORK_TIMEOUT, MIN_NETWORK_TIMEOUT, network_timeout

PROJECT_NAME = patterns.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
AGENT_NAME = patterns.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$")

# Seconds. A search within this of the last refresh reads the cache only (and says it
# may be stale). 0: every search asks the store what changed, which costs one stat of a
# folder store's notes folder or one request to a bucket when nothing did (2026-12-01).
DEFAULT_CACHE_MAX_AGE = 0.0
# Characters: pinned notes in the session-start reminder: a small share of what Claude Code loads of its
# own memory file, so a few pins never crowd out the session's own context (figures: docs/benchmarks.md).
DEFAULT_PIN_BUDGET = 2000
# Seconds. How long a search waits for the store to say what changed before it answers from the
# cache, marked stale. The check is one request (a bucket's info), plus one feed read after a
# change: milliseconds on the loopback Hub, a few round trips on the real one. 2 s leaves a slow
# link room, while a Hub that hangs costs an agent's turn 2 s instead of the whole 20 s budget, which a
# stopped Hub with its port open once cost every search (docs/benchmarks.md). Saves keep the budget.
DEFAULT_CHECK_TIMEOUT = 2.0
SEARCH_MODES = ("ranked", "literal", "hybrid")  # ranked first: the default
# Seconds a hybrid search spends embedding notes that have no sentence vectors yet (search/vectors.py)
# before it answers; the rest are ranked by their words until later searches or `sync --embed` embed
# them. A second keeps up with what a machine's own saves and refreshes bring between two searches, and a
# first hybrid search over a big store costs about a second more instead of an hour (figures:
# docs/benchmarks.md).
DEFAULT_EMBED_BUDGET = 1.0

SETUP_HINT = ("set this machine up with `copier copy` of the agentmem template "
              "(the bootstrap.md beside the template says how)")

# How a machine gains a team store: the template's `team` answer, changed through an upgrade.
TEAM_HINT = NextStep("add the team's store with {} (ORG/NAME: the team's bucket; or a folder the team shares)",
                     Command("upgrade", "--data", "team=ORG/NAME"))


def map_hint(directory: str) -> NextStep:
    """How to map an unmapped directory: the command, runnable once PROJECT is named."""
    return NextStep("map it with: {} (PROJECT: the project name the owner chose; never guess one)",
                    Command("map", directory, "PROJECT"))


def check_project_name(name: str) -> str:
    if not isinstance(name, str) or not PROJECT_NAME.match(name):
        raise InvalidInput(
            f"invalid project name {name!r}: use 1-64 lowercase letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return name


def canonical(path: str | os.PathLike) -> str:
    """The canonical absolute form of a directory: user-expanded, symlinks resolved."""
    return os.path.realpath(os.path.expanduser(os.fspath(path)))


def too_broad(root: str) -> str | None:
    """Why the canonical directory `root` cannot be a project's (it would claim every directory below it, the
    whole disk or the user's whole home), or None."""
    if os.path.dirname(root) == root:
        return "the filesystem root"
    if os.path.normcase(root) == os.path.normcase(canonical("~")):
        return "your home directory"
    return None


def _quoted(key: str) -> str:
    """A TOML key as written in the file (a basic string), for messages."""
    return '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _within(path: str, root: str) -> bool:
    """Is canonical `path` the canonical directory `root` or inside it (on directory boundaries)?"""
    path, root = os.path.normcase(path), os.path.normcase(root)
    return path == root or path.startswith(root if root.endswith(os.sep) else root + os.sep)


class Config:
    """config.toml as read, and what reading it found for the front end to say (`warnings`: one line
    each, e.g. a stale config in use). `keep_parsed_copy` once the command using it succeeded."""

    def __init__(self, path: str, data: dict | None = None, *, warnings: list[str] | None = None,
                 parsed: tuple[str | os.PathLike, str] | None = None):
        self.path = path
        self.data = {} if data is None else data
        self.warnings = warnings or []
        self._parsed = parsed  # (machine, text) this data was parsed from, not yet kept as a copy
        self._scope = "personal"

    def keep_parsed_copy(self) -> None:
        """Write the parsed copy of this config's text (see `_keep_parsed_copy`); once, and only for a
        config that was parsed rather than read from its copy."""
        if self._parsed is not None:
            _keep_parsed_copy(*self._parsed, self.data)
            self._parsed = None

    @property
    def store(self) -> StoreDescription:
        """The store of this config's scope: the member's own (`[store]`), or the team's in a `scoped` copy."""
        raw = self.data.get("store")
        if not isinstance(raw, dict):
            raise NotConfigured(f"no store configured in {self.path}", hint=SETUP_HINT)
        desc = self._described("store", raw)
        desc.team = self._scope == "team"
        return desc

    @property
    def team(self) -> StoreDescription | None:
        """`[team]`: the team's shared store beside the member's own, or None (no team on this machine)."""
        raw = self.data.get("team")
        if raw is None or raw == {}:
            return None
        if not isinstance(raw, dict):
            raise InvalidInput(f"{self.path}: [team] must be a table with kind and location")
        team = self._described("team", raw)
        if "store" in self.data and isinstance(self.data["store"], dict) and team == self.store:
            raise InvalidInput(f"{self.path}: [team] names the same store as [store]; a team store is another one")
        return team

    def _described(self, table: str, raw: dict) -> StoreDescription:
        kind, location = raw.get("kind"), raw.get("location")
        if kind not in ("folder", "bucket") or not isinstance(location, str) or not location:
            raise InvalidInput(f"{self.path}: [{table}] needs kind = \"folder\" or \"bucket\" and a location")
        if kind == "folder":
            location = os.path.normpath(os.path.expanduser(location))
            if not os.path.isabs(location):
                raise InvalidInput(f"{self.path}: a folder store's location must be an absolute path ([{table}])")
        return StoreDescription(kind, location, team=table == "team")

    @property
    def scope(self) -> str:
        """Which store `store` is: "personal" (the member's own) or "team" (a `scoped("team")` copy)."""
        return self._scope

    def scoped(self, scope: str) -> Config:
        """This config with `store` naming the store of `scope` ("personal" or "team"): every library call
        that takes a config then works on that store, unchanged. A team scope with no `[team]` is refused."""
        if scope == self._scope:
            return self
        if scope == "personal":
            raise InvalidInput("a team-scoped config has no personal store")  # a programming error, not input
        if scope != "team":
            raise InvalidInput(f"unknown scope {scope!r}: personal or team")
        team = self.team
        if team is None:
            raise NotConfigured(f"no team store configured in {self.path}", hint=TEAM_HINT)
        data = dict(self.data)
        data["store"] = team.to_dict()
        data.pop("team", None)
        out = Config(self.path, data, warnings=self.warnings)
        out._scope = "team"
        return out

    def scopes(self) -> list[str]:
        """The scopes this machine has: ["personal"], or ["personal", "team"] with a `[team]`."""
        return ["personal", "team"] if self.team is not None else ["personal"]

    @property
    def author(self) -> str:
        """`author`: the member's name on their notes ("" when not set: the store's user name applies)."""
        name = self.data.get("author") or ""
        if not isinstance(name, str) or (name and not AGENT_NAME.match(name)):
            raise InvalidInput(f"{self.path}: invalid author name {name!r}")
        return name

    @property
    def agent(self) -> str:
        name = self.data.get("agent") or "agent"
        if not isinstance(name, str) or not AGENT_NAME.match(name):
            raise InvalidInput(f"{self.path}: invalid agent name {name!r}")
        return name

    def _number(self, table: str, key: str, default: float) -> float:
        value = (self.data.get(table) or {}).get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise InvalidInput(f"{self.path}: [{table}] {key} must be a non-negative number")
        return float(value)

    @property
    def network_timeout(self) -> float:
        """`AGENTMEM_NETWORK_TIMEOUT`, else `[network] timeout`, else the default (see network_timeout)."""
        if os.environ.get(ENV_NETWORK_TIMEOUT):
            return network_timeout()
        return network_timeout(self._number("network", "timeout", DEFAULT_NETWORK_TIMEOUT))

    @property
    def check_timeout(self) -> float:
        """`[network] check_timeout`: how long a search waits for the store's change check."""
        return max(MIN_NETWORK_TIMEOUT, self._number("network", "check_timeout", DEFAULT_CHECK_TIMEOUT))

    @property
    def cache_max_age(self) -> float:
        return self._number("cache", "max_age", DEFAULT_CACHE_MAX_AGE)

    @property
    def review_after(self) -> float | None:
        """[memory] review_after: days after which a note without `review_by` is due for review (None: never)."""
        if "review_after" not in (self.data.get("memory") or {}):
            return None
        return self._number("memory", "review_after", 0)

    @property
    def pin_budget(self) -> int:
        """[memory] pin_budget: characters of pinned notes the session-start reminder carries."""
        return int(self._number("memory", "pin_budget", DEFAULT_PIN_BUDGET))

    @property
    def search_mode(self) -> str:
        """[search] mode: the default of `agentmem search --mode` (ranked unless set)."""
        value = (self.data.get("search") or {}).get("mode", "ranked")
        if value not in SEARCH_MODES:
            raise InvalidInput(f"{self.path}: [search] mode must be one of {', '.join(SEARCH_MODES)}")
        return value

    @property
    def embed_budget(self) -> float:
        """[search] embed_budget: seconds a hybrid search spends embedding notes first (0: none)."""
        return self._number("search", "embed_budget", DEFAULT_EMBED_BUDGET)

    @property
    def projects(self) -> dict[str, str]:
        raw = self.data.get("projects") or {}
        if not isinstance(raw, dict):
            raise InvalidInput(f"{self.path}: [projects] must map directories to project names")
        out = {}
        for directory, name in raw.items():
            if not os.path.isabs(os.path.expanduser(directory)):  # "." or "" would match every directory
                raise InvalidInput(
                    f"{self.path}: [projects] key {_quoted(directory)} is not an absolute directory",
                    hint=NextStep("write the full path (\"/home/me/src/app\" = \"app\") or use `{} DIR PROJECT`",
                                  Command("map")),
                )
            if not isinstance(name, str):
                raise InvalidInput(f"{self.path}: project for {directory!r} must be a string")
            out[directory] = name
        return out

    def project_names(self) -> set[str]:
        return set(self.projects.values())

    def resolve_project(self, cwd: str | os.PathLike | None = None, explicit: str | None = None) -> str:
        """The project for `cwd` (longest configured ancestor), or the explicitly named one."""
        if explicit is not None:
            check_project_name(explicit)
            if explicit not in self.project_names():
                names = ", ".join(sorted(self.project_names())) or "none"
                first = min(self.project_names()) if self.project_names() else None
                use: list[str | Option] = []
                if first:
                    use = ["name a configured one (", Option("project", first), "), or "]
                raise NotConfigured(
                    f"project {explicit!r} is not configured on this machine (configured: {names})",
                    hint=NextStep.of(*use, "map a directory of it first: ", Command("map", "DIRECTORY", explicit),
                                     " (DIRECTORY: the checkout that belongs to it)"),
                )
            return explicit
        here = canonical(cwd if cwd is not None else os.getcwd())
        best: tuple[int, str] | None = None
        for directory, name in self.projects.items():
            root = canonical(directory)
            if _within(here, root):
                depth = len(root.rstrip(os.sep).split(os.sep))
                if best is None or depth > best[0]:
                    best = (depth, name)
        if best is None:
            raise NotConfigured(f"{here} is not inside a mapped project directory", hint=map_hint(here))
        return check_project_name(best[1])


def load(machine: str | os.PathLike, *, allow_stale: bool = True) -> Config:
    """Read config.toml. A missing file is an empty config; a malformed one is an error naming it.

    A file left with `copier update` conflict markers is never parsed: with `allow_stale`, the
    last working config (the parsed copy of the previous text) stands in for it, with a warning
    saying so and naming the way out in its `warnings`, for every front end to pass on; without
    a previous copy, or without `allow_stale` (setup), it is an error with the same way out.
    """
    path = config_path(machine)
    try:
        raw = read_bytes(path)
    except FileNotFoundError:
        return Config(path, {})
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"{path} is not UTF-8 text; fix or remove it, nothing was changed") from None
    data = _parsed_copy(machine, text)
    if data is None:
        line = conflict_line(text)
        if line:
            previous = _parsed_copy(machine, None) if allow_stale else None
            problem = conflict_error(path, line, machine, previous)
            if previous is None:
                raise problem
            return Config(path, previous, warnings=[StaleConfig(problem.one_line(), hint=problem.hint)])
        import tomllib

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise InvalidInput(f"{path} is not valid TOML ({exc}); fix or remove it, nothing was changed") from None
        return Config(path, data, parsed=(machine, text))
    return Config(path, data)


# -- conflicts left by `copier update` -------------------------------------------------------------

# Git's merge markers (Copier runs `git merge-file`): 7 characters at the start of a line, then a
# label; the separator stands alone. None of them can begin a line of valid TOML.
_MARKERS = ("<<<<<<<", "|||||||", ">>>>>>>")

def conflict_line(text: str) -> int:
    """The line number of the first merge-conflict marker line in `text`, or 0."""
    if "=======" not in text and "<<<<<<<" not in text and ">>>>>>>" not in text:
        return 0
    for number, line in enumerate(text.splitlines(), start=1):
        if line.rstrip() == "=======" or (line[:7] in _MARKERS and line[7:8] in ("", " ")):
            return number
    return 0


def conflict_error(path: str, line: int, machine: str | os.PathLike, previous: dict | None) -> InvalidInput:
    """What to tell the user about a conflicted config.toml: the file, the line, the one way out
    (resolve it, then setup, which checks the machine again and commits it)."""
    helper = (((previous or {}).get("helper") or {}).get("command")) or None
    in_use = ("until then agentmem uses the last working config, from before the conflict"
              if previous is not None else "no earlier working copy is kept, so nothing can run until then")
    return InvalidInput(
        f"{path} holds unresolved conflict markers from `copier update` (first on line {line}); {in_use}",
        hint=NextStep("edit the file: keep one side of each conflict and delete the <<<<<<<, ======= and >>>>>>> "
                      "lines; then run `{}`, which checks the machine again and commits it",
                      Command("setup", helper=helper if isinstance(helper, list) else None)),
    )


def check_no_conflict(path: str, text: str, *, machine: str | os.PathLike) -> None:
    line = conflict_line(text)
    if line:
        raise conflict_error(path, line, machine, None)


# A JSON copy of the parsed config, reused while config.toml's text is unchanged:
# importing tomllib is a measurable share of every agent turn (docs/benchmarks.md). It is
# written only after a command succeeded (`Config.keep_parsed_copy`), so input that
# is refused leaves the machine folder exactly as it was.


def _parsed_copy_path(machine: str | os.PathLike) -> str:
    return os.path.join(machine, ".config-parsed.json")


def _parsed_copy(machine: str | os.PathLike, text: str | None) -> dict | None:
    """The parsed copy if it was made from `text` (any text: None), else None."""
    import json

    try:
        copy = json.loads(read_bytes(_parsed_copy_path(machine)))
    except (OSError, ValueError):
        return None
    if (isinstance(copy, dict) and (text is None or copy.get("source") == text)
            and isinstance(copy.get("data"), dict)):
        return copy["data"]
    return None


def _keep_parsed_copy(machine: str | os.PathLike, text: str, data: dict) -> None:
    import json

    try:
        payload = json.dumps({"source": text, "data": data})
    except (TypeError, ValueError):
        return  # TOML dates and the like: just parse the file each time
    try:
        write_atomic(_parsed_copy_path(machine), payload.encode("utf-8"))
    except OSError:
        pass


def timeout_or_default(cfg: Config) -> tuple[float, str | None]:
    """The network deadline, and what to warn about: a malformed setting falls back to the default, so
    a typo in config.toml never stops a note from being saved (it stays pending if the store fails)."""
    try:
        return cfg.network_timeout, None
    except AgentmemError as exc:
        return DEFAULT_NETWORK_TIMEOUT, BadSetting(f"{exc.one_line()}; using {DEFAULT_NETWORK_TIMEOUT:g} s",
                                                   hint=exc.hint)


def require(machine: str | os.PathLike, *, allow_stale: bool = True) -> Config:
    """Like load, but a machine without a store configured stops with the setup hint."""
    cfg = load(machine, allow_stale=allow_stale)
    _ = cfg.store  # raises NotConfigured with the hint
    return cfg


def helper_words(data: dict) -> list[str]:
    """The helper command to print for a person or an agent: the one setup recorded, else this one."""
    import sys

    cmd = (data.get("helper") or {}).get("command")
    if isinstance(cmd, list) and cmd and all(isinstance(w, str) and w for w in cmd) and os.path.isabs(cmd[0]):
        return list(cmd)
    return [sys.executable, "-m", "agentmem"]
