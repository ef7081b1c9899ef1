"""Team hygiene and team skills (issue X, items 6 and 7): retract, pin, unpin, purge and review on the
team's store, and skills published there, reaching every member.

Two machines, A (a writer) and B, each with its own personal folder store, share one team folder store;
each runs the real CLI: a team note is saved with `save --team`, and what B's next search sees of the team's
store is the team-scoped results of B's `search`. The Hub's read-only refusal runs the real client against
the stand-in's `acme`.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.fixtures_core import make_machine, new_folder_store
from tests.fixtures_team import Team, read_only, read_only_member


@pytest.fixture
def team(tmp_path):
    return Team(tmp_path)


def test_a_writers_retraction_of_a_team_note_hides_it_from_the_other_members_next_search(team):
    note = team.save_team("a", "Deploy window", "the deploy window is tuesday mornings")
    assert team.team_search("b", "deploy", "window") == [note]
    status, out = team.json("a", "retract", note, "--team", "--reason", "moved to thursdays")
    assert status == 0 and out["status"] == "saved" and out["scope"] == "team", out
    assert any(p.endswith(".retract.json") for p in team.team_objects())
    assert not (team.own["a"] / "projects").exists() or not list((team.own["a"] / "projects").rglob("*.json"))
    assert team.team_search("b", "deploy", "window") == []


def test_without_team_an_id_only_the_team_store_holds_here_is_acted_on_there_and_said_so(team):
    note = team.save_team("a", "Cache key", "the cache key includes the lockfile hash")
    assert team.team_search("a", "cache", "key") == [note]  # A's team cache holds it
    status, text, err = team.run("a", "retract", note, "--reason", "no longer true")
    assert status == 0, err
    assert f"retracted team note {note}" in text and "team's shared memory" in text
    assert team.team_search("b", "cache", "key") == []


def test_a_team_pin_reaches_the_other_members_session_start_reminder_and_unpin_takes_it_back(team):
    note = team.save_team("a", "Release checklist", "run the smoke tests before tagging a release")
    status, out = team.json("a", "pin", note, "--team")
    assert status == 0 and out["kind"] == "pin" and out["scope"] == "team", out
    team.team_search("b", "release")  # B's next search brings the pin record
    assert f"[{note}] Release checklist" in team.reminder("b")
    status, out = team.json("a", "unpin", note, "--team")
    assert status == 0 and out["kind"] == "unpin", out
    team.team_search("b", "release")
    assert note not in team.reminder("b") and "Pinned memory" not in team.reminder("b")


def test_a_writers_purge_of_a_team_note_reaches_every_member(team):
    note = team.save_team("a", "Leaked", "an internal hostname that must not be shared")
    assert team.team_search("b", "internal", "hostname") == [note]
    status, out, err = team.run("a", "purge", note, "--team")  # no terminal to ask on: refused, saying what
    line = err.strip()
    assert status == 2 and len(line.splitlines()) == 1 and "from the team's shared store" in line, err
    assert line.split("`")[1].endswith(f"purge {note} --project app --team --yes")
    status, out = team.json("a", "purge", note, "--team", "--yes")
    assert status == 0 and out["status"] == "purged" and out["deleted_from_store"] is True, out
    assert out["scope"] == "team"
    assert not (team.team / "projects" / "app" / "notes" / f"{note}.md").exists()
    assert team.team_search("b", "internal", "hostname") == []
    cache = team.machines["b"].home / "cache"
    assert not [p for p in cache.rglob(f"{note}.md")]  # gone from B's machine too


def test_review_lists_both_scopes_items_and_the_team_items_commands_carry_team(team):
    note = team.save_team("a", "Old fact", "this was true once")
    assert team.json("a", "retract", note, "--team", "--reason", "stale")[0] == 0
    status, out = team.json("b", "review")
    assert status == 0, out
    items = [(i["kind"], i["notes"], i["scope"]) for i in out["items"]]
    assert items == [("retracted", [note], "team")]
    purge = [c for c in out["items"][0]["commands"] if c["argv"][0] == "purge"][0]
    assert purge["argv"][-1] == "--team" and "--team" in purge["command"]
    status, out = team.json("b", "review", "--team")
    assert [i["notes"] for i in out["items"]] == [[note]]


def test_a_machine_without_a_team_refuses_team_in_one_line(tmp_path):
    store = tmp_path / "own"
    new_folder_store(store)
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = make_machine(tmp_path, "solo", store, {checkout: "app"})
    status, out, err = m.run("pin", "20261130T091512345Z-k3m9x2pa", "--team", cwd=checkout)
    assert status != 0 and out == "" and len(err.strip().splitlines()) == 1 and "no team store" in err, err


def test_a_member_who_may_only_read_a_team_folder_is_refused_in_one_line_and_nothing_is_left(team):
    note = team.save_team("a", "Shared", "a team note already there")
    assert team.team_search("b", "team", "note") == [note]
    read_only_member(team.machines["b"])
    before = team.team_objects()
    folders = [team.team / "projects" / "app", *[p for p in (team.team / "projects" / "app").iterdir() if p.is_dir()]]
    with read_only(*folders):
        for args, done in ((("retract", note, "--reason", "nope"), "retracted"), (("pin", note), "pinned"),
                           (("purge", note, "--yes"), "purged")):
            status, out, err = team.run("b", *args, "--team")
            line = err.strip()
            assert status == 6 and out == "" and len(line.splitlines()) == 1 and "Traceback" not in err, (args, err)
            assert f"team {team.team} is read only for you" in line and f"nothing was {done}" in line, line
            assert team.pending("b") == []
        assert team.team_objects() == before
        assert team.team_search("b", "team", "note") == [note]  # still there, still found


def test_every_team_write_of_a_member_with_the_read_role_is_refused_in_the_same_one_line_with_nothing_pending(
        tmp_path, hub):
    # the Hub's own rights decide: its 403 on the upload is the refusal (memory/team_writes.py); save --team,
    # promote, retract, pin, purge and import --team --apply all say it the same way and leave nothing
    from tests.fixtures_hub import TEAM_BUCKET, BucketMachine
    from tests.fixtures_hub import Team as HubTeam

    org = HubTeam(hub)
    writer = BucketMachine(tmp_path / "writer", hub, org.writer.token, bucket=TEAM_BUCKET)  # the team's store
    done = writer.run("save", "--title", "Shared", "--text", "a note the writer shares", "--json")
    assert done.returncode == 0, done.stderr
    note = json.loads(done.stdout)["id"]
    reader = BucketMachine(tmp_path / "reader", hub, org.reader.token, bucket=org.reader.bucket)
    with open(reader.home / "config.toml", "a", encoding="utf-8") as f:
        f.write(f'\n[team]\nkind = "bucket"\nlocation = "{TEAM_BUCKET}"\n')
    done = reader.run("save", "--title", "Mine", "--text", "a finding of the reader's own", "--json")
    assert done.returncode == 0, done.stderr
    mine = json.loads(done.stdout)["id"]
    elsewhere = Team(tmp_path / "elsewhere")  # an export holding a team note the team's bucket lacks
    elsewhere.save_team("a", "Carried", "a team note from another team's export")
    export = tmp_path / "export"
    assert elsewhere.json("a", "export", str(export))[0] == 0
    before = sorted(hub.buckets[TEAM_BUCKET].files)
    for args, did in ((("save", "--team", "--text", "a note the reader may not share"), "saved"),
                      (("promote", mine), "promoted"),
                      (("retract", note, "--team", "--reason", "nope"), "retracted"), (("pin", note, "--team"), "pinned"),
                      (("purge", note, "--team", "--yes"), "purged"),
                      (("import", "--from", "agentmem", str(export), "--team", "--apply"), "imported")):
        done = reader.run(*args)
        line = done.stderr.strip()
        assert done.returncode == 6 and done.stdout == "" and len(line.splitlines()) == 1, (args, done.stderr)
        assert line.endswith(f"team {TEAM_BUCKET} is read only for you: ask an admin of acme for the write role; "
                             f"nothing was {did}"), line
        listed = json.loads(reader.run("pending", "--json").stdout)
        assert listed["pending"] == [], args
    assert sorted(hub.buckets[TEAM_BUCKET].files) == before
    done = writer.run("retract", note, "--reason", "the writer may", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["status"] == "saved", done.stderr


def test_a_skill_published_to_the_team_is_discovered_and_installed_by_the_other_member(team):
    from tests.skillkit import write_skill

    source = team.root / "skills-src" / "deploy-helper"
    write_skill(source, description="Deploys the app the team's way.")
    status, out = team.json("a", "publish-skill", str(source), "--team")
    assert status == 0 and out["status"] == "published" and out["scope"] == "team", out
    revision = out["revision"]
    assert (team.team / "skills" / "deploy-helper" / revision / "SKILL.md").is_file()
    assert not (team.own["a"] / "skills").exists()  # never into the member's own store
    status, out = team.json("b", "skills")
    assert status == 0, out
    assert [(s["name"], s["scope"], [r["revision"] for r in s["revisions"]]) for s in out["skills"]] == [
        ("deploy-helper", "team", [revision])]
    status, text, _ = team.run("b", "skills")
    assert "deploy-helper  [team]" in text
    status, out = team.json("b", "read-skill", "deploy-helper", revision)
    assert status == 0 and out["scope"] == "team" and "Deploys the app" in out["content"], out
    with open(team.machines["b"].home / "config.toml", "a", encoding="utf-8") as f:
        f.write('\n[runtimes]\nenabled = ["claude"]\n')
    status, out = team.json("b", "install-skill", "deploy-helper", revision)
    assert status == 0 and out["scope"] == "team", out
    installed = team.machines["b"].user_home / ".claude" / "skills" / "deploy-helper" / "SKILL.md"
    assert "Deploys the app" in installed.read_text()
    status, out, err = team.run("b", "install-skill", "deploy-helper", "20990101T000000Z-nope0000")
    assert status != 0 and len(err.strip().splitlines()) == 1 and "no published revision" in err, err


def test_the_view_shows_team_notes_marked_beside_the_members_own_and_their_commands_carry_team(team):
    import shlex
    import subprocess

    from agentmem.view import commands
    from tests.test_view import by_id, page_data

    shared = team.save_team("a", "Team fact", "the staging database is reset nightly")
    status, out = team.json("b", "save", "--title", "My fact", "--text", "my own scratch note")
    assert status == 0, out
    mine = out["id"]
    m = team.machines["b"]
    status, out = team.json("b", "view")
    assert status == 0, out
    html = m.home / "view" / "index.html"
    shown = by_id(html)
    assert shown[shared]["project"] == shown[mine]["project"] == "app"
    assert shown[shared]["state_codes"] == ["team"] and shown[mine]["state_codes"] == []
    assert [s["name"] for s in shown[shared]["states"]] == ["team"]
    data = page_data(html.read_bytes())
    assert data["store"]["team"] == str(team.team) and data["projects"][0]["notes"] == 2
    given = data["commands"]["app"]
    assert "--team" not in given["lines"]["pin"] and "--team" in given["team"]["lines"]["pin"]
    line = commands.for_note(given["team"]["lines"]["pin"], shared)
    done = subprocess.run(shlex.split(line), cwd=m.user_home, env=m.env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and f"pinned team note {shared}" in done.stdout, done.stderr
    team.json("b", "view")
    assert by_id(html)[shared]["state_codes"] == ["team", "pinned"]


def test_an_export_keeps_each_notes_scope_and_an_import_puts_team_notes_back_only_with_team(team, tmp_path):
    shared = team.save_team("a", "Team fact", "the staging database is reset nightly")
    assert team.json("a", "retract", shared, "--team", "--reason", "no longer nightly")[0] == 0
    status, out = team.json("a", "save", "--title", "Mine", "--text", "my own scratch note")
    mine = out["id"]
    dest = tmp_path / "export"
    status, out = team.json("a", "export", str(dest))
    assert status == 0 and out["projects"] == {"app": 1} and out["team_projects"] == {"app": 1}, out
    assert (dest / "app" / f"{mine}.md").is_file() and (dest / "@team" / "app" / f"{shared}.md").is_file()
    assert (dest / "@team" / "app" / "index.md").is_file()
    manifest = json.loads((dest / "manifest.json").read_text())
    assert {(n["id"], n.get("scope")) for n in manifest["notes"]} == {(mine, None), (shared, "team")}
    assert [(r["kind"], r["scope"]) for r in manifest["records"]] == [("retract", "team")]
    assert team.json("a", "export", str(dest))[1]["written"] == 0  # a rerun changes nothing

    # another member's machine, with stores of its own: both empty
    other = Team(tmp_path / "elsewhere")
    status, out = other.json("b", "import", "--from", "agentmem", str(dest), "--apply")
    assert status == 0, out  # the team's notes and records are left for their own import, not refused
    assert out["counts"] == {"save": 1, "present": 0, "refused": 0}, out
    assert [i["id"] for i in out["items"]] == [mine]  # the team's record stays out of the member's store
    assert out["other_scope"] == {"scope": "team", "notes": 1, "records": 1}
    assert [s["argv"] for s in out["next"]] == [["import", "--from", "agentmem", str(dest), "--team"]]
    assert not (other.team / "projects").exists()  # nothing personal reached the team store
    status, out = other.json("b", "import", "--from", "agentmem", str(dest), "--team", "--apply")
    assert status == 0, out  # the member's own note is left for the import without --team
    assert [(i["action"], i["id"], i.get("kind")) for i in out["items"]] == [
        ("save", shared, None), ("save", out["items"][1]["id"], "retract")], out
    assert out["other_scope"] == {"scope": "personal", "notes": 1, "records": 0}
    assert [s["argv"] for s in out["next"]] == [["import", "--from", "agentmem", str(dest)]]
    assert (other.team / "projects" / "app" / "notes" / f"{shared}.md").is_file()
    assert not (other.own["b"] / "projects" / "app" / "notes" / f"{shared}.md").exists()
    assert any(p.endswith(".retract.json") for p in other.team_objects())
    status, out = other.json("b", "import", "--from", "agentmem", str(dest), "--team")
    assert status == 0 and out["counts"] == {"save": 0, "present": 2, "refused": 0}, out  # idempotent
    status, out, err = other.run("b", "import", "--from", "codex", "--team")
    assert status != 0 and len(err.strip().splitlines()) == 1 and "your own" in err, err


def test_a_members_export_imported_on_a_fresh_machine_brings_each_scope_by_its_own_import_run_as_printed(team, tmp_path):
    # INV personal-stays-personal, INV printed-commands-run
    shared = team.save_team("a", "Team fact", "the staging database is reset nightly")
    assert team.json("a", "pin", shared, "--team")[0] == 0
    mine = team.save("a", "Mine", "my own scratch note")
    dest = tmp_path / "export"
    assert team.json("a", "export", str(dest))[0] == 0
    fresh = Team(tmp_path / "fresh")  # a member's new machine: own store and team store both empty
    status, text, err = fresh.run("b", "import", "--from", "agentmem", str(dest), "--apply")
    assert status == 0, (text, err)  # nothing refused: the team's note and record are left, said once
    assert "refused 0" in text and "refused 0 item" not in text and text.count("left ") == 1, text
    (line,) = [ln for ln in text.splitlines() if ln.startswith("left ")]
    assert line.startswith("left 1 team note(s) and 1 record(s) for their own import: `"), line
    command = line.split("`")[1]
    assert (fresh.own["b"] / "projects" / "app" / "notes" / f"{mine}.md").is_file()
    assert not (fresh.team / "projects").exists()  # the team's store untouched by the member's own import
    runs = [subprocess.run(["bash", "-c", line], cwd=fresh.checkout, env=fresh.machines["b"].env,
                           capture_output=True, text=True, timeout=120) for line in (command, command + " --apply")]
    assert [r.returncode for r in runs] == [0, 0], [(r.stdout, r.stderr) for r in runs]  # as printed, then applied
    assert "would save 2, already present 0, refused 0" in runs[0].stdout, runs[0].stdout
    assert "left 1 personal note(s) and 0 record(s) for their own import" in runs[1].stdout, runs[1].stdout
    assert [p.name for p in (fresh.team / "projects" / "app" / "notes").glob("*.md")] == [f"{shared}.md"]
    assert [p for p in fresh.team_objects() if p.endswith(".pin.json")]
    assert [p.name for p in (fresh.own["b"] / "projects" / "app" / "notes").glob("*.md")] == [f"{mine}.md"]
    assert not list((fresh.own["b"] / "projects" / "app").rglob("*.pin.json"))
    from tests.test_json_contract import check_shape

    out = check_shape("import", *fresh.run("b", "import", "--from", "agentmem", str(dest), "--json")[:2])
    assert out["other_scope"] == {"scope": "team", "notes": 1, "records": 1} and out["next"][0]["command"] == command
