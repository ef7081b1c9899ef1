"""Shared fixtures for the skill tests: throwaway machines, a store of each kind, skill folders.

`store_case` runs each test on the folder store and on the bucket store (through
the real huggingface_hub + hf_xet against the loopback Hub stand-in, when its
fixtures are present). `place` writes raw bytes into the store behind agentmem's
back, as a hostile or careless writer could.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentmem.errors import Offline
from agentmem.runtimes.registry import runtime
from agentmem.store.base import StoreDescription, open_store


@dataclass
class SkillMachine:
    """One machine: its own HOME (runtime skill folders) and AGENTMEM_HOME."""

    home: Path  # AGENTMEM_HOME
    user_home: Path  # HOME

    @property
    def env(self) -> dict:
        return {"HOME": str(self.user_home), "AGENTMEM_HOME": str(self.home)}

    @property
    def runtimes(self) -> list:
        return [runtime("codex", self.env), runtime("claude", self.env)]

    def installed(self, name: str, rt: str = "claude") -> Path:
        return next(r for r in self.runtimes if r.name == rt).skills_root / name


def make_skill_machine(root: Path, label: str) -> SkillMachine:
    m = SkillMachine(root / f"agentmem-{label}", root / f"home-{label}")
    m.user_home.mkdir(parents=True)
    return m


@dataclass
class StoreCase:
    kind: str
    desc: StoreDescription
    place: object  # callable(path, bytes): write raw bytes at an object path, unchecked
    hub: object = None  # the loopback Hub stand-in, for the bucket store

    def open(self, desc=None, timeout=None):
        return open_store(desc or self.desc, timeout=timeout or 30)


def folder_case(root: Path) -> StoreCase:
    root.mkdir(parents=True, exist_ok=True)

    def place(path: str, data: bytes) -> None:
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    return StoreCase("folder", StoreDescription("folder", str(root)), place)


@pytest.fixture
def machine(tmp_path, monkeypatch) -> SkillMachine:
    m = make_skill_machine(tmp_path, "a")
    for key, value in m.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return m


def bucket_case_for(request) -> StoreCase:
    bucket = request.getfixturevalue("alice_bucket")
    hub = request.getfixturevalue("hub")
    return StoreCase("bucket", StoreDescription("bucket", bucket), lambda p, d: hub.put_file(bucket, p, d), hub)


@pytest.fixture(params=["folder", "bucket"])
def store_case(request, tmp_path) -> StoreCase:
    if request.param == "folder":
        return folder_case(tmp_path / "store")
    return bucket_case_for(request)


@pytest.fixture
def bucket_case(request) -> StoreCase:
    """The bucket store alone, for tests that drive the loopback Hub's faults."""
    return bucket_case_for(request)


@pytest.fixture
def store(store_case):
    return store_case.open()


def write_skill(folder: Path, *, name: str | None = None, description: str = "Helps with things.",
                body: str = "Do the thing.\n", files: dict | None = None) -> Path:
    """A skill folder on disk: SKILL.md with frontmatter plus `files` (relative path -> text or bytes)."""
    folder.mkdir(parents=True, exist_ok=True)
    name = folder.name if name is None else name
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n\n{body}")
    for rel, content in (files or {}).items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return folder


def tree(path: Path) -> dict:
    """Everything below `path` (not following links): relative path -> bytes, link target or '<dir>'."""
    if not os.path.lexists(path):
        return {}
    if path.is_symlink():
        return {".": f"link:{os.readlink(path)}"}
    if path.is_file():
        return {".": path.read_bytes()}
    out = {}
    for dirpath, dirnames, filenames in os.walk(path):
        for entry in dirnames + filenames:
            full = Path(dirpath) / entry
            rel = full.relative_to(path).as_posix()
            if full.is_symlink():
                out[rel] = f"link:{os.readlink(full)}"
            elif full.is_dir():
                out[rel] = "<dir>"
            else:
                out[rel] = full.read_bytes()
    return out


def store_objects(store, prefix: str = "skills") -> dict:
    """Every object below `prefix`: path -> bytes."""
    return {o.path: store.get(o.path) for o in store.list(prefix)}


class FaultyStore:
    """A real store with one injected fault: `put` raises after `puts_ok` successful puts, or
    `get` raises after `gets_ok` successful gets. Stands for a dropped connection."""

    def __init__(self, inner, *, puts_ok: int | None = None, gets_ok: int | None = None, exc=None):
        self.inner, self.puts_ok, self.gets_ok = inner, puts_ok, gets_ok
        self.exc = exc or Offline("connection dropped (injected)")
        self.put_paths: list[str] = []

    @property
    def description(self):
        return self.inner.description

    def put(self, path, data):
        if self.puts_ok is not None and len(self.put_paths) >= self.puts_ok:
            raise self.exc
        self.inner.put(path, data)
        self.put_paths.append(path)

    def get(self, path):
        if self.gets_ok is not None:
            if self.gets_ok <= 0:
                raise self.exc
            self.gets_ok -= 1
        return self.inner.get(path)

    def info(self, path):
        return self.inner.info(path)

    def list(self, prefix):
        return self.inner.list(prefix)
