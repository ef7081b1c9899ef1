"""A team note the team will never take from this member: kept, said so, and a way out (`save --retry ID
--personal`).

A member with the read role (or an outsider, whom the Hub answers 404 for the private team bucket) who saves
with `--team` while offline has a pending note bound for the team store (INV nothing-lost). Each retry is then
refused; the answer names both ways out, the Stop hook stops retrying it, and `--personal` sends the same
bytes to the member's own store. Real CLI, real huggingface_hub against the loopback Hub.
"""

from __future__ import annotations

import json
import os
import time

from tests.fixtures_hub import Team as HubTeam
from tests.fixtures_team import BucketTeam, Team, read_only, read_only_member

STOP = json.dumps({"session_id": "s", "hook_event_name": "Stop", "stop_hook_active": False})


def _offline_team_save(member: BucketTeam, text: str) -> str:
    """A `save --team` made while the Hub is away: pending, bound for the team bucket."""
    member.hub.stop()
    try:
        status, out = member.json("save", "--team", "--title", "Offline finding", "--text", text)
    finally:
        member.hub.start()
    assert status == 10 and out["scope"] == "team", out
    return out["id"]


def _offline_folder_team_save(team: Team, text: str) -> str:
    """Member b's `save --team` made while the team folder is away: pending, bound for it."""
    away = team.team.rename(team.root / "team-away")
    try:
        status, out = team.json("b", "save", "--team", "--title", "Offline", "--text", text)
    finally:
        away.rename(team.team)
    assert status == 10 and out["scope"] == "team", out
    return out["id"]


def _team_notes_read_only(team: Team):
    """The team folder's project and notes folders read only, and member b without root's override."""
    read_only_member(team.machines["b"])
    project = team.team / "projects" / "app"
    return read_only(project, project / "notes")


def _entry(member: BucketTeam, note: str) -> tuple[bytes, bytes]:
    folder = member.m.home / "pending" / note
    return (folder / "entry.json").read_bytes(), (folder / "note.md").read_bytes()


def _notes_in(store) -> list[str]:
    folder = store / "projects" / "app" / "notes"
    return sorted(os.listdir(folder)) if folder.exists() else []


def test_a_read_only_members_offline_team_note_retried_is_refused_with_both_ways_out_and_kept(tmp_path, hub):
    # INV nothing-lost: the refused note stays pending; the answer says who grants the role and how to keep it
    org = HubTeam(hub)
    reader = BucketTeam(tmp_path, hub, org.reader.token, bucket=org.bucket)
    note = _offline_team_save(reader, "what the reader found while offline")
    status, text, err = reader.m.run("save", "--retry", note, cwd=reader.checkout)
    assert status == 10 and len(text.strip().splitlines()) == 1 and "Traceback" not in err, (text, err)
    assert f"team {org.bucket} is read only for you" in text and "ask an admin of acme for the write role" in text
    assert "ask its owner" not in text
    status, out = reader.json("save", "--retry", note)
    assert status == 10 and out["status"] == "pending" and out["reason"]["error"] == "no-access", out
    assert [step["argv"] for step in out["next"]] == [["save", "--retry", note], ["save", "--retry", note, "--personal"]]
    assert all(step["command"] in out["reason"]["message"] for step in out["next"])
    # `pending` lists it with the same two ways out; nothing left this machine
    status, listed = reader.json("pending")
    assert [(p["id"], p["waits"]["error"]) for p in listed["pending"]] == [(note, "no-access")]
    assert [step["argv"] for step in listed["pending"][0]["next"]] == [step["argv"] for step in out["next"]]
    status, text, _ = reader.m.run("pending", cwd=reader.checkout)
    assert "ask an admin of acme for the write role" in text and out["next"][1]["command"] in text
    assert reader.in_bucket() == [] and _notes_in(reader.own) == []
    # the Stop hook leaves it alone until a person acts: no attempt, and it says so
    before = json.loads(_entry(reader, note)[0])["attempts"]
    status, _, err = reader.m.run("hook", "stop", "--runtime", "claude", input=STOP, cwd=reader.checkout)
    assert status == 0 and "not retried until you act" in err, err
    assert json.loads(_entry(reader, note)[0])["attempts"] == before and reader.json("pending")[1]["pending"]


def test_an_outsiders_offline_team_note_is_not_found_and_still_offered_both_ways_out(tmp_path, hub):
    org = HubTeam(hub)
    outsider = BucketTeam(tmp_path, hub, org.outsider.token, bucket=org.bucket)
    note = _offline_team_save(outsider, "what the outsider found while offline")
    status, out = outsider.json("save", "--retry", note)
    assert status == 10 and out["reason"]["error"] == "not-found", out
    assert f"team bucket {org.bucket} is not found for this account" in out["reason"]["message"]
    assert [step["argv"] for step in out["next"]][-1] == ["save", "--retry", note, "--personal"]
    assert outsider.json("pending")[1]["pending"][0]["id"] == note


def test_retry_personal_sends_the_same_bytes_to_the_members_own_store_as_their_own_note(tmp_path, hub):
    # INV nothing-lost, INV same-bytes-retry: the note's bytes are the ones saved; only the destination changes
    org = HubTeam(hub)
    reader = BucketTeam(tmp_path, hub, org.reader.token, bucket=org.bucket)
    note = _offline_team_save(reader, "the reader keeps this finding as their own")
    _, saved_bytes = _entry(reader, note)
    status, out = reader.json("save", "--retry", note)
    assert status == 10
    way_out = out["next"][1]["argv"]
    reader.m.run(*way_out, cwd=reader.checkout, check_status=0)  # runs as printed
    assert reader.json("pending")[1]["pending"] == [] and reader.in_bucket() == []
    assert _notes_in(reader.own) == [f"{note}.md"]
    assert (reader.own / "projects" / "app" / "notes" / f"{note}.md").read_bytes() == saved_bytes
    status, found = reader.json("search", "keeps", "finding")
    assert [(r["id"], r["scope"]) for r in found["results"]] == [(note, "personal")]
    assert [r["id"] for r in reader.json("search", "keeps", "finding", "--scope", "team")[1]["results"]] == []


def test_retry_personal_while_offline_leaves_it_pending_as_the_members_own_note(tmp_path, hub):
    org = HubTeam(hub)
    reader = BucketTeam(tmp_path, hub, org.reader.token, bucket=org.bucket)
    note = _offline_team_save(reader, "moved while the personal store is away")
    away = reader.own.rename(tmp_path / "own-away")
    status, text, err = reader.m.run("save", "--retry", note, "--personal", cwd=reader.checkout)
    assert status == 10 and "it is your own note now" in text, (text, err)
    status, listed = reader.json("pending")
    assert [(p["id"], p["store"]) for p in listed["pending"]] == [(note, {"kind": "folder", "location": str(reader.own)})]
    status, found = reader.json("search", "moved", "personal", "--offline")
    assert [(r["id"], r["scope"], r["pending"]) for r in found["results"]] == [(note, "personal", True)]
    away.rename(reader.own)
    status, out = reader.json("save", "--retry", note)
    assert status == 0 and out["scope"] == "personal" and _notes_in(reader.own) == [f"{note}.md"], out


def test_retry_personal_of_a_personal_note_is_refused_in_one_line_and_changes_nothing(tmp_path):
    team = Team(tmp_path)
    team.own["a"].rename(tmp_path / "own-away")
    status, out = team.json("a", "save", "--title", "Mine", "--text", "my own pending note")
    assert status == 10 and out["scope"] == "personal"
    folder = team.machines["a"].home / "pending" / out["id"]
    before = {name: (folder / name).read_bytes() for name in os.listdir(folder)}
    status, text, err = team.run("a", "save", "--retry", out["id"], "--personal")
    assert status == 2 and text == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "not this machine's team store" in err and "nothing was changed" in err
    assert {name: (folder / name).read_bytes() for name in os.listdir(folder)} == before
    status, text, err = team.run("a", "save", "--personal", "--text", "no retry")
    assert status == 2 and "--personal goes with --retry ID" in err


def test_retry_personal_of_a_team_record_is_refused_and_changes_nothing(tmp_path):
    team = Team(tmp_path)
    shared = team.save_team("a", "Shared", "a team note to pin")
    team.team.rename(tmp_path / "team-away")
    status, out = team.json("a", "pin", shared, "--team")
    team.root.joinpath("team-away").rename(team.team)
    assert status == 10, out
    record = team.pending("a")[0]
    folder = team.machines["a"].home / "pending" / record
    before = {name: (folder / name).read_bytes() for name in os.listdir(folder)}
    status, text, err = team.run("a", "save", "--retry", record, "--personal")
    assert status == 2 and len(err.strip().splitlines()) == 1 and "not a note" in err, err
    assert {name: (folder / name).read_bytes() for name in os.listdir(folder)} == before


def test_a_team_folder_the_member_may_only_read_refuses_the_retry_naming_who_manages_it_and_personal_moves_it(
        tmp_path):
    # INV nothing-lost: a folder team's refusal (permission denied) keeps the note, with both ways out
    team = Team(tmp_path)
    team.save_team("a", "Existing", "a team note already there")
    note = _offline_folder_team_save(team, "a folder team finding")
    with _team_notes_read_only(team):
        status, out = team.json("b", "save", "--retry", note)
        assert status == 10 and out["reason"]["error"] == "no-access", out
        assert out["reason"]["message"].startswith(f"team {team.team} is read only for you: note {note} was not sent")
        assert "ask whoever manages that folder for write permission on it" in out["next"][0]["text"]
        assert out["next"][1]["argv"] == ["save", "--retry", note, "--personal"]
        assert team.pending("b") == [note]
        team.machines["b"].run(*out["next"][1]["argv"], cwd=team.checkout, check_status=0)
    assert team.pending("b") == [] and _notes_in(team.own["b"]) == [f"{note}.md"]
    assert len(_notes_in(team.team)) == 1


def test_the_mcp_pending_tool_lists_a_refused_team_note_with_both_ways_out(tmp_path, hub):
    from tests.mcpkit import call, session

    org = HubTeam(hub)
    reader = BucketTeam(tmp_path, hub, org.reader.token, bucket=org.bucket)
    note = _offline_team_save(reader, "what the reader found while offline")
    assert reader.json("save", "--retry", note)[0] == 10

    async def steps(c):
        return await call(c, "memory_pending")

    (failed, text, data), _ = session(reader.m.env, reader.checkout, steps)
    assert not failed and "ask an admin of acme for the write role" in text, text
    listed = data["pending"][0]
    assert listed["waits"]["error"] == "no-access"
    assert listed["next"][0]["tool"] == {"name": "memory_retry", "arguments": {"id": note}}
    assert listed["next"][1]["argv"] == ["save", "--retry", note, "--personal"]


def test_retry_personal_of_a_note_the_team_folder_already_holds_removes_it_as_saved_and_sends_nothing(tmp_path):
    # INV nothing-lost: an upload reached the team folder, its reply lost; the folder then refused the retry
    # (read only: a write needs a temporary file beside the note). --personal finds these very bytes there:
    # the note is delivered, one ID in one store.
    team = Team(tmp_path)
    team.save_team("a", "Existing", "a team note already there")
    note = _offline_folder_team_save(team, "an upload whose reply was lost")
    folder = team.machines["b"].home / "pending" / note
    entry = json.loads((folder / "entry.json").read_bytes())
    (team.team / entry["path"]).write_bytes((folder / "note.md").read_bytes())  # the upload that reached it
    with _team_notes_read_only(team):
        status, out = team.json("b", "save", "--retry", note)
        assert status == 10 and out["reason"]["error"] == "no-access", out
        status, text, err = team.run("b", "save", "--retry", note, "--personal")
    assert status == 0 and "Traceback" not in err, (text, err)
    assert f"saved {note} to the team's shared memory" in text and "already had it" in text, text
    assert "nothing was sent to your own store" in text and "your own note now" not in text
    assert team.pending("b") == [] and _notes_in(team.own["b"]) == []
    assert len(_notes_in(team.team)) == 2
    status, found = team.json("b", "search", "reply", "lost")
    assert [(r["id"], r["scope"]) for r in found["results"]] == [(note, "team")]


def test_retry_personal_when_the_team_store_holds_other_bytes_under_that_id_is_refused_and_changes_nothing(
        tmp_path, hub):
    from agentmem.errors import EXIT_CONFLICT

    org = HubTeam(hub)
    reader = BucketTeam(tmp_path, hub, org.reader.token, bucket=org.bucket)
    note = _offline_team_save(reader, "the pending copy of this note")
    assert reader.json("save", "--retry", note)[1]["reason"]["error"] == "no-access"
    path = json.loads(_entry(reader, note)[0])["path"]
    reader.hub.put_file(reader.bucket, path, b"---\nid: other\n---\nsomething else entirely\n")
    folder = reader.m.home / "pending" / note
    before = {name: (folder / name).read_bytes() for name in os.listdir(folder)}
    status, text, err = reader.m.run("save", "--retry", note, "--personal", cwd=reader.checkout)
    assert status == EXIT_CONFLICT and text == "" and len(err.strip().splitlines()) == 1, (text, err)
    assert "holds other bytes under note ID" in err and "nothing was changed" in err and "Traceback" not in err
    assert {name: (folder / name).read_bytes() for name in os.listdir(folder)} == before
    assert _notes_in(reader.own) == []


def test_retry_personal_while_the_team_store_cannot_be_asked_moves_the_note_as_before(tmp_path, hub):
    # The team store offline: whether it holds the note cannot be asked, so the note moves as asked
    org = HubTeam(hub)
    reader = BucketTeam(tmp_path, hub, org.reader.token, bucket=org.bucket)
    note = _offline_team_save(reader, "moved while the team store is away")
    assert reader.json("save", "--retry", note)[0] == 10
    hub.stop()
    try:
        status, text, err = reader.m.run("save", "--retry", note, "--personal", cwd=reader.checkout)
    finally:
        hub.start()
    assert status == 0 and "it is your own note now" in text, (text, err)
    assert _notes_in(reader.own) == [f"{note}.md"] and reader.in_bucket() == []


def test_the_mcp_retry_tool_answers_a_refused_team_note_with_both_ways_out_as_the_cli_retry_does(tmp_path, hub):
    # INV nothing-lost: the note stays pending; the answer names the write role, then the retry tool, or --personal
    from tests.mcpkit import call, session

    org = HubTeam(hub)
    reader = BucketTeam(tmp_path, hub, org.reader.token, bucket=org.bucket)
    note = _offline_team_save(reader, "what the reader found while offline")
    cli = reader.json("save", "--retry", note)[1]

    async def steps(c):
        return await call(c, "memory_retry", {"id": note})

    (failed, text, data), _ = session(reader.m.env, reader.checkout, steps)
    assert not failed and text.startswith("NOT saved to the team's store: "), text
    assert f"team {org.bucket} is read only for you" in text and "ask an admin of acme for the write role" in text
    assert data["status"] == "pending" and data["reason"]["error"] == cli["reason"]["error"] == "no-access", data
    assert data["next"][0]["tool"] == {"name": "memory_retry", "arguments": {"id": note}}
    assert data["next"][1]["argv"] == cli["next"][1]["argv"] == ["save", "--retry", note, "--personal"]
    assert data["retry_tool"] == {"name": "memory_retry", "arguments": {"id": note}}
    assert reader.json("pending")[1]["pending"][0]["id"] == note and reader.in_bucket() == []


def _aged(member: BucketTeam, note: str, hours: float) -> None:
    entry = member.m.home / "pending" / note / "entry.json"
    data = json.loads(entry.read_text())
    data["created"] = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() - hours * 3600))
    entry.write_text(json.dumps(data))


def _a_held_note_and_an_offline_one_both_two_hours_old(tmp_path, hub) -> tuple[BucketTeam, str, str]:
    org = HubTeam(hub)
    reader = BucketTeam(tmp_path, hub, org.reader.token, bucket=org.bucket)
    held = _offline_team_save(reader, "what the reader found while offline")
    assert reader.json("save", "--retry", held)[0] == 10
    away = reader.own.rename(tmp_path / "own-away")
    status, out = reader.json("save", "--title", "Mine", "--text", "my own note, its store away")
    away.rename(reader.own)
    assert status == 10 and out["scope"] == "personal", out
    for note in (held, out["id"]):
        _aged(reader, note, 2)
    return reader, held, out["id"]


def test_doctor_names_how_many_pending_notes_are_held_and_the_pending_command_for_their_ways_out(tmp_path, hub):
    reader, held, _ = _a_held_note_and_an_offline_one_both_two_hours_old(tmp_path, hub)
    status, out, _ = reader.m.json("doctor", cwd=reader.checkout)
    check = {c["name"]: c for c in out["checks"]}["pending"]
    assert check["status"] == "fail" and check["detail"].startswith("2 note(s) wait for upload"), check
    assert "1 of them held: the team store refused you" in check["detail"], check
    assert check["command"] == "agentmem pending" or check["command"].endswith(" pending"), check
    status, text, _ = reader.m.run("doctor", cwd=reader.checkout)
    line = next(n for n, row in enumerate(text.splitlines()) if "pending:" in row)
    assert "1 of them held" in text.splitlines()[line] and check["command"] in text.splitlines()[line + 1], text


def test_the_start_reminder_says_how_many_overdue_notes_are_held_without_asking_any_store(tmp_path, hub):
    reader, held, _ = _a_held_note_and_an_offline_one_both_two_hours_old(tmp_path, hub)
    hub.clear_log()
    status, text, err = reader.m.run("hook", "reminder", "--runtime", "claude", cwd=reader.checkout)
    assert status == 0 and "2 memory note(s) have waited over an hour" in text, (text, err)
    assert "1 of them the team store refused you" in text and " pending` names the ways out" in text, text
    assert hub.requests() == []
    # the held note moved to the member's own store and delivered: no held note left to name
    reader.m.run("save", "--retry", held, "--personal", cwd=reader.checkout, check_status=0)
    status, text, _ = reader.m.run("hook", "reminder", "--runtime", "claude", cwd=reader.checkout)
    assert "1 memory note(s) have waited over an hour" in text and "refused you" not in text, text


def test_retry_personal_again_after_it_delivered_says_the_note_is_saved_in_the_own_store_and_sends_nothing(
        tmp_path, hub):
    from agentmem.errors import EXIT_NOT_FOUND

    org = HubTeam(hub)
    reader = BucketTeam(tmp_path, hub, org.reader.token, bucket=org.bucket)
    note = _offline_team_save(reader, "moved once, asked twice")
    assert reader.json("save", "--retry", note)[0] == 10
    reader.m.run("save", "--retry", note, "--personal", cwd=reader.checkout, check_status=0)
    stored = reader.own / "projects" / "app" / "notes" / f"{note}.md"
    before = (stored.stat().st_mtime_ns, stored.read_bytes())
    status, text, err = reader.m.run("save", "--retry", note, "--personal", cwd=reader.checkout)
    assert status == 0 and "Traceback" not in err, (text, err)
    assert text.strip() == (f"{note} was already saved to your own store {reader.own} "
                            f"(projects/app/notes/{note}.md): nothing was sent"), text
    status, out = reader.json("save", "--retry", note, "--personal")
    assert status == 0 and out["already_personal"] is True and out["scope"] == "personal", out
    assert (stored.stat().st_mtime_ns, stored.read_bytes()) == before and _notes_in(reader.own) == [f"{note}.md"]
    assert reader.in_bucket() == [] and reader.json("pending")[1]["pending"] == []
    # a note this machine never held anywhere is still not found
    status, text, err = reader.m.run("save", "--retry", "20261205T000000000Z-abcdefgh", "--personal",
                                     cwd=reader.checkout)
    assert status == EXIT_NOT_FOUND and "no pending note" in err, err
