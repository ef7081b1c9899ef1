"""Search, read and save across a member's own store and the team's (issue X, items 2 and 3).

Two machines, A and B, each with its own personal folder store, share one team folder store; each runs
the real CLI. A machine without a team answers exactly as before (the rest of the suite).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.fixtures_core import make_machine, new_folder_store
from tests.fixtures_team import BucketTeam, Team, read_only, read_only_member


@pytest.fixture
def team(tmp_path):
    return Team(tmp_path)


def _ids(out: dict) -> list[str]:
    return [r["id"] for r in out["results"]]


def _notes_in(store: Path) -> list[str]:
    folder = store / "projects" / "app" / "notes"
    return sorted(os.listdir(folder)) if folder.exists() else []


def test_a_team_note_is_found_in_another_members_very_next_search_and_a_personal_note_never(team):
    # INV personal-stays-personal: only what was saved to the team reaches the other member
    shared = team.save("a", "Deploy cadence", "the deploy window is tuesday mornings", "--team")
    private = team.save("a", "Deploy notes of mine", "my own deploy window scratch")
    assert _notes_in(team.team) == [f"{shared}.md"]  # the personal note stayed in A's own store
    status, out = team.json("b", "search", "deploy", "window")
    assert status == 0, out
    assert _ids(out) == [shared] and out["results"][0]["scope"] == "team"
    assert private not in json.dumps(out)
    assert [s["scope"] for s in out["scopes"]] == ["personal", "team"] and not out["stale"]
    assert out["scopes"][1]["store"] == str(team.team) and out["scopes"][1]["results"] == 1
    status, text, _ = team.run("b", "search", "deploy", "window")
    assert status == 0 and "[team] Deploy cadence" in text
    # A sees both, each with its scope
    status, out = team.json("a", "search", "deploy", "window")
    assert {r["id"]: r["scope"] for r in out["results"]} == {shared: "team", private: "personal"}


def test_scope_limits_a_search_to_one_store(team):
    shared = team.save("a", "Cache keys", "cache keys carry the schema version", "--team")
    own = team.save("a", "Cache notes", "cache keys of my experiment")
    assert _ids(team.json("a", "search", "cache", "keys", "--scope", "team")[1]) == [shared]
    assert _ids(team.json("a", "search", "cache", "keys", "--scope", "personal")[1]) == [own]
    status, out = team.json("a", "search", "cache", "keys", "--scope", "personal")
    assert [s["scope"] for s in out["scopes"]] == ["personal"]
    listed = team.json("a", "search", "--scope", "all", "--mode", "literal", "cache")[1]
    assert sorted(_ids(listed)) == sorted([shared, own])


def test_the_recent_list_merges_both_stores_newest_first(team):
    first = team.save("a", "First", "one", "--team")
    second = team.save("a", "Second", "two")
    third = team.save("a", "Third", "three", "--team")
    status, out = team.json("a", "search", "--limit", "2")
    assert status == 0 and _ids(out) == [third, second] and out["more"] == 1
    assert _ids(team.json("a", "search", "--limit", "5")[1]) == [third, second, first]


def test_a_team_store_out_of_reach_never_hides_the_members_own_notes(team):
    # INV personal-stays-personal, INV read-your-writes: the store that could not be asked is said to be stale
    own = team.save("b", "Flaky test", "the flaky test needs a retry budget")
    team.save("a", "Flaky team", "flaky test owners rotate weekly", "--team")
    team.team.rename(team.root / "team-store-away")  # the shared folder unmounted
    status, out = team.json("b", "search", "flaky", "test")
    assert status == 0 and _ids(out) == [own]
    assert out["stale"] and f"the team store {team.team}" in out["stale_reason"]
    personal, shared = out["scopes"]
    assert not personal["stale"] and shared["stale"] and shared["stale_error"] in ("offline", "not-found")
    status, text, _ = team.run("b", "search", "flaky", "test")
    assert status == 0 and "Flaky test" in text and "may be stale - the team store" in text


def test_a_team_folder_out_of_reach_is_never_answered_with_setup_new_store_which_cannot_create_it(team):
    # setup never creates a team's folder (machine/team_access.py): `setup --new-store` would change nothing
    # there, and accept whatever is at the member's own store's location; the member's own store keeps it
    team.save("a", "Flaky team", "flaky test owners rotate weekly", "--team")
    assert team.team_search("b", "flaky") != []
    team.team.rename(team.root / "team-store-away")
    status, out = team.json("b", "search", "flaky", "test")
    assert status == 0 and "the drive or share that holds it" in out["stale_reason"], out
    status, text, err = team.run("b", "search", "flaky", "test")
    status, saved = team.json("b", "save", "--team", "--text", "a team note while the share is away")
    assert status == 10 and "the drive or share that holds it" in saved["reason"]["message"], saved
    status, read, read_err = team.run("b", "read", team.team_search("b", "flaky")[0])
    for said in (out["stale_reason"], text + err, saved["reason"]["message"], read + read_err):
        assert "--new-store" not in said, said
    team.own["b"].rename(team.root / "own-b-away")  # the member's own folder: setup --new-store makes a new one
    status, out = team.json("b", "search", "flaky", "test", "--scope", "personal")
    assert "setup --new-store" in out["stale_reason"], out


def test_a_personal_store_out_of_reach_never_hides_the_teams_notes(team):
    shared = team.save("a", "Release train", "the release train leaves on fridays", "--team")
    team.own["b"].rename(team.root / "own-b-away")
    status, out = team.json("b", "search", "release", "train")
    assert status == 0 and _ids(out) == [shared] and out["results"][0]["scope"] == "team"
    assert out["stale"] and out["stale_reason"].startswith(f"the personal store {team.own['b']}")
    assert [s["stale"] for s in out["scopes"]] == [True, False]


def test_read_looks_in_the_members_own_store_then_the_teams(team):
    shared = team.save("a", "Schema", "the schema lives in db/schema.sql", "--team")
    own = team.save("b", "Mine", "my own note")
    status, out = team.json("b", "read", shared)
    assert status == 0 and out["scope"] == "team" and "db/schema.sql" in out["body"]
    status, text, _ = team.run("b", "read", shared)
    assert status == 0 and "is a team note" in text
    assert team.json("b", "read", own)[1]["scope"] == "personal"
    status, out = team.json("b", "read", shared, "--scope", "personal")
    assert status == 4 and out["error"] == "not-found"
    status, out = team.json("b", "read", own, "--scope", "team")
    assert status == 4 and out["error"] == "not-found"


def test_reading_a_note_with_the_other_stores_scope_says_which_store_holds_it_and_how_to_read_it(team):
    # not "a note of another project": the note is in this project, in the member's other store
    shared = team.save("a", "Schema", "the schema lives in db/schema.sql", "--team")
    own = team.save("b", "Mine", "my own note")
    assert team.team_search("b", "schema") == [shared]
    for note, scope, said, other in ((shared, "personal", "your own store", "a team note"),
                                     (own, "team", "the team's store", "one of your own notes")):
        status, out, err = team.run("b", "read", note, "--scope", scope)
        line = err.strip()
        assert status == 4 and out == "" and len(line.splitlines()) == 1, err
        assert f"note {note} is not in {said} of project app: it is {other}" in line, line
        assert "another project" not in line, line
        command = line.split("`")[1]  # the command it names runs as printed
        assert command.endswith(f"read {note} --scope {'team' if scope == 'personal' else 'personal'} --project app")
        status, found = team.json("b", *command.split()[1:])
        assert status == 0 and found["id"] == note, found


def test_acting_on_a_members_own_note_with_team_says_it_is_their_own_and_writes_nothing(team):
    own = team.save("b", "Mine", "my own note")
    before = team.team_objects()
    for args in (("pin", own), ("unpin", own), ("retract", own, "--reason", "old"), ("purge", own, "--yes")):
        status, out, err = team.run("b", *args, "--team")
        line = err.strip()
        assert status == 4 and out == "" and len(line.splitlines()) == 1 and "Traceback" not in err, (args, err)
        assert f"note {own} is not in the team's store of project app: it is one of your own notes" in line, line
        assert "without --team" in line and "another project" not in line, line
    assert team.team_objects() == before and team.pending("b") == []
    assert team.json("b", "read", own)[1]["scope"] == "personal"  # still there, untouched


def test_a_team_note_pending_upload_is_searched_and_read_as_the_teams(team):
    # INV personal-stays-personal: a pending note shows in the scope of the store it is bound for, only
    team.team.rename(team.root / "team-store-away")
    status, out = team.json("a", "save", "--team", "--title", "Waiting", "--text", "a queued team finding")
    assert status == 10 and out["scope"] == "team" and out["store"]["location"] == str(team.team)
    note = out["id"]
    status, out = team.json("a", "search", "queued", "finding")
    assert [(r["id"], r["scope"], r["pending"]) for r in out["results"]] == [(note, "team", True)]
    assert _ids(team.json("a", "search", "queued", "finding", "--scope", "personal")[1]) == []
    status, out = team.json("a", "read", note)
    assert status == 0 and out["scope"] == "team" and out["source"] == "pending"


def test_a_retry_that_delivers_a_team_note_says_it_went_to_the_teams_store(team):
    # `save --retry` answers as the save did: the store the note went to is named, and `scope` says which
    team.team.rename(team.root / "team-store-away")
    status, out = team.json("a", "save", "--team", "--title", "Later", "--text", "a team finding sent later")
    (team.root / "team-store-away").rename(team.team)
    assert status == 10, out
    status, text, err = team.run("a", "save", "--retry", out["id"])
    assert status == 0 and text.startswith(f"saved {out['id']} to the team's shared memory"), (text, err)
    assert _notes_in(team.team) == [f"{out['id']}.md"]
    team.team.rename(team.root / "team-store-away")
    status, out = team.json("a", "save", "--team", "--text", "another team finding sent later")
    (team.root / "team-store-away").rename(team.team)
    status, out = team.json("a", "save", "--retry", out["id"])
    assert status == 0 and out["status"] == "saved" and out["scope"] == "team", out


def test_scope_team_without_a_team_store_is_one_line_naming_the_way_to_add_one(tmp_path):
    store = tmp_path / "own"
    new_folder_store(store)
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = make_machine(tmp_path, "solo", store, {checkout: "app"})
    for args in (("search", "x", "--scope", "team"), ("read", "20261130T091512345Z-k3m9x2pa", "--scope", "team"),
                 ("save", "--team", "--text", "a note")):
        status, out, err = m.run(*args, cwd=checkout)
        assert status == 3 and out == "" and len(err.strip().splitlines()) == 1, (args, err)
        assert "no team store" in err and "upgrade --data team=ORG/NAME" in err
    assert not (m.home / "pending").exists() or not os.listdir(m.home / "pending")


def test_a_machine_without_a_team_answers_without_scopes(tmp_path):
    store = tmp_path / "own"
    new_folder_store(store)
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = make_machine(tmp_path, "solo", store, {checkout: "app"})
    status, saved, _ = m.json("save", "--text", "plain note", cwd=checkout)
    assert status == 0 and "scope" not in saved
    status, out, _ = m.json("search", "plain", cwd=checkout)
    assert "scopes" not in out and all("scope" not in r for r in out["results"]) and _ids(out) == [saved["id"]]
    status, out, _ = m.json("read", saved["id"], cwd=checkout)
    assert "scope" not in out


def test_saving_to_a_team_folder_the_member_may_only_read_is_refused_in_one_line_and_leaves_nothing(team):
    # INV personal-stays-personal: a refused team save leaves nothing, pending or in either store
    shared = team.save("a", "Existing", "a team note already there", "--team")
    read_only_member(team.machines["b"])
    project = team.team / "projects" / "app"
    with read_only(project, project / "notes"):
        status, out, err = team.run("b", "save", "--team", "--title", "Nope", "--text", "not allowed here")
        assert status == 6 and out == "", (out, err)
        line = err.strip()
        assert len(line.splitlines()) == 1 and "Traceback" not in err
        assert line.endswith(f"team {team.team} is read only for you: ask whoever manages that folder for write "
                             "permission on it; nothing was saved"), line  # the words of every team write
        assert team.pending("b") == []
        assert _notes_in(team.team) == [f"{shared}.md"] and _notes_in(team.own["b"]) == []
        # reading still works for this member
        assert team.json("b", "read", shared)[1]["scope"] == "team"


def test_a_personal_save_to_a_store_that_refuses_writes_still_stays_pending_as_before(team):
    read_only_member(team.machines["b"])
    project = team.own["b"] / "projects"
    project.mkdir(exist_ok=True)
    with read_only(project):
        status, out = team.json("b", "save", "--text", "my own note")
        assert status == 10 and out["reason"]["error"] == "no-access" and team.pending("b") == [out["id"]]


def test_the_mcp_server_searches_reads_and_saves_with_a_scope(team):
    from tests.mcpkit import call, session

    async def steps(c):
        listed = {t.name: t.input_schema for t in (await c.list_tools()).tools}
        assert listed["memory_search"]["properties"]["scope"]["enum"] == ["personal", "team", "all"]
        assert listed["memory_save"]["properties"]["scope"]["enum"] == ["personal", "team"]
        assert "scope" in listed["memory_read"]["properties"]
        saved = await call(c, "memory_save", {"body": "mcp team finding about lint rules", "title": "Lint",
                                              "scope": "team"})
        mine = await call(c, "memory_save", {"body": "my lint rules scratch", "title": "Mine"})
        team_only = await call(c, "memory_search", {"query": "lint rules", "scope": "team"})
        everything = await call(c, "memory_search", {"query": "lint rules"})
        read = await call(c, "memory_read", {"id": saved[2]["id"], "scope": "team"})
        wrong = await call(c, "memory_search", {"query": "lint", "scope": "everyone"})
        return saved, mine, team_only, everything, read, wrong

    (saved, mine, team_only, everything, read, wrong), stderr = session(team.machines["b"].env, team.checkout,
                                                                        steps)
    assert not saved[0] and saved[2]["scope"] == "team" and not mine[0] and mine[2]["scope"] == "personal"
    assert _notes_in(team.team) == [f"{saved[2]['id']}.md"] and _notes_in(team.own["b"]) == [f"{mine[2]['id']}.md"]
    assert [r["id"] for r in team_only[2]["results"]] == [saved[2]["id"]] and "[team] Lint" in team_only[1]
    assert {r["id"]: r["scope"] for r in everything[2]["results"]} == {saved[2]["id"]: "team",
                                                                       mine[2]["id"]: "personal"}
    assert not read[0] and read[2]["scope"] == "team"
    assert wrong[0] and "scope" in wrong[1]


def test_a_team_save_while_the_team_bucket_is_offline_stays_pending_for_the_team_and_a_retry_delivers_it_there(
        tmp_path, hub):
    # INV nothing-lost, INV same-bytes-retry: the pending entry keeps its team destination
    token = hub.add_user("ada", orgs=("team",))
    t = BucketTeam(tmp_path, hub, token)
    hub.stop()
    try:
        status, out = t.json("save", "--team", "--title", "Hub down", "--text", "saved while the hub was away")
        later = t.json("save", "--team", "--title", "Also down", "--text", "for the stop hook to deliver")[1]
    finally:
        hub.start()
    assert later["status"] == "pending" and later["scope"] == "team"
    assert status == 10 and out["scope"] == "team" and out["store"] == {"kind": "bucket", "location": t.bucket}
    note = out["id"]
    status, listed = t.json("pending")
    assert [(p["id"], p["store"]["location"]) for p in listed["pending"]] == [(note, t.bucket), (later["id"], t.bucket)]
    assert t.in_bucket() == [] and _notes_in(t.own) == []
    status, out = t.json("save", "--retry", note)
    assert status == 0 and out["status"] == "saved", out
    assert t.in_bucket() == [f"projects/app/notes/{note}.md"] and _notes_in(t.own) == []
    stop = json.dumps({"session_id": "s", "hook_event_name": "Stop", "stop_hook_active": False})
    status, _, err = t.m.run("hook", "stop", "--runtime", "claude", input=stop, cwd=t.checkout)
    assert status == 0, err
    assert t.in_bucket() == sorted([f"projects/app/notes/{note}.md", f"projects/app/notes/{later['id']}.md"])
    assert _notes_in(t.own) == [] and t.json("pending")[1]["pending"] == []
    status, out = t.json("search", "hub", "away", "--scope", "team")
    assert [(r["id"], r["scope"]) for r in out["results"]] == [(note, "team")]


def test_a_team_save_with_only_the_read_role_is_refused_in_one_line_naming_who_grants_the_write_role(tmp_path, hub):
    # INV personal-stays-personal: the Hub's own rights decide; a refused team save leaves nothing anywhere
    from tests.fixtures_hub import Team as HubTeam

    org = HubTeam(hub)
    reader = BucketTeam(tmp_path / "reader", hub, org.reader.token, bucket=org.bucket)
    status, out, err = reader.m.run("save", "--team", "--text", "a note the reader may not share", cwd=reader.checkout)
    assert status == 6 and out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert err.strip().endswith(f"team {org.bucket} is read only for you: ask an admin of acme for the write role; "
                                "nothing was saved"), err
    assert reader.json("pending")[1]["pending"] == [] and reader.in_bucket() == [] and _notes_in(reader.own) == []
    writer = BucketTeam(tmp_path / "writer", hub, org.writer.token, bucket=org.bucket)
    status, out = writer.json("save", "--team", "--title", "Shared", "--text", "a note the writer shares")
    assert status == 0 and writer.in_bucket() == [f"projects/app/notes/{out['id']}.md"]
    status, out = reader.json("search", "writer", "shares")  # the reader still reads the team's notes
    assert [(r["title"], r["scope"]) for r in out["results"]] == [("Shared", "team")]


def test_a_team_pin_reaches_every_members_session_start_reminder_within_the_one_pin_budget(team):
    from agentmem import config
    from agentmem.memory import curation

    shared = team.save("a", "Team rule", "run the linters before every push", "--team")
    own = team.save("b", "My rule", "keep my scratch branch rebased")
    a = config.load(str(team.machines["a"].home))
    assert curation.pin(str(team.machines["a"].home), a.scoped("team"), "app", shared).to_json()["status"] == "saved"
    assert team.json("b", "pin", own)[1]["status"] == "saved"
    team.json("b", "search")  # brings the team's pin record, as any search does
    status, reminder, _ = team.run("b", "hook", "reminder", "--runtime", "claude")
    assert status == 0 and "Pinned memory of project app (2 note(s)" in reminder, reminder
    assert f"[{shared}] Team rule" in reminder and f"[{own}] My rule" in reminder
    assert reminder.index(own) < reminder.index(shared)  # the newest pin first, across both stores
    with open(team.machines["b"].home / "config.toml", "a", encoding="utf-8") as f:
        f.write("\n[memory]\npin_budget = 40\n")
    status, reminder, _ = team.run("b", "hook", "reminder", "--runtime", "claude")
    assert "(1 note(s)" in reminder and f"Pinned but left out: {shared} (over the pin budget" in reminder


def test_both_stores_are_asked_what_changed_at_the_same_time_not_one_after_the_other(tmp_path, hub):
    import time

    token = hub.add_user("ada", orgs=("team",))
    hub.add_bucket("ada/agent-memory", private=True)
    t = BucketTeam(tmp_path, hub, token)
    config = t.m.home / "config.toml"
    config.write_text(config.read_text().replace(f'kind = "folder"\nlocation = "{t.own}"',
                                                 'kind = "bucket"\nlocation = "ada/agent-memory"'))
    assert t.json("save", "--text", "own words about tides")[0] == 0
    assert t.json("save", "--team", "--text", "team words about tides")[0] == 0
    status, out = t.json("search", "tides")
    assert status == 0 and not out["stale"] and len(out["results"]) == 2, out
    # room for a slow answer, so the clock shows the overlap
    config.write_text(config.read_text().replace("timeout = 3\n", "timeout = 8\ncheck_timeout = 8\n"))
    hub.inject("info", "slow", delay=3.0)  # each store's change check answers 3 s late, inside check_timeout
    started = time.monotonic()
    status, out = t.json("search", "tides")
    took = time.monotonic() - started
    assert status == 0 and not out["stale"] and len(out["results"]) == 2, out
    assert len(hub.requests("info")) >= 2
    # One after the other is at least 6 s; together, 3 s plus a start-up that a loaded machine may slow.
    assert took < 5.5, f"{took:.2f} s: the two checks waited one after the other"


def test_every_command_the_readmes_team_memory_section_shows_runs_on_a_members_machine(team):
    # README, "Team memory": each line of its example, an example ID replaced by a note of the right store
    import re
    import shlex

    from tests.fixtures_core import REPO
    from tests.skillkit import write_skill

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("\n## Team memory\n"):]
    section = section[:section.index("\n## ", 1)]
    lines = [ln for block in re.findall(r"```sh\n(.*?)```", section, re.S) for ln in block.splitlines() if ln.strip()]
    assert len(lines) >= 6 and all(ln.startswith("agentmem ") for ln in lines), lines
    m = team.machines["a"]
    write_skill(m.user_home / "skills" / "release-notes", description="Writes release notes.")
    mine = team.save("a", "Mine", "a finding of my own")
    shared = team.save("a", "Shared", "a finding of the team's", "--team")
    for line in lines:
        argv = shlex.split(line, comments=True)[1:]
        ids = {"promote": mine, "pin": shared}
        argv = [ids.get(argv[0], a) if re.fullmatch(r"\d{8}T\d{9}Z-[a-z0-9]{8}", a) else a for a in argv]
        argv = [str(m.user_home) + a[1:] if a.startswith("~/") else a for a in argv]
        status, out, err = team.run("a", *argv)
        assert status == 0, (line, out, err)
