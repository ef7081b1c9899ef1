"""Pytest fixtures for the loopback Hub stand-in (tests/hubstub.py).

Environment is fixed before huggingface_hub is imported anywhere in the test
process: HF_HOME points at a throwaway folder (Xet writes logs and the token
file lives there) and progress bars are off.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="agentmem-hf-home-")
atexit.register(shutil.rmtree, os.environ["HF_HOME"], ignore_errors=True)
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
# Kept aside for the opt-in live test only (tests/test_live_hub.py); no other test sees a real token.
LIVE_HF_TOKEN = os.environ.pop("HF_TOKEN", None)
os.environ.pop("HF_HUB_OFFLINE", None)
os.environ.pop("HF_ENDPOINT", None)

import pytest  # noqa: E402

from agentmem.store import network  # noqa: E402
from tests.fixtures_core import CLI  # noqa: E402
from tests.hubstub import Hub  # noqa: E402

REPO = Path(__file__).resolve().parent.parent

# hf_xet reads its retry settings once, when the process's first session starts.
# The CLI opens its store (which sets them) before any transfer; in this shared
# test process a test may start the session first, so set them here as a 2 s
# budget would.
network.configure_xet(2)


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """A running stand-in with small tree pages (3 entries), so listings page."""
    stub = Hub(tmp_path / "hub", page_size=3).start()
    monkeypatch.setenv("HF_ENDPOINT", stub.url)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    yield stub
    stub.stop()


@pytest.fixture
def alice(hub, monkeypatch):
    """User `alice` (member of org `team`) logged in through HF_TOKEN with a write token."""
    token = hub.add_user("alice", orgs=("team",))
    monkeypatch.setenv("HF_TOKEN", token)
    return token


@pytest.fixture
def bob(hub):
    """Another user, `bob`, who owns his own private bucket `bob/agent-memory`. Returns his token."""
    token = hub.add_user("bob")
    hub.add_bucket("bob/agent-memory", private=True)
    return token


@pytest.fixture
def alice_bucket(hub, alice):
    """Alice's private bucket `alice/agent-memory`, existing and empty."""
    hub.add_bucket("alice/agent-memory", private=True)
    return "alice/agent-memory"


class BucketMachine:
    """One machine: its own AGENTMEM_HOME, HF_HOME and a mapped project directory."""

    def __init__(self, root: Path, hub, token: str | None, bucket: str | None = "alice/agent-memory"):
        self.home = root / "agentmem-home"
        self.src = root / "src" / "app"
        self.src.mkdir(parents=True)
        self.hub, self.token = hub, token
        lines = ['agent = "codex@' + root.name + '"', "", "[network]", "timeout = 3", "", "[cache]", "max_age = 0", ""]
        if bucket:
            lines += ["[store]", 'kind = "bucket"', f'location = "{bucket}"', ""]
        lines += ["[projects]", f'"{self.src}" = "app"', ""]
        self.home.mkdir(parents=True)
        (self.home / "config.toml").write_text("\n".join(lines))
        self.hf_home = root / "hf-home"

    def run(self, *args: str, stdin: str | None = None, env_change: dict | None = None,
            stderr=subprocess.PIPE) -> subprocess.CompletedProcess:
        """The helper on this machine; `env_change` sets variables (None: removes one)."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home.parent),
            "AGENTMEM_HOME": str(self.home),
            "HF_HOME": str(self.hf_home),
            "HF_ENDPOINT": self.hub.url,
            "HF_HUB_DISABLE_PROGRESS_BARS": "1",
            "PYTHONPATH": str(REPO),
        }
        if self.token:
            env["HF_TOKEN"] = self.token
        for key, value in (env_change or {}).items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        done = subprocess.run(
            [*CLI, *args], cwd=self.src, env=env, input=stdin,
            stdout=subprocess.PIPE, stderr=stderr, text=True, timeout=60,
        )
        if self.token:  # INV no-credentials
            assert self.token not in done.stdout and self.token not in (done.stderr or "")
        return done


TEAM_ORG = "acme"
TEAM_BUCKET = "acme/team-memory"


class TeamMember:
    """One member of the `acme` team: their name, role in the org (None: not a member), token, and
    personal bucket `<name>/agent-memory`."""

    def __init__(self, hub, name: str, role: str | None):
        self.name, self.role = name, role
        if role is not None:
            hub.add_member(TEAM_ORG, name, role)
        self.token = hub.add_user(name)
        self.bucket = f"{name}/agent-memory"
        hub.add_bucket(self.bucket, private=True)

    def machine(self, root: Path, hub, bucket: str | None = TEAM_BUCKET) -> BucketMachine:
        """A machine logged in as this member, its store `bucket` (the team's by default)."""
        return BucketMachine(root, hub, self.token, bucket=bucket)


class Team:
    """The org `acme` with its private team bucket `acme/team-memory` and three people:
    `writer` (role write), `reader` (role read), `outsider` (no role), each with a write token
    of their own and a private personal bucket. Nobody is logged in (HF_TOKEN unset) until a
    test chooses a member."""

    def __init__(self, hub):
        self.hub, self.org, self.bucket = hub, TEAM_ORG, TEAM_BUCKET
        hub.add_bucket(TEAM_BUCKET, private=True)
        self.writer = TeamMember(hub, "writer", "write")
        self.reader = TeamMember(hub, "reader", "read")
        self.outsider = TeamMember(hub, "outsider", None)

    @property
    def members(self) -> list[TeamMember]:
        return [self.writer, self.reader, self.outsider]


@pytest.fixture
def team(hub):
    """An organisation `acme` on the stand-in: see `Team`."""
    return Team(hub)
