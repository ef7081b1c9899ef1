"""Promotion and proposals (issue X, item 4): `promote ID` copies a personal note into the team store as a
new team note naming its author and origin; `save --propose` marks one, and `review` lists it until it is
promoted. Folder stores: two members, each with an own store, sharing one team folder."""

from __future__ import annotations

from agentmem.note import document
from tests.test_team_authors import team_member


def _team_notes(tmp_path) -> dict[str, dict]:
    folder = tmp_path / "team-store" / "projects" / "app" / "notes"
    return {p.stem: document.parse(p.read_bytes()).meta for p in folder.glob("*.md")} if folder.exists() else {}


def _save(m, text, *args) -> str:
    status, out, err = m.json("save", "--text", text, *args, cwd=m.checkout)
    assert status == 0, err
    return out["id"]


def test_promote_copies_a_personal_note_into_the_team_store_naming_author_and_origin(tmp_path):
    # INV personal-stays-personal: the team store holds nothing until promote
    ada = team_member(tmp_path, "ada")
    mine = _save(ada, "# Deploys\n\ndeploys need the VPN", "--tag", "ops", "--source", "docs/deploy.md")
    assert _team_notes(tmp_path) == {}
    bob = team_member(tmp_path, "bob")
    status, out, err = ada.json("promote", mine, cwd=ada.checkout)
    assert status == 0 and out["status"] == "promoted" and out["note"] == mine, (out, err)
    team = _team_notes(tmp_path)
    assert list(team) == [out["team_note"]] and out["team_note"] != mine
    copied = team[out["team_note"]]
    assert (copied["promoted_from"], copied["author"], copied["agent"]) == (mine, "ada", "codex@ada")
    assert (copied["title"], copied["tags"], copied["sources"], copied["kind"]) == (
        "Deploys", ["ops"], ["docs/deploy.md"], "note")
    assert (tmp_path / "ada" / "own-store" / "projects" / "app" / "notes" / f"{mine}.md").exists()  # it stays
    status, again, _ = bob.json("promote", mine, cwd=bob.checkout)  # another member: the team note, no copy
    assert status == 0 and again["status"] == "already-promoted" and again["team_note"] == out["team_note"]
    assert len(_team_notes(tmp_path)) == 1


def test_promote_and_a_review_with_proposals_have_their_documented_shapes(tmp_path):
    from agentmem import errors
    from tests.test_json_contract import check_shape

    ada = team_member(tmp_path, "ada")
    mine = _save(ada, "a finding", "--propose")
    queue = check_shape("review", *ada.run("review", "--json", cwd=ada.checkout)[:2])
    assert [i["kind"] for i in queue["items"]] == ["proposed-for-team"]
    first = check_shape("promote", *ada.run("promote", mine, "--json", cwd=ada.checkout)[:2])
    again = check_shape("promote", *ada.run("promote", mine, "--json", cwd=ada.checkout)[:2])
    assert (first["status"], again["status"]) == ("promoted", "already-promoted") and "save" not in again
    (tmp_path / "team-store").rename(tmp_path / "team-store-away")  # the team's shared folder out of reach
    other = _save(ada, "another finding")
    pending = check_shape("promote", *ada.run("promote", other, "--json", cwd=ada.checkout)[:2], errors.EXIT_PENDING)
    assert pending["status"] == "pending" and pending["save"]["retry"]


def test_promoting_the_same_note_twice_names_the_team_note_already_made(tmp_path):
    ada = team_member(tmp_path, "ada")
    mine = _save(ada, "the cache key holds the lockfile hash")
    first = ada.json("promote", mine, cwd=ada.checkout)[1]
    status, again, _ = ada.json("promote", mine, cwd=ada.checkout)
    assert status == 0 and again["status"] == "already-promoted" and again["team_note"] == first["team_note"]
    assert len(_team_notes(tmp_path)) == 1
    status, text, _ = ada.run("promote", mine, cwd=ada.checkout)
    assert f"already promoted: team note {first['team_note']}" in text


def test_promoting_again_while_the_team_note_is_still_pending_says_so_and_exits_as_a_pending_save(tmp_path):
    import subprocess

    from agentmem import errors
    from tests.test_json_contract import check_shape

    ada = team_member(tmp_path, "ada")
    mine = _save(ada, "the retry budget is 20 s")
    (tmp_path / "team-store").rename(tmp_path / "team-store-away")  # the team's shared folder out of reach
    first = ada.json("promote", mine, cwd=ada.checkout)[1]
    assert first["status"] == "pending", first
    again = check_shape("promote", *ada.run("promote", mine, "--json", cwd=ada.checkout)[:2], errors.EXIT_PENDING)
    assert (again["status"], again["team_note"], again.get("pending")) == ("already-promoted", first["team_note"], True)
    status, text, _ = ada.run("promote", mine, cwd=ada.checkout)
    assert status == errors.EXIT_PENDING and f"promoted as team note {first['team_note']}, still pending" in text, text
    listed = subprocess.run(["bash", "-c", text.split("`")[1]], cwd=ada.checkout, env=ada.env,  # INV printed-commands-run
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0 and first["team_note"] in listed.stdout, listed
    (tmp_path / "team-store-away").rename(tmp_path / "team-store")
    ada.run("save", "--retry", first["team_note"], cwd=ada.checkout, check_status=0)
    status, done, _ = ada.json("promote", mine, cwd=ada.checkout)  # confirmed now: no longer said pending
    assert (status, done["status"], "pending" in done) == (0, "already-promoted", False), done
    assert list(_team_notes(tmp_path)) == [first["team_note"]]


def test_a_promoted_note_keeps_its_original_author_when_another_member_promotes_it(tmp_path):
    ada = team_member(tmp_path, "ada", author="ada")
    mine = _save(ada, "a finding")
    # the curator here is ada's own machine under another configured author: the original's name is kept
    text = (ada.home / "config.toml").read_text().replace('author = "ada"', 'author = "curator"')
    ada.write_config(text)
    out = ada.json("promote", mine, cwd=ada.checkout)[1]
    assert _team_notes(tmp_path)[out["team_note"]]["author"] == "ada"


def test_promote_refuses_each_case_in_one_line_with_what_to_do(tmp_path, laptop):
    ada = team_member(tmp_path, "ada")
    mine = _save(ada, "a finding")
    team_id = ada.json("promote", mine, cwd=ada.checkout)[1]["team_note"]
    cases = {
        "team note": (ada, team_id, "already the team's"),
        "not found": (ada, "20260101T000000000Z-nothere1", "no note"),
        "malformed": (ada, "../etc", "invalid"),
    }
    gone = _save(ada, "no longer true")
    ada.run("retract", gone, "--reason", "wrong", cwd=ada.checkout, check_status=0)
    cases["retracted"] = (ada, gone, "retracted")
    cases["no team"] = (laptop, _save_on(laptop), "no team store")
    for case, (m, note_id, words) in cases.items():
        before = _team_notes(tmp_path)
        status, out, err = m.run("promote", note_id, cwd=m.checkout)
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert status != 0 and words in err and "Traceback" not in err, (case, err)
        assert lines[0].startswith("agentmem: ") and len(lines) <= 2, (case, err)
        assert _team_notes(tmp_path) == before, case
    status, _, err = laptop.run("promote", _save_on(laptop), cwd=laptop.checkout)
    assert "upgrade" in err  # the way to add a team


def _save_on(m) -> str:
    status, out, err = m.json("save", "--text", "solo finding", cwd=m.checkout)
    assert status == 0, err
    return out["id"]


def test_a_proposed_note_is_listed_by_review_until_it_is_promoted(tmp_path):
    # INV personal-stays-personal: proposing writes nothing to the team store
    ada = team_member(tmp_path, "ada")
    proposed = _save(ada, "# Retry budget\n\nthe retry budget is 20 s", "--propose")
    _save(ada, "a private scratch note")
    assert _team_notes(tmp_path) == {}
    status, queue, _ = ada.json("review", cwd=ada.checkout)
    items = [i for i in queue["items"] if i["kind"] == "proposed-for-team"]
    assert [i["notes"] for i in items] == [[proposed]]
    assert items[0]["commands"][0]["argv"] == ["promote", proposed, "--project", "app"]
    status, text, _ = ada.run("review", cwd=ada.checkout)
    assert f"- proposed-for-team: {proposed}" in text and f"promote {proposed} --project app" in text
    ada.run(*items[0]["commands"][0]["argv"], cwd=ada.checkout, check_status=0)  # runs as printed
    status, queue, _ = ada.json("review", cwd=ada.checkout)
    assert not [i for i in queue["items"] if i["kind"] == "proposed-for-team"]
    team = _team_notes(tmp_path)
    assert [m.get("propose") for m in team.values()] == [None]  # the team note is not itself a proposal


def test_propose_on_a_machine_without_a_team_is_refused_before_anything_is_written(laptop, store_dir):
    status, out, err = laptop.run("save", "--propose", "--text", "a finding", cwd=laptop.checkout)
    assert status != 0 and "no team store" in err and "upgrade" in err
    assert not (store_dir / "projects").exists()


def test_propose_with_team_is_refused_in_one_line_before_anything_is_written(tmp_path):
    # a proposal is one of the member's own notes; the team's notes are never proposals themselves
    ada = team_member(tmp_path, "ada")
    status, out, err = ada.run("save", "--team", "--propose", "--text", "a finding", cwd=ada.checkout)
    line = err.strip()
    assert status == 2 and out == "" and len(line.splitlines()) == 1 and "Traceback" not in err, err
    assert "--propose" in line and "--team" in line and "nothing was written" in line, line
    assert _team_notes(tmp_path) == {} and not (tmp_path / "ada" / "own-store" / "projects").exists()
    assert not (ada.home / "pending").exists() or not any((ada.home / "pending").iterdir())


def test_a_machine_whose_team_is_removed_reviews_as_before_and_never_touches_the_team_folder(tmp_path):
    ada = team_member(tmp_path, "ada")
    _save(ada, "a finding for everyone", "--propose")
    config = (ada.home / "config.toml").read_text()
    ada.write_config(config[:config.index("[team]")])  # the machine leaves the team
    status, queue, _ = ada.json("review", cwd=ada.checkout)
    assert status == 0 and queue["items"] == []
    assert not (tmp_path / "team-store").exists() or not any((tmp_path / "team-store").iterdir())
