"""`agentmem view` writes a page of this machine's memory, its note files beside it: what it gathers, how honest
it is about freshness, and what the files hold (the page's behaviour in a real browser: test_view_browser.py)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import stat
from pathlib import Path

from agentmem.errors import Command
from agentmem.view import commands, files, page
from tests.fixtures_core import make_machine, new_folder_store, save_pending
from tests.test_secrets_cli import fake

HOSTILE = '</script><!-- <script>alert(1)</script> & \u2028\u2029 </textarea>'


def page_data(html: bytes) -> dict:
    """The JSON the page carries, read back as the browser reads it."""
    text = html.decode("utf-8")
    m = re.search(r'<script type="application/json" id="memory-data">(.*?)</script>', text, re.S)
    assert m, "the page carries its data"
    return json.loads(m.group(1))


FILE_CALL = re.compile(r'^agentmemViewFile\(("[^"]*"),("[nt]"),(\d+),(.*)\);\n$', re.S)


def note_file(path: Path):
    """(generation, kind, number, data) of one note file, read back as the browser runs it."""
    m = FILE_CALL.match(path.read_text(encoding="utf-8"))
    assert m, f"{path} is one call of the page's callback"
    return json.loads(m.group(1)), json.loads(m.group(2)), int(m.group(3)), json.loads(m.group(4))


def view_files(html_path: Path) -> list[Path]:
    """Every file the page's note folder holds."""
    return sorted(p for p in Path(files.companion(str(html_path))).rglob("*") if p.is_file())


def shown_notes(html_path: Path) -> list[dict]:
    """Every note the page shows, as one dict each: its row in the page and its details from its note file."""
    data = page_data(html_path.read_bytes())
    cols, where = data["notes"], data["files"]
    folder = html_path.parent / where["dir"]
    details: list[dict] = []
    k = 0
    while (folder / f"n{k}.js").exists():
        generation, kind, number, batch = note_file(folder / f"n{k}.js")
        assert (generation, kind, number) == (where["generation"], "n", k)
        details.extend(batch)
        k += 1
    count, t = cols["count"], cols["tables"]
    assert len(details) == count
    ids = cols["id"].split("\n") if count else []
    names = {s["code"]: s["name"] for s in t["states"]}
    out = []
    for i in range(count):
        attr = int(cols["attr"].split(",")[i], 36)
        np, nk = len(t["projects"]), len(t["kinds"])
        d = details[i]
        fixes = cols["corrects"].get(str(i))
        out.append({
            "id": ids[i], "project": t["projects"][attr % np], "kind": t["kinds"][attr // np % nk],
            "agent": t["agents"][attr // (np * nk)], "title": d.get("title", cols["title"].split("\n")[i]),
            "short_title": cols["title"].split("\n")[i], "tags": [t["tags"][x] for x in cols["tags"].get(str(i), [])],
            "sources": d.get("sources", []), "body": d["body"], "session": d.get("session"),
            "review_by": d.get("review_by"), "states": d.get("states", []),
            "state_codes": [names[c] for c in cols["states"].split(",")[i]],
            "corrects": ids[fixes] if isinstance(fixes, int) else fixes,
            "corrected_by": [ids[r] for r in cols["corrected_by"].get(str(i), [])],
        })
    return out


def by_id(html_path: Path) -> dict[str, dict]:
    return {n["id"]: n for n in shown_notes(html_path)}


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
    for rule, text, more in (("script-src", scripts[0], " 'self'"), ("style-src", styles[0], "")):
        digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
        # that one element, nothing else inline; scripts also from files (the note files: file: URLs when the
        # page is opened from disk), never from a network
        assert rules[rule] == f"'sha256-{digest}'{more}"
    assert html.count("<script") == 2  # the inert data and the page's own script


def test_view_shows_every_project_this_machine_knows_by_default(machines, tmp_path):
    m, web, api = two_projects(machines, tmp_path)
    ids = {saved(m, web, "Cache key is the lockfile hash", "--tag", "build"), saved(m, api, "Rate limit is 100/s")}
    status, out, err = m.json("view", cwd=m.user_home)  # run from outside any project
    assert status == 0, err
    assert out["path"] == str(m.home / "view" / "index.html") and out["notes"] == 2
    assert sorted(out["projects"]) == ["api", "web"] and out["stale"] is False
    notes = shown_notes(m.home / "view" / "index.html")
    assert {n["id"] for n in notes} == ids
    note = next(n for n in notes if n["project"] == "web")
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
    assert theirs in {n["id"] for n in shown_notes(m.home / "view" / "index.html")}


def test_a_view_of_an_unreachable_store_says_it_may_be_stale_and_shows_what_is_pending(offline_machine):
    # INV read-your-writes: a store that did not answer is said, never shown as an empty store
    m = offline_machine
    note_id = save_pending(m, "kept on this machine", title="Waiting note")
    status, out, err = m.json("view", cwd=m.user_home)
    assert status == 0, err
    assert out["stale"] is True and any("app" in r for r in out["stale_reasons"])
    data = page_data((m.home / "view" / "index.html").read_bytes())
    [note] = shown_notes(m.home / "view" / "index.html")
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
    html_path = laptop.home / "view" / "index.html"
    for path in (html_path, *view_files(html_path)):  # the page and every note file (bodies, search postings)
        held = path.read_bytes()
        assert token.encode() not in held and hf.encode() not in held, path
        assert token[4:].lower().encode() not in held and hf[3:].lower().encode() not in held, path  # nor as terms
    [note] = shown_notes(html_path)
    assert "[REDACTED:" in note["title"] and "[REDACTED:" in note["body"] and "[REDACTED:" in note["tags"][0]
    assert page_data(html_path.read_bytes())["withheld"] >= 3


def test_corrections_link_both_ways(laptop):  # INV corrections-visible
    old = saved(laptop, laptop.checkout, "Deploys go out on Fridays")
    new = saved(laptop, laptop.checkout, "Deploys never go out on Fridays", "--corrects", old)
    laptop.json("view", cwd=laptop.user_home)
    notes = by_id(laptop.home / "view" / "index.html")
    assert notes[old]["corrected_by"] == [new] and notes[new]["corrects"] == old
    assert notes[new]["corrected_by"] == [] and notes[old]["corrects"] is None


def test_output_writes_the_named_file_and_refuses_a_folder(laptop, tmp_path):
    saved(laptop, laptop.checkout, "a note")
    target = tmp_path / "out" / "memory.html"
    status, out, _ = laptop.json("view", "--output", str(target), cwd=laptop.user_home)
    assert status == 0 and out["path"] == str(target) and target.stat().st_size == out["bytes"]
    assert out["files"] == str(tmp_path / "out" / "memory.files") and len(shown_notes(target)) == 1
    assert not [p for p in target.parent.rglob("*") if p.name.startswith(".tmp-")]  # INV atomic-write
    status, out, err = laptop.json("view", "--output", str(tmp_path), cwd=laptop.user_home)
    assert status == 2 and out["error"] == "invalid-input" and "is a folder" in out["message"]
    (step,) = out["next"]  # the way out, as data, and it runs as given
    assert step["argv"] == ["view", "--output", str(tmp_path / "memory.html")] and step["command"] in out["message"]
    status, out, _ = laptop.json(*step["argv"], cwd=laptop.user_home)
    assert status == 0 and out["path"] == str(tmp_path / "memory.html")


def test_a_file_where_the_pages_note_folder_goes_is_refused_naming_what_to_move_and_leaves_it_alone(laptop, tmp_path):
    saved(laptop, laptop.checkout, "a note")
    target = tmp_path / "memory.html"
    blocker = tmp_path / "memory.files"
    blocker.write_text("mine")
    status, out, err = laptop.json("view", "--output", str(target), cwd=laptop.user_home)
    assert status == 2 and out["error"] == "invalid-input" and "in the way" in out["message"]
    assert [s["text"] for s in out["next"]] == [f"move or delete {blocker}, which is not a folder",
                                                 "or write the page elsewhere with --output PATH"]
    assert blocker.read_text() == "mine" and not target.exists()
    status, _, err = laptop.run("view", "--output", str(target), cwd=laptop.user_home)
    assert status == 2 and err.count("\n") == 1 and f"(move or delete {blocker}, which is not a folder, or " in err


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
    html_path = m.home / "view" / "index.html"
    notes = by_id(html_path)
    assert status == 0 and out["notes"] == 4 and set(notes) == {kept, wrong, due, pinned}
    for path in (html_path, *view_files(html_path)):
        assert leaked.encode() not in path.read_bytes() and b"Personal data" not in path.read_bytes(), path
    names = {i: [s["name"] for s in n["states"]] for i, n in notes.items()}
    assert names == {kept: [], wrong: ["retracted"], due: ["review-due"], pinned: ["pinned"]}
    [retraction] = notes[wrong]["states"]
    assert "the API changed" in retraction["detail"] and "laptop" in retraction["detail"]
    assert notes[due]["review_by"] == "2020-01-01" and "2020-01-01" in notes[due]["states"][0]["detail"]


# --- U item 11 and W item 5: note files beside the page, commands, code points ------------------------


def plant(store_dir: Path, project: str, note_id: str, title: str, body: str, extra: str = "") -> None:
    """A note written into the folder store by hand (as another tool, or a person, could)."""
    folder = store_dir / "projects" / project / "notes"
    folder.mkdir(parents=True, exist_ok=True)
    created = f"{note_id[:4]}-{note_id[4:6]}-{note_id[6:8]}T{note_id[9:11]}:{note_id[11:13]}:{note_id[13:15]}.000Z"
    (folder / f"{note_id}.md").write_text(
        f'---\nid: "{note_id}"\ntitle: {json.dumps(title)}\nkind: "note"\nproject: "{project}"\n'
        f'created: "{created}"\nagent: "bob@host"\n{extra}---\n\n{body}\n', encoding="utf-8")


def test_note_text_in_the_note_files_is_data_that_cannot_break_out(laptop):  # INV view-inert
    note = saved(laptop, laptop.checkout, HOSTILE, "--title", "hostile </script> title")
    laptop.json("view", cwd=laptop.user_home)
    html_path = laptop.home / "view" / "index.html"
    held = view_files(html_path)
    assert [p.name for p in held] == ["n0.js", "t0.js"]
    for path in held:
        text = path.read_text(encoding="utf-8")
        assert not set(text) & set("<>&\u2028\u2029"), path  # written as \uXXXX escapes, read back by JS as they were
        assert text.startswith(files.CALLBACK + "(") and text.count("\n") == 1
    [shown] = shown_notes(html_path)
    assert shown["id"] == note and shown["body"].rstrip("\n") == HOSTILE.replace("\u2028", "<U+2028>").replace(
        "\u2029", "<U+2029>")
    assert HOSTILE.encode() not in html_path.read_bytes()  # a body is in its note file only


def view_of_many(tmp_path: Path, count: int) -> dict:
    """`agentmem view --offline --json`'s output on a machine whose cache holds `count` of bench/view.py's
    synthetic notes. They go straight into the cache (the store's layout), which is all an offline view
    reads: the page at that size is what such a test is about; the first sync is bench/view.py's to time."""
    import subprocess
    import sys

    from agentmem.paths import cache_root
    from agentmem.store.base import StoreDescription
    from agentmem.store.folder import create_store
    from bench import view as bench

    root = tmp_path / "m"
    create_store(str(root / "store"))
    env = bench.machine(root, root / "store")
    cwd = env.pop("_cwd")
    bench.fill(Path(cache_root(env["AGENTMEM_HOME"])) / StoreDescription("folder", str(root / "store")).key, count)
    done = subprocess.run([sys.executable, "-m", "agentmem", "view", "--offline", "--json"], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["notes"] == count, done.stderr
    return out


def test_a_page_of_many_notes_holds_their_rows_and_its_files_hold_the_rest(tmp_path):
    """W item 5: the page holds each note's row (ID, a short title, project, kind, agent, tags, states), its
    bodies are in note files of NOTES_PER_FILE notes, and its search postings in term files."""
    out = view_of_many(tmp_path, 1_000)
    html_path = Path(out["path"])
    names = [p.name for p in view_files(html_path)]
    assert sorted(n for n in names if n.startswith("n")) == [f"n{k}.js" for k in range(4)]  # 250 notes a file
    assert sum(1 for n in names if n.startswith("t")) == page_data(html_path.read_bytes())["files"]["term_files"] >= 2
    # about 80 bytes a note here (titles of 6 words), 1,290 before; the fixed part is the script and style
    assert out["bytes"] < 60_000 + 120 * 1_000, out["bytes"]
    assert b"The build cache key is the lockfile hash" not in html_path.read_bytes()
    notes = shown_notes(html_path)
    assert sum(1 for n in notes if "The build cache key is the lockfile hash" in n["body"]) == 25
    assert [n["id"] for n in notes] == sorted((n["id"] for n in notes), reverse=True)  # newest first


def test_the_search_postings_are_the_terms_and_lengths_the_search_index_scores(laptop):
    """The page ranks from its term files as `agentmem search` ranks from its index: per note, the same term
    counts (title and tags counted TITLE_WEIGHT times) and the same length."""
    from agentmem.replica import cache
    from agentmem.search import index

    saved(laptop, laptop.checkout, "Redis latency spikes when the cache key changes.\n\nSee src/cache.py",
          "--title", "Redis latency", "--tag", "redis", "--source", "https://example.com/redis-latency")
    saved(laptop, laptop.checkout, "Deploys wait for the schema migration; latency is fine", "--tag", "deploy")
    saved(laptop, laptop.checkout, "Ünïcödé wörds and naïve café stay whole; running runs ran")
    html_path = laptop.home / "view" / "index.html"
    terms = []
    for _ in ("made by the view", "taken from the search index"):
        laptop.json("view", cwd=laptop.user_home)
        terms.append({p.name: note_file(p)[3] for p in view_files(html_path) if p.name.startswith("t")})
        assert laptop.json("search", "latency", cwd=laptop.checkout)[0] == 0  # builds the index
    assert terms[0] == terms[1]
    data = page_data(html_path.read_bytes())
    ids = data["notes"]["id"].split("\n")
    dls = [int(x, 36) for x in data["notes"]["dl"].split(",")]
    tf: dict[int, dict[str, int]] = {i: {} for i in range(len(ids))}
    for path in view_files(html_path):
        if path.name.startswith("t"):
            for term, text in note_file(path)[3].items():
                assert files.term_file(term, data["files"]["term_files"]) == note_file(path)[2]
                row = -1
                for entry in text.split(","):
                    head, *places = entry.split(".")
                    step, _, count = head.partition("/")
                    row += int(step, 36)
                    tf[row][term] = int(count, 36) if count else len(places)
    ndir = cache.notes_dir(laptop.home, _store(laptop), "app")
    for i, note_id in enumerate(ids):
        doc = index.read_doc(ndir, note_id)
        assert doc is not None and dict(doc.tf) == tf[i] and doc.dl == dls[i], note_id


def _store(m):
    from agentmem.config import load

    return load(m.home).store


def test_bidi_and_zero_width_characters_show_as_code_points_as_the_cli_shows_them(laptop, store_dir):
    """U item 11: what would hide or reorder text shows as `<U+XXXX>` (safety/framing.py `clean`, the CLI's)."""
    from agentmem.safety.framing import clean

    tricky = "pay \u202etxt.exe\u202c to \u200bbob\u2066 now\u00ad"
    plant(store_dir, "app", "20261201T100000000Z-aaaaaaaa", f"Title {tricky}", f"Body {tricky}\nline two",
          extra=f'tags: [{json.dumps("tag" + chr(0x200D) + "x")}]\nsession: {json.dumps("s" + chr(0x2067))}\n')
    status, out, err = laptop.json("view", cwd=laptop.user_home)
    assert status == 0 and out["notes"] == 1, err
    html_path = laptop.home / "view" / "index.html"
    [note] = shown_notes(html_path)
    assert note["title"] == note["short_title"] == clean(f"Title {tricky}") == \
        "Title pay <U+202E>txt.exe<U+202C> to <U+200B>bob<U+2066> now<U+00AD>"
    assert note["body"] == f"Body {clean(tricky)}\nline two\n"
    assert note["tags"] == ["tag<U+200D>x"] and note["session"] == "s<U+2067>"
    for path in (html_path, *view_files(html_path)):
        text = path.read_text(encoding="utf-8")
        assert not {"\u202e", "\u200b", "\u2066", "\u00ad", "\u200d", "\u2067"} & set(text), path


def test_each_note_carries_the_commands_that_act_on_it_exactly_as_the_cli_renders_them(laptop):
    """U item 11: retract, pin or unpin, purge, each the line `errors.Command` renders (the absolute helper,
    quoted); the one the page gives runs as given."""
    import shlex
    import subprocess

    note = saved(laptop, laptop.checkout, "Always run the migrations first", "--title", "Migrations")
    laptop.json("view", cwd=laptop.user_home)
    data = page_data((laptop.home / "view" / "index.html").read_bytes())
    given = data["commands"]["app"]
    expected = {"retract": Command("retract", note, "--project", "app", "--reason", "no longer true"),
                "pin": Command("pin", note, "--project", "app"), "unpin": Command("unpin", note, "--project", "app"),
                "purge": Command("purge", note, "--project", "app")}
    assert {k: commands.for_note(v, note) for k, v in given["lines"].items()} == {k: c.line() for k, c in expected.items()}
    assert shlex.split(commands.for_note(given["lines"]["pin"], note))[0].startswith("/")  # the absolute helper
    done = subprocess.run(shlex.split(commands.for_note(given["lines"]["pin"], note)), cwd=laptop.user_home,
                          env=laptop.env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and f"pinned {note}" in done.stdout, done.stderr
    laptop.json("view", cwd=laptop.user_home)
    assert by_id(laptop.home / "view" / "index.html")[note]["state_codes"] == ["pinned"]


def test_a_project_not_mapped_here_gets_no_commands_but_how_to_map_it(machines, tmp_path):
    m, web, _ = two_projects(machines, tmp_path)
    other_dir = tmp_path / "elsewhere" / "ops"
    other_dir.mkdir(parents=True)
    saved(machines("desktop", {other_dir: "ops"}), other_dir, "a note of a project no directory here maps")
    saved(m, web, "mine")
    assert m.json("view", "--all", cwd=m.user_home)[0] == 0
    data = page_data((m.home / "view" / "index.html").read_bytes())
    assert data["commands"]["ops"] == {"lines": None, "map": Command("map", "DIRECTORY", "ops").line()}
    assert data["commands"]["web"]["lines"]["pin"] == Command("pin", commands.PLACEHOLDER, "--project", "web").line()


def test_a_pending_note_gives_its_retry_command_first_and_its_last_error_as_past(offline_machine):
    """U item 11: a pending note says how to retry it (the line `agentmem pending` prints), and its last error
    with when it happened, which may be long ago."""
    m = offline_machine
    note_id = save_pending(m, "kept on this machine", title="Waiting note")
    m.json("view", cwd=m.user_home)
    [note] = shown_notes(m.home / "view" / "index.html")
    [state] = note["states"]
    printed = m.run("pending", cwd=m.user_home)[1]
    assert f"retry: {state['command']}" in printed and state["command"] == Command("save", "--retry", note_id).line()
    assert re.search(r"the last attempt on \d{4}-\d\d-\d\d \d\d:\d\d UTC \(1 attempt\(s\)\) failed: ", state["detail"])


def test_the_same_id_in_two_projects_is_two_notes(machines, tmp_path, store_dir):
    """U item 11: a note ID is unique within a project only; each row keeps its own project's note."""
    m, _, _ = two_projects(machines, tmp_path)
    twin = "20261201T100000000Z-twintwin"
    plant(store_dir, "web", twin, "Web twin", "the web project's note")
    plant(store_dir, "api", twin, "Api twin", "the api project's note")
    fixer = "20261202T100000000Z-fixfixfi"
    plant(store_dir, "api", fixer, "Api fix", "corrects the api twin only", extra=f'corrects: "{twin}"\n')
    assert m.json("view", cwd=m.user_home)[0] == 0
    notes = {(n["project"], n["id"]): n for n in shown_notes(m.home / "view" / "index.html")}
    assert notes[("web", twin)]["body"] == "the web project's note\n" and notes[("web", twin)]["corrected_by"] == []
    assert notes[("api", twin)]["body"] == "the api project's note\n" and notes[("api", twin)]["corrected_by"] == [fixer]


def test_a_new_page_replaces_the_note_files_of_the_last_and_a_purged_note_leaves_none(laptop):  # INV purged-gone
    cwd = laptop.checkout
    kept = saved(laptop, cwd, "Keep this one")
    leaked = saved(laptop, cwd, "Personal data that must go")
    laptop.json("view", cwd=laptop.user_home)
    html_path = laptop.home / "view" / "index.html"
    first = {p.parent.name for p in view_files(html_path)}
    assert any(b"Personal data" in p.read_bytes() for p in view_files(html_path))
    assert laptop.json("purge", leaked, "--yes", cwd=cwd)[0] == 0
    laptop.json("view", cwd=laptop.user_home)
    second = {p.parent.name for p in view_files(html_path)}
    assert len(first) == len(second) == 1 and first != second  # one generation: the page's own
    assert not any(b"Personal data" in p.read_bytes() for p in view_files(html_path))
    assert set(by_id(html_path)) == {kept}


def test_once_the_view_has_read_its_notes_no_search_index_stays_locked(laptop):
    """The view takes cached notes' terms from the search index in short read transactions (search/stored.py);
    once every note is read, the last one is over: a writer of the index gets it at once, while the page is
    still being written, rather than waiting on the view's open read."""
    import sqlite3

    from agentmem.config import load
    from agentmem.replica import cache
    from agentmem.search import index
    from agentmem.view import data

    saved(laptop, laptop.checkout, "Redis latency spikes when the cache key changes", "--title", "Redis latency")
    assert laptop.json("search", "latency", cwd=laptop.checkout)[0] == 0  # builds the index
    cfg = load(laptop.home)
    gathered = data.gather(str(laptop.home), cfg, offline=True)
    try:
        assert len(list(gathered.notes.details())) == 1
        path = index.index_path(cache.project_dir(laptop.home, cfg.store, "app"))
        writer = sqlite3.connect(path, timeout=0, isolation_level=None)
        try:
            writer.execute("BEGIN EXCLUSIVE")  # "database is locked" while a reader holds it
            writer.execute("ROLLBACK")
        finally:
            writer.close()
    finally:
        gathered.close()
