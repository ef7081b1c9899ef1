"""Issue X's acceptance: team memory as the members of one organisation live it, through the CLI only.

The stand-in Hub's `acme` (tests/fixtures_hub.py `team`, driven by the real huggingface_hub): `writer` (role
write), `reader` (role read) and `outsider` (no role), each on a machine folder Copier rendered, their own
private bucket its store and `acme/team-memory` its team, set up by `agentmem setup` as a person runs it.
Then each does what a member does (save, search, promote, pin, purge, publish and install a skill), every
call a child process of the real helper; the session-start reminder is the hook command setup wired into
Claude Code's settings, run as Claude Code runs it.

INV personal-stays-personal: each member keeps one private note; no other member's output ever holds it.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.fixtures_core import REPO, Machine
from tests.fixtures_hub import TEAM_BUCKET
from tests.template_kit import make_template_repo, render_tasks_skipped

pytestmark = pytest.mark.slow  # Copier renders three machine folders; some forty helper processes


@pytest.fixture(scope="module")
def template_repo(tmp_path_factory):
    return make_template_repo(tmp_path_factory.mktemp("tpl"))


class Member:
    """One person's machine: a rendered machine folder, logged in to the stand-in as `person`. Every
    output it gives is kept (`said`) for the check that no one sees another's personal notes."""

    def __init__(self, root: Path, template_repo: Path, monkeypatch, hub, person):
        folder, _, user = render_tasks_skipped(template_repo, root, monkeypatch, bucket=person.bucket,
                                               team=TEAM_BUCKET, runtimes=["claude"], hooks=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTMEM_", "HF_", "CODEX_", "XDG_"))}
        env |= {"HOME": str(user), "AGENTMEM_HOME": str(folder), "PYTHONPATH": str(REPO), "HF_ENDPOINT": hub.url,
                "HF_TOKEN": person.token, "HF_HOME": str(root / "hf-home"), "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
        self.m = Machine(folder, user, env, child=True)
        self.name, self.token, self.checkout = person.name, person.token, user / "app"
        self.said: list[str] = []
        self.private: str | None = None  # the marker of this member's one personal note nobody else may see

    def run(self, *args: str, stdin: str = "") -> tuple[int, str, str]:
        status, out, err = self.m.run(*args, input=stdin, cwd=self.checkout)
        assert self.token not in out and self.token not in err  # INV no-credentials
        self.said += [out, err]
        return status, out, err

    def json(self, *args: str) -> tuple[int, dict]:
        status, out, err = self.run(*args, "--json")
        try:
            return status, json.loads(out)
        except ValueError:
            raise AssertionError(f"{self.name}: not JSON (status {status}): {out!r} {err!r}") from None

    def save(self, title: str, text: str, *flags: str) -> str:
        status, out = self.json("save", "--title", title, "--text", text, *flags)
        assert status == 0 and out["status"] == "saved", (self.name, out)
        return out["id"]

    def found(self, *words: str) -> list[tuple[str, str, str | None]]:
        """(id, scope, author) of what this member's next search finds."""
        status, out = self.json("search", *words)
        assert status == 0, (self.name, out)
        return [(r["id"], r.get("scope"), r.get("author")) for r in out["results"]]

    def reminder(self) -> str:
        """The session-start reminder, from the very command setup wired into Claude Code's settings."""
        settings = json.loads((self.m.user_home / ".claude" / "settings.json").read_text())
        command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        event = json.dumps({"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup",
                            "cwd": str(self.checkout)})
        done = subprocess.run(shlex.split(command), input=event, cwd=self.checkout, env=self.m.env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (self.name, done.stderr)
        self.said += [done.stdout, done.stderr]
        return done.stdout


def _bucket(hub, bucket: str) -> list[str]:
    return sorted(hub.buckets[bucket].files)


def test_a_team_of_writer_reader_and_outsider_shares_what_it_should_and_nothing_personal(
        template_repo, tmp_path, monkeypatch, hub, team):
    # INV personal-stays-personal, INV team-check-reads
    from tests.skillkit import write_skill

    writer, reader, outsider = (Member(tmp_path / p.name, template_repo, monkeypatch, hub, p)
                                for p in team.members)

    # each machine is set up as a person sets it up; the team line says what this member may do there
    lines = {}
    for member in (writer, reader, outsider):
        status, out, err = member.run("setup")
        assert status == 0 and "Setup verified" in out, (member.name, out, err)
        lines[member.name] = [line for line in out.splitlines() if "team acme/team-memory" in line]
    assert len(lines["writer"]) == 1 and "team acme/team-memory: read and write" in lines["writer"][0]
    assert len(lines["reader"]) == 1 and ("team acme/team-memory: read only: ask an admin of acme for the write role "
                                          "to save to it") in lines["reader"][0]
    assert len(lines["outsider"]) == 1 and ("not found" in lines["outsider"][0] or "no access" in lines["outsider"][0])
    assert _bucket(hub, TEAM_BUCKET) == []  # setup wrote no note into the team's store

    # each keeps one personal note nobody else may ever see
    for member in (writer, reader, outsider):
        member.private = f"zq{member.name}secret"
        member.save(f"{member.name} scratch", f"personal scratch {member.private} about the deploy window")

    # the writer shares a note; the reader's very next search finds it, the team's, by the writer
    shared = writer.save("Deploy window", "the team deploys on tuesday mornings, deploy window", "--team")
    assert [f"projects/app/notes/{shared}.md"] == [p for p in _bucket(hub, TEAM_BUCKET) if "/notes/" in p]
    assert (shared, "team", "writer") in reader.found("deploy", "window")

    # the reader may not share: one line, non-zero, nothing pending, nothing in the team's bucket
    before = _bucket(hub, TEAM_BUCKET)
    status, out, err = reader.run("save", "--team", "--text", "a note the reader may not share")
    assert status != 0 and out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "read only for you" in err and "acme" in err, err
    assert reader.json("pending")[1]["pending"] == [] and _bucket(hub, TEAM_BUCKET) == before

    # the outsider's search is their own notes, and never fails because of the team
    status, out = outsider.json("search", "deploy", "window")
    assert status == 0, out
    assert [(r["scope"], outsider.private in json.dumps(r)) for r in out["results"]] == [("personal", True)]
    status, text, err = outsider.run("search", "deploy", "window")
    assert status == 0 and outsider.private in text, (text, err)

    # the writer promotes a personal note; the reader finds the team's copy
    mine = writer.save("Flaky test", "the integration suite flakes on cold caches; rerun once")
    status, out = writer.json("promote", mine)
    assert status == 0 and out["status"] == "promoted", out
    assert (out["team_note"], "team", "writer") in reader.found("integration", "flakes")

    # the writer pins a team note; the reader's session-start reminder carries it from the reader's next
    # search on (the reminder reads this machine's cache only: no network at a session's start)
    status, out = writer.json("pin", shared, "--team")
    assert status == 0 and out["scope"] == "team", out
    reader.found("anything")
    assert f"[{shared}] Deploy window" in reader.reminder()

    # the writer purges a team note; the reader's next search drops it
    status, out = writer.json("purge", out["note"], "--team", "--yes")
    assert status == 0 and out["status"] == "purged", out
    assert shared not in [i for i, _, _ in reader.found("deploy", "window")]

    # a skill the writer publishes to the team, the reader installs
    source = write_skill(tmp_path / "skills" / "deploy-helper", description="Deploys the app the team's way.")
    status, out = writer.json("publish-skill", str(source), "--team")
    assert status == 0 and out["scope"] == "team", out
    status, out = reader.json("install-skill", "deploy-helper", out["revision"])
    assert status == 0 and out["scope"] == "team", out
    installed = reader.m.user_home / ".claude" / "skills" / "deploy-helper" / "SKILL.md"
    assert "Deploys the app the team's way." in installed.read_text()
    before = _bucket(hub, TEAM_BUCKET)  # the reader may not publish there: the one refusal, nothing kept
    status, out, err = reader.run("publish-skill", str(source), "--team")
    assert status != 0 and out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert err.strip().endswith("team acme/team-memory is read only for you: ask an admin of acme for the write "
                                "role; nothing was published"), err
    assert _bucket(hub, TEAM_BUCKET) == before and reader.json("skills")[1]["pending"] == []

    # nothing personal crossed: over every output each member was given, a search for the words every
    # member's personal note holds the last of them
    members = (writer, reader, outsider)
    for member in members:
        status, out = member.json("search", "personal", "scratch", "--mode", "literal")
        assert status == 0 and [r["title"] for r in out["results"]] == [f"{member.name} scratch"], out
        status, out = member.json("search", "--scope", "all")  # the recent list of both stores
        assert status == 0, out
    for member in members:
        assert any(member.private in said for said in member.said)  # the check can see a private note
        for other in members:
            if other is not member:
                assert not [s for s in member.said if other.private in s], (member.name, other.name)
