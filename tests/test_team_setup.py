"""Setup and doctor with a team store (issue X, items 1 and 8): reach and rights, never a note written there.

Hub: the stand-in's organisation `acme` (tests/fixtures_hub.py `team`): `writer` (role write), `reader`
(role read), `outsider` (no role), each with their own private bucket, driving the real setup
(`setup/runner.run_setup`, as `agentmem setup` calls it) on a machine folder Copier rendered.
Folder: a team folder on a shared drive, writable, read-only, or missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib

import pytest

from agentmem import config
from agentmem.machine import doctor
from agentmem.setup import runner
from agentmem.store import folder as folders
from agentmem.store import whoami
from agentmem.store.bucket import BucketStore
from tests.fixtures_core import missing_prerequisite
from tests.fixtures_team import read_only
from tests.template_kit import make_template_repo, render_tasks_skipped

TEAM_NOTE = "projects/app/notes/team-note-0001.md"


@pytest.fixture(scope="module")
def template_repo(tmp_path_factory):
    return make_template_repo(tmp_path_factory.mktemp("tpl"))


def _team_files(hub, bucket):
    return {p: (f.size, f.xet_hash) for p, f in hub.buckets[bucket].files.items()}


def _writes_to(hub, bucket):
    """Requests that write to `bucket`, or ask for the right to (xet write token)."""
    return [r for r in hub.log if bucket in r.path and (r.route in ("batch", "create", "settings", "delete")
                                                       or r.path.endswith("xet-write-token"))]


@pytest.fixture
def hub_team(hub, team, monkeypatch):
    """The `acme` team bucket holding one note the writer saved there before."""
    monkeypatch.setenv("HF_TOKEN", team.writer.token)
    BucketStore(team.bucket, timeout=10).put(TEAM_NOTE, b"---\ntitle: From the team\n---\nshared\n")
    monkeypatch.delenv("HF_TOKEN")
    hub.clear_log()
    return team


def _member_machine(template_repo, tmp_path, monkeypatch, member, team_answer="acme/team-memory"):
    """A machine folder of `member` (logged in), their own bucket its store and `team_answer` its team."""
    folder, _, _ = render_tasks_skipped(template_repo, tmp_path, monkeypatch, bucket=member.bucket, team=team_answer)
    monkeypatch.setenv("HF_TOKEN", member.token)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    return folder


def _step(report, name="team"):
    found = [s for s in report.steps if s.name == name]
    return found[0] if found else None


def test_a_writer_is_told_the_team_store_reads_and_writes_and_nothing_is_written_there(
        template_repo, tmp_path, monkeypatch, hub, hub_team):
    # INV team-check-reads
    before = _team_files(hub, hub_team.bucket)
    folder = _member_machine(template_repo, tmp_path, monkeypatch, hub_team.writer)
    report = runner.run_setup(folder)
    assert report.outcome == "confirmed", report.text()
    step = _step(report)
    assert step.status == "ok" and step.detail.startswith("team acme/team-memory: read and write"), step
    assert "1 object(s) of project app" in step.detail  # it read the project's prefix
    assert report.to_dict()["team"]["access"] == "read and write"
    assert _team_files(hub, hub_team.bucket) == before and _writes_to(hub, hub_team.bucket) == []
    assert whoami.cached_name(folder) == "writer"  # author stamps have the Hub user name


def test_a_reader_is_told_to_ask_an_admin_for_the_write_role_and_setup_still_verifies(
        template_repo, tmp_path, monkeypatch, hub, hub_team):
    # INV team-check-reads
    before = _team_files(hub, hub_team.bucket)
    folder = _member_machine(template_repo, tmp_path, monkeypatch, hub_team.reader)
    report = runner.run_setup(folder)
    assert report.outcome == "confirmed", report.text()
    step = _step(report)
    assert step.status == "warning"
    assert step.detail == "team acme/team-memory: read only: ask an admin of acme for the write role to save to it"
    assert "Needs attention: team" in report.text()
    assert "leaves this verdict and the exit status as they are: they are your personal setup's" in report.text()
    assert report.to_dict()["team"]["access"] == "read only"
    assert _team_files(hub, hub_team.bucket) == before and _writes_to(hub, hub_team.bucket) == []


def test_an_outsider_gets_one_line_naming_the_team_store_and_who_grants_access_and_the_personal_setup_completes(
        template_repo, tmp_path, monkeypatch, hub, hub_team):
    # INV team-check-reads
    folder = _member_machine(template_repo, tmp_path, monkeypatch, hub_team.outsider)
    report = runner.run_setup(folder)
    assert report.outcome == "confirmed", report.text()  # the personal setup's verdict stands
    step = _step(report)
    assert step.status == "failed"
    assert step.detail.startswith("team acme/team-memory: not found: it does not exist or you (outsider) are "
                                  "not a member of acme; ask an admin of acme to add outsider"), step.detail
    assert "\n" not in step.detail
    assert [s.name for s in report.steps if s.status == "failed"] == ["team"]
    assert "Setup verified" in report.text()
    assert any(p.startswith("projects/app/") for p in hub.buckets[hub_team.outsider.bucket].files)  # own store used


def test_a_team_bucket_the_organisation_lacks_is_named_as_missing_for_a_member(
        template_repo, tmp_path, monkeypatch, hub, team):
    # INV team-check-reads
    folder = _member_machine(template_repo, tmp_path, monkeypatch, team.writer, team_answer="acme/nothing-here")
    report = runner.run_setup(folder)
    assert report.outcome == "confirmed"
    step = _step(report)
    assert step.status == "failed" and "team acme/nothing-here: not found: acme has no bucket" in step.detail
    assert "ask an admin of acme to create the private bucket acme/nothing-here" in step.detail
    assert "acme/nothing-here" not in hub.buckets  # setup never creates a team bucket


def test_setups_exit_status_and_json_are_the_personal_setups_when_the_team_is_out_of_reach(
        template_repo, tmp_path, monkeypatch, hub, hub_team):
    # INV team-check-reads
    folder = _member_machine(template_repo, tmp_path, monkeypatch, hub_team.outsider)
    env = dict(os.environ, AGENTMEM_HOME=str(folder), PYTHONPATH=os.getcwd())
    done = subprocess.run([sys.executable, "-m", "agentmem", "setup", "--json"], env=env, cwd=folder.parent / "app",
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    out = json.loads(done.stdout)
    assert out["status"] == "confirmed"
    [step] = [s for s in out["steps"] if s["name"] == "team"]
    assert step["status"] == "failed" and out["team"]["access"] == "not found"
    assert hub_team.outsider.token not in done.stdout + done.stderr  # INV no-credentials


def test_doctor_checks_the_team_store_and_says_what_fixes_it(template_repo, tmp_path, monkeypatch, hub, hub_team):
    folder = _member_machine(template_repo, tmp_path, monkeypatch, hub_team.writer)
    cfg = config.load(folder)
    [writer] = [c for c in doctor.run(str(folder), cfg, timeout=10) if c.name == "team"]
    assert (writer.status, writer.detail) == ("ok", "team acme/team-memory: read and write (1 object(s) of project "
                                              "app there)")
    monkeypatch.setenv("HF_TOKEN", hub_team.reader.token)
    reader = doctor.team_check(str(folder), cfg, 10)
    assert reader.status == "warning" and reader.fix == "ask an admin of acme for the write role to save to it"
    assert reader.to_json()["status"] == "warn"
    monkeypatch.setenv("HF_TOKEN", hub_team.outsider.token)
    outsider = doctor.team_check(str(folder), cfg, 10)
    assert outsider.status == "failed" and outsider.fix.startswith("ask an admin of acme to add outsider")
    assert doctor.broken([outsider])
    assert _writes_to(hub, hub_team.bucket) == []


def test_without_a_team_setup_and_doctor_have_no_team_step(template_repo, tmp_path, monkeypatch, hub, team):
    folder = _member_machine(template_repo, tmp_path, monkeypatch, team.writer, team_answer="")
    report = runner.run_setup(folder)
    assert report.outcome == "confirmed" and _step(report) is None and "team" not in report.to_dict()
    assert not [line for line in report.text().splitlines() if line.startswith("team")]
    assert "team step" not in report.text()
    assert doctor.team_check(str(folder), config.load(folder), 10) is None
    assert whoami.cached_name(folder) == "writer"  # the personal bucket's user, recorded by setup


# -- a team folder on a shared drive ---------------------------------------------------------------


def _folder_machine(template_repo, tmp_path, monkeypatch, team_root):
    folder, store, _ = render_tasks_skipped(template_repo, tmp_path, monkeypatch, team=str(team_root))
    return folder, store


def _tree(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _shared_team_folder(tmp_path):
    """The team's folder as whoever shares it made it: marked, one note of project app in it."""
    root = tmp_path / "shared" / "team"
    folders.create_store(str(root))
    note = root / "projects" / "app" / "notes" / "team-note-0001.md"
    note.parent.mkdir(parents=True)
    note.write_text("---\ntitle: From the team\n---\nshared\n")
    return root


def test_a_writable_team_folder_is_read_and_write_and_left_as_it_was(template_repo, tmp_path, monkeypatch):
    # INV team-check-reads
    root = _shared_team_folder(tmp_path)
    before = _tree(root)
    folder, _ = _folder_machine(template_repo, tmp_path, monkeypatch, root)
    report = runner.run_setup(folder)
    assert report.outcome == "confirmed", report.text()
    step = _step(report)
    assert (step.status, step.detail) == ("ok", f"team {root}: read and write (1 object(s) of project app there)")
    assert _tree(root) == before
    assert runner.run_setup(folder).outcome == "confirmed" and _tree(root) == before  # INV setup-rerun


def test_an_unmarked_team_folder_a_writer_sets_up_gets_its_marker_and_no_note(template_repo, tmp_path, monkeypatch):
    root = tmp_path / "shared" / "team"
    root.mkdir(parents=True)
    folder, _ = _folder_machine(template_repo, tmp_path, monkeypatch, root)
    step = _step(runner.run_setup(folder))
    assert step.status == "ok" and step.detail.endswith("marked it as an agentmem store")
    assert [p.name for p in root.iterdir()] == [folders.MARKER]


def test_a_missing_team_folder_is_not_found_and_not_created(template_repo, tmp_path, monkeypatch):
    # INV team-check-reads
    root = tmp_path / "shared" / "team"
    folder, store = _folder_machine(template_repo, tmp_path, monkeypatch, root)
    report = runner.run_setup(folder)
    assert report.outcome == "confirmed", report.text()
    step = _step(report)
    assert step.status == "failed" and step.detail.startswith(f"team {root}: not found: the folder does not exist")
    assert not root.exists() and not root.parent.exists()
    check = doctor.team_check(str(folder), config.load(folder), 5)
    assert check.status == "failed" and check.fix


def test_a_team_folder_this_machine_used_that_is_gone_is_never_taken_for_an_empty_one(
        template_repo, tmp_path, monkeypatch):
    # INV store-identity
    root = _shared_team_folder(tmp_path)
    folder, _ = _folder_machine(template_repo, tmp_path, monkeypatch, root)
    assert _step(runner.run_setup(folder)).status == "ok"
    shutil.rmtree(root)
    root.mkdir()  # an empty mount point where the drive was
    step = _step(runner.run_setup(folder))
    assert step.status == "failed" and "marker" in step.detail and "setup --new-store" in step.detail
    assert list(root.iterdir()) == []  # not marked as a new store
    step = _step(runner.run_setup(folder, new_store=True))
    assert step.status == "ok"


def _setup_with_read_only(folder, root, cwd):
    """`agentmem setup --json` in a child with `root` read-only: chmod 555 for a user; for root (who
    writes through permission bits) a read-only bind mount in a private mount namespace."""
    argv = [sys.executable, "-m", "agentmem", "setup", "--json"]
    env = dict(os.environ, AGENTMEM_HOME=str(folder), PYTHONPATH=os.getcwd())
    if os.geteuid() == 0:
        if shutil.which("unshare") is None:
            missing_prerequisite("unshare (util-linux) makes a read-only folder for root")
        argv = ["unshare", "-m", "sh", "-c", 'mount --bind -o ro "$0" "$0" && exec "$@"', str(root), *argv]
        done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
        if "mount:" in done.stderr and done.returncode:
            missing_prerequisite(f"a read-only bind mount: {done.stderr.strip()}")
        return done
    with read_only(root, *[p for p in root.rglob("*") if p.is_dir()]):
        return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_a_read_only_team_folder_is_read_only_and_setup_still_verifies(template_repo, tmp_path, monkeypatch):
    # INV team-check-reads
    root = _shared_team_folder(tmp_path)
    before = _tree(root)
    folder, _ = _folder_machine(template_repo, tmp_path, monkeypatch, root)
    done = _setup_with_read_only(folder, root, folder.parent / "app")
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    out = json.loads(done.stdout)
    assert out["status"] == "confirmed" and out["team"]["access"] == "read only"
    [step] = [s for s in out["steps"] if s["name"] == "team"]
    assert step["status"] == "warning"
    assert step["detail"].startswith(f"team {root}: read only: ask its owner (") and "for write permission" in \
        step["detail"]
    assert _tree(root) == before


@pytest.mark.slow  # a copier update (README's way to add a team to a machine set up without one)
def test_a_machine_gains_its_team_through_upgrade_data_team_and_its_setup_reports_the_team_line(
        copied_laptop, tmp_path):
    m = copied_laptop.m
    root = _shared_team_folder(tmp_path)
    before = _tree(root)
    proc = m.run("upgrade", "--data", f"team={root}")
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-3000:])
    assert tomllib.loads((m.folder / "config.toml").read_text())["team"] == {"kind": "folder", "location": str(root)}
    assert f"team: ok - team {root}: read and write" in proc.stdout, proc.stdout[-3000:]
    assert _tree(root) == before
    doctor_out = json.loads(m.run("doctor", "--json").stdout)
    assert [c["status"] for c in doctor_out["checks"] if c["name"] == "team"] == ["ok"]
