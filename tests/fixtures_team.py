"""Two members of one team on folder stores: machines "a" and "b", each with its own personal folder store,
sharing one team folder store, project `app` mapped on both; each runs the real CLI (issue X). And one
member's machine whose team store is a bucket on the loopback Hub (`BucketTeam`)."""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.fixtures_core import CLI, make_machine, missing_prerequisite, new_folder_store


def read_only_member(m) -> None:
    """Run `m`'s CLI as a member a read-only folder refuses writes to: for root (who writes through permission
    bits), without the capabilities that let it."""
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            missing_prerequisite("setpriv (util-linux) drops root's override of permission bits")
        m.cli = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *CLI]
        m.child = True


@contextmanager
def read_only(*folders: Path) -> Iterator[None]:
    """The folders read only (r-x for all) inside the block, their modes put back after it."""
    modes = [stat.S_IMODE(folder.stat().st_mode) for folder in folders]
    for folder in folders:
        folder.chmod(0o555)
    try:
        yield
    finally:
        for folder, mode in zip(folders, modes):
            folder.chmod(mode)


class Team:
    """Machines "a" and "b": own folder stores, one shared team folder, project `app` mapped on both."""

    def __init__(self, root: Path):
        self.root = root
        self.team = root / "team-store"
        new_folder_store(self.team)
        self.checkout = root / "app"
        self.checkout.mkdir()
        self.own: dict[str, Path] = {}
        self.machines = {}
        for name in ("a", "b"):
            self.own[name] = root / f"own-{name}"
            new_folder_store(self.own[name])
            m = make_machine(root, name, self.own[name], {self.checkout: "app"}, agent=f"codex@{name}")
            with open(m.home / "config.toml", "a", encoding="utf-8") as f:
                f.write(f'\n[team]\nkind = "folder"\nlocation = "{self.team}"\n')
            self.machines[name] = m

    def run(self, name: str, *args: str, stdin: str = "") -> tuple[int, str, str]:
        return self.machines[name].run(*args, input=stdin, cwd=self.checkout)

    def json(self, name: str, *args: str, stdin: str = "") -> tuple[int, dict]:
        status, out, err = self.run(name, *args, "--json", stdin=stdin)
        try:
            return status, json.loads(out)
        except ValueError:
            raise AssertionError(f"not JSON (status {status}): {out!r} {err!r}") from None

    def save(self, name: str, title: str, text: str, *flags: str) -> str:
        status, out = self.json(name, "save", "--title", title, "--text", text, *flags)
        assert status == 0, out
        return out["id"]

    def save_team(self, name: str, title: str, text: str) -> str:
        """A note machine `name` saves into the team's store (`save --team`)."""
        status, out = self.json(name, "save", "--team", "--title", title, "--text", text)
        assert status == 0 and out["status"] == "saved" and out["scope"] == "team", out
        return out["id"]

    def team_search(self, name: str, *words: str) -> list[str]:
        """The IDs of the team's notes machine `name`'s next search (`search`, both stores) finds."""
        status, out = self.json(name, "search", *words)
        assert status == 0, out
        return [r["id"] for r in out["results"] if r["scope"] == "team"]

    def reminder(self, name: str) -> str:
        """Machine `name`'s session-start reminder (the hook Claude Code runs)."""
        status, text, err = self.run(name, "hook", "reminder", "--runtime", "claude")
        assert status == 0, err
        return text

    def pending(self, name: str) -> list[str]:
        folder = self.machines[name].home / "pending"
        return sorted(n for n in os.listdir(folder) if not n.startswith(".")) if folder.exists() else []

    def team_objects(self) -> list[str]:
        return sorted(str(p.relative_to(self.team)) for p in (self.team / "projects").rglob("*") if p.is_file())


class BucketTeam:
    """One machine with its own folder store and a team bucket on the loopback Hub (default: a new
    `team/memory`)."""

    def __init__(self, root: Path, hub, token: str, bucket: str | None = None):
        self.hub, self.bucket = hub, bucket or "team/memory"
        if bucket is None:
            hub.add_bucket(self.bucket, private=True)
        self.own = root / "own"
        new_folder_store(self.own)
        self.checkout = root / "app"
        self.checkout.mkdir()
        self.m = make_machine(root, "member", self.own, {self.checkout: "app"})
        with open(self.m.home / "config.toml", "a", encoding="utf-8") as f:
            f.write(f'\n[team]\nkind = "bucket"\nlocation = "{self.bucket}"\n\n[network]\ntimeout = 3\n')
        self.m.env.update(HF_ENDPOINT=hub.url, HF_TOKEN=token)
        self.m.child = True  # huggingface_hub reads HF_ENDPOINT once per process

    def json(self, *args: str) -> tuple[int, dict]:
        status, out, err = self.m.json(*args, cwd=self.checkout)
        return status, out

    def in_bucket(self) -> list[str]:
        return sorted(p for p in self.hub.buckets[self.bucket].files if p.endswith(".md"))
