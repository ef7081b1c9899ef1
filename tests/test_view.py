"""`agentmem view` writes one self-contained page of this machine's memory: what it gathers, how honest it is
about freshness, and what the file holds (the page's behaviour in a real browser: test_view_browser.py)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import stat

from agentmem.view import page
from tests.fixtures_core import make_machine, new_folder_store, save_pending
from tests.test_secrets_cli import fake

HOSTILE = '</script><!-- <script>alert(1)</script> & \u2028\u2029 </textarea>'


def page_data(html: bytes) -> dict:
    """The JSON the page carries, read back as the browser reads it."""
    text = html.decode("utf-8")
    m = re.search(r'<script type="application/json" id="memory-data">(.*?)</script>', text, re.S)
    assert m, "the page carries its data"
    return json.loads(m.group(1))


def saved(m, cwd, text, *args) -> str:
    status, out, err = m.json("save", "--text", text, *args, cwd=cwd)
    assert status == 0, (out, err)
    return out["id"]


def two_projects(machines, tmp_path):
    web, api = tmp_path / "src" / "web", tmp_path / "src" / "api"
    web.mkdir(parents=True)
    api.mkdir(parents=True)
    return machines("laptop", {web: "web", api: "api"}), web, api


def test_the_page_data_cannot_close_its_script_element():  # INV view-inert
    encoded = page.inert_json({"body": HOSTILE})
    assert not set(encoded) & set("<>&\u2028\u2029")
    assert json.loads(encoded) == {"body": HOSTILE}


def test_the_policy_allows_no_network_and_only_the_pages_own_script_and_style():  # INV view-inert
    html = page.render({"notes": [], "body": HOSTILE}).decode()
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    rules = dict(r.strip().split(" ", 1) for r in policy.split(";"))
    assert rules["default-src"] == "'none'" and rules["img-src"] == "data:" and rules["form-action"] == "'none'"
    assert not {"connect-src", "frame-src", "font-src", "media-src"} & set(rules)  # all fall back to 'none'
    scripts = re.findall(r"<script>(.*?)</script>", html, re.S)
    styles = re.findall(r"<style>(.*?)</style>", html, re.S)
    assert len(scripts) == 1 and len(styles) == 1
    for rule, text in (("script-src", scripts[0]), ("style-src", styles[0])):
        digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
        assert rules[rule] == f"'sha256-{digest}'"  # that one element, nothing inline or remote
    assert html.count("<script") == 2  # the inert data and the page's own script


def test_view_shows_every_project_this_machine_knows_by_default(machines, tmp_path):
    m, web, api = two_projects(machines, tmp_path)
    ids = {saved(m, web, "Cache key is the lockfile hash", "--tag", "build"), saved(m, api, "Rate limit is 100/s")}
    status, out, err = m.json("view", cwd=m.user_home)  # run from outside any project
    assert status == 0, err
    assert out["path"] == str(m.home / "view" / "index.html") and out["notes"] == 2
    assert sorted(out["projects"]) == ["api", "web"] and out["stale"] is False
    data = page_data((m.home / "view" / "index.html").read_bytes())
    assert {n["id"] for n in data["notes"]} == ids
    note = next(n for n in data["notes"] if n["project"] == "web")
    assert note["tags"] == ["build"] and note["agent"] == "laptop" and note["states"] == []


def test_view_project_shows_only_that_project(machines, tmp_path):
    m, web, api = two_projects(machines, tmp_path)
    saved(m, web, "one")
    saved(m, api, "two")
    status, out, _ = m.json("view", "--project", "api", cwd=m.user_home)
    assert status == 0 and out["projects"] == ["api"] and out["notes"] == 1


def test_view_all_adds_projects_only_the_store_holds(machines, tmp_path):
    m, web, _ = two_projects(machines, tmp_path)
    other_dir = tmp_path / "elsewhere" / "ops"
    other_dir.mkdir(parents=True)
    desktop = machines("desktop", {other_dir: "ops"})
    saved(m, web, "mine")
    theirs = saved(desktop, other_dir, "a note of a project no directory here maps")
    assert "ops" not in m.json("view", cwd=m.user_home)[1]["projects"]
    status, out, _ = m.json("view", "--all", cwd=m.user_home)
    assert status == 0 and "ops" in out["projects"] and out["notes"] == 2
    assert theirs in {n["id"] for n in page_data((m.home / "view" / "index.html").read_bytes())["notes"]}


def test_a_view_of_an_unreachable_store_says_it_may_be_stale_and_shows_what_is_pending(offline_machine):
    # INV read-your-writes: a store that did not answer is said, never shown as an empty store
    m = offline_machine
    note_id = save_pending(m, "kept on this machine", title="Waiting note")
    status, out, err = m.json("view", cwd=m.user_home)
    assert status == 0, err
    assert out["stale"] is True and any("app" in r for r in out["stale_reasons"])
    data = page_data((m.home / "view" / "index.html").read_bytes())
    [note] = data["notes"]
    assert note["id"] == note_id and data["stale"] is True
    [state] = note["states"]
    assert state["name"] == "pending" and "not confirmed" in state["detail"] and "offline" not in state["name"]
    text = m.run("view", cwd=m.user_home)[1]
    assert "warning: the view may be stale" in text


def test_offline_view_asks_nothing_and_says_so(laptop):
    saved(laptop, laptop.checkout, "cached note")
    status, out, _ = laptop.json("view", "--offline", cwd=laptop.user_home)
    assert status == 0 and out["notes"] == 1 and out["stale"] is True
    assert any("offline mode" in r for r in out["stale_reasons"])


def test_a_credential_in_a_note_never_reaches_the_page(laptop, store_dir):  # INV no-credentials
    token, hf = fake("ghp_", 36), fake("hf_", 34)
    folder = store_dir / "projects" / "app" / "notes"
    folder.mkdir(parents=True)
    (folder / "20261201T100000000Z-aaaaaaaa.md").write_text(  # written by hand: save would refuse it
        f'---\nid: "20261201T100000000Z-aaaaaaaa"\ntitle: "token {token}"\nkind: "note"\nproject: "app"\n'
        f'created: "2026-12-01T10:00:00.000Z"\nagent: "bob@host"\nsources: ["https://x.test/?t={hf}"]\n'
        f'tags: ["{token}"]\n---\n\nexport GITHUB_TOKEN={token}\n')
    status, out, _ = laptop.json("view", cwd=laptop.user_home)
    assert status == 0 and out["notes"] == 1
    html = (laptop.home / "view" / "index.html").read_bytes()
    assert token.encode() not in html and hf.encode() not in html
    [note] = page_data(html)["notes"]
    assert "[REDACTED:" in note["title"] and "[REDACTED:" in note["body"] and "[REDACTED:" in note["tags"][0]
    assert page_data(html)["withheld"] >= 3


def test_corrections_link_both_ways(laptop):  # INV corrections-visible
    old = saved(laptop, laptop.checkout, "Deploys go out on Fridays")
    new = saved(laptop, laptop.checkout, "Deploys never go out on Fridays", "--corrects", old)
    laptop.json("view", cwd=laptop.user_home)
    notes = {n["id"]: n for n in page_data((laptop.home / "view" / "index.html").read_bytes())["notes"]}
    assert notes[old]["corrected_by"] == [new] and notes[new]["corrects"] == old
    assert notes[new]["corrected_by"] == [] and notes[old]["corrects"] is None


def test_output_writes_the_named_file_and_refuses_a_folder(laptop, tmp_path):
    saved(laptop, laptop.checkout, "a note")
    target = tmp_path / "out" / "memory.html"
    status, out, _ = laptop.json("view", "--output", str(target), cwd=laptop.user_home)
    assert status == 0 and out["path"] == str(target) and target.stat().st_size == out["bytes"]
    assert not [p for p in target.parent.iterdir() if p.name.startswith(".tmp-")]  # INV atomic-write
    status, out, err = laptop.json("view", "--output", str(tmp_path), cwd=laptop.user_home)
    assert status == 2 and out["error"] == "invalid-input" and "is a folder" in out["message"]


def test_open_uses_the_system_browser_and_a_failure_is_one_line(laptop, tmp_path):
    recorder = tmp_path / "browser"
    recorder.write_text(f'#!/bin/sh\necho "$@" > "{tmp_path}/opened"\n')
    recorder.chmod(recorder.stat().st_mode | stat.S_IXUSR)
    env = {k: v for k, v in laptop.env.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    laptop.env = env | {"BROWSER": str(recorder)}
    status, out, _ = laptop.json("view", "--open", cwd=laptop.user_home)
    assert status == 0 and out["opened"] is True
    assert (tmp_path / "opened").read_text().strip() == (laptop.home / "view" / "index.html").as_uri()
    laptop.env = env | {"BROWSER": "false"}
    status, text, err = laptop.run("view", "--open", cwd=laptop.user_home)
    assert status == 0 and str(laptop.home / "view" / "index.html") in text
    assert err.count("\n") == 1 and "could not open a browser" in err


def test_view_without_a_configured_store_says_how_to_set_up(tmp_path):
    m = make_machine(tmp_path, "fresh")
    status, out, _ = m.json("view")
    assert status != 0 and out["status"] == "error" and out["error"] == "not-configured"


def test_view_of_a_missing_store_folder_is_never_an_empty_store(tmp_path):  # INV store-identity
    store = tmp_path / "store"
    new_folder_store(store)
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = make_machine(tmp_path, "laptop", store, {checkout: "app"})
    saved(m, checkout, "a note")
    (store / ".agentmem-store").rename(store / "moved-marker")
    status, out, _ = m.json("view", cwd=m.user_home)
    assert status == 0 and out["notes"] == 1 and out["stale"] is True  # the cached note, said to be stale


def test_the_page_lists_the_shared_skills_with_their_revisions(laptop, tmp_path):
    src = tmp_path / "skill-src" / "tidy"
    src.mkdir(parents=True)
    (src / "SKILL.md").write_text("---\nname: tidy\ndescription: Tidy things up.\n---\n\nDo it.\n")
    status, published, _ = laptop.json("publish-skill", str(src), cwd=laptop.checkout)
    assert status == 0
    laptop.json("view", cwd=laptop.user_home)
    [skill] = page_data((laptop.home / "view" / "index.html").read_bytes())["skills"]
    assert skill["name"] == "tidy" and skill["installed"] == []
    assert [(r["revision"], r["description"]) for r in skill["revisions"]] == [(published["revision"], "Tidy things up.")]


def test_the_records_states_show_and_a_purged_note_is_gone(laptop):  # INV purged-gone
    m, cwd = laptop, laptop.checkout
    kept = saved(m, cwd, "Plain note")
    wrong = saved(m, cwd, "No longer true")
    due = saved(m, cwd, "Check me again", "--review-by", "2020-01-01")
    pinned = saved(m, cwd, "Always remember this")
    leaked = saved(m, cwd, "Personal data that must go")
    assert m.json("retract", wrong, "--reason", "the API changed", cwd=cwd)[0] == 0
    assert m.json("pin", pinned, cwd=cwd)[0] == 0
    assert m.json("purge", leaked, "--yes", cwd=cwd)[0] == 0
    status, out, _ = m.json("view", cwd=m.user_home)
    html = (m.home / "view" / "index.html").read_bytes()
    notes = {n["id"]: n for n in page_data(html)["notes"]}
    assert status == 0 and out["notes"] == 4 and set(notes) == {kept, wrong, due, pinned}
    assert leaked.encode() not in html and b"Personal data" not in html
    names = {i: [s["name"] for s in n["states"]] for i, n in notes.items()}
    assert names == {kept: [], wrong: ["retracted"], due: ["review-due"], pinned: ["pinned"]}
    [retraction] = notes[wrong]["states"]
    assert "the API changed" in retraction["detail"] and "laptop" in retraction["detail"]
    assert notes[due]["review_by"] == "2020-01-01" and "2020-01-01" in notes[due]["states"][0]["detail"]
