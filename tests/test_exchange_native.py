"""Other tools' memories where and as each CLI now writes them, each into the project it belongs to
(issue U, items 5 and 6)."""

from __future__ import annotations

import hashlib
import json

from agentmem import errors
from tests.fixtures_core import laptop, machines, store_dir  # noqa: F401

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def _gemini_home(m, tmp_path):
    """Gemini CLI 0.61.0's files: the global GEMINI.md, and a private memory folder per project under
    ~/.gemini/tmp/<project id>/memory, the id's owner in .project_root (and projects.json)."""
    gemini = m.user_home / ".gemini"
    gemini.mkdir()
    (gemini / "GEMINI.md").write_text(
        "# My preferences\n\n- I prefer pnpm over npm.\n- Keep answers short.\n\n"
        "<!-- agent-memory:begin -->\nagentmem's own block: not a memory\n<!-- agent-memory:end -->\n")
    app = gemini / "tmp" / "app"
    (app / "memory").mkdir(parents=True)
    (app / ".project_root").write_text(str(m.checkout))
    (app / "memory" / "MEMORY.md").write_text(
        "# Project memory\n\n- My local database runs on port 5433.\n- [Local setup](local-setup.md)\n")
    (app / "memory" / "local-setup.md").write_text("# Local setup\nRun `make dev` after a pull.\n")
    elsewhere = tmp_path / "src" / "unmapped"
    elsewhere.mkdir(parents=True)
    other = gemini / "tmp" / "unmapped"
    (other / "memory").mkdir(parents=True)
    (other / ".project_root").write_text(str(elsewhere))
    (other / "memory" / "MEMORY.md").write_text("- The unmapped repo uses yarn.\n")
    legacy = gemini / "tmp" / hashlib.sha256(str(m.checkout).encode()).hexdigest()  # before the slug ids
    (legacy / "memory").mkdir(parents=True)
    (legacy / "memory" / "GEMINI.md").write_text("- Staging deploys need the VPN.\n")
    (gemini / "projects.json").write_text(json.dumps({"projects": {str(m.checkout): "app",
                                                                   str(elsewhere): "unmapped"}}))
    return gemini


def test_gemini_memories_go_to_the_project_each_belongs_to_and_global_ones_ask_for_a_project(laptop, tmp_path):
    _gemini_home(laptop, tmp_path)
    status, out, err = laptop.json("import", "--from", "gemini", "--apply", cwd=laptop.user_home)
    assert status == errors.EXIT_ATTENTION, err  # the global memories, refused without --project
    by_title = {i["title"]: i for i in out["items"]}
    for title in ("My local database runs on port 5433.", "Local setup", "Staging deploys need the VPN."):
        assert by_title[title]["action"] == "save" and by_title[title]["project"] == "app", by_title[title]
    for title in ("I prefer pnpm over npm.", "Keep answers short."):
        assert by_title[title]["action"] == "refused" and "--project" in by_title[title]["reason"]
    assert by_title["The unmapped repo uses yarn."]["action"] == "refused"
    assert "not mapped" in by_title["The unmapped repo uses yarn."]["reason"]
    assert not any("agentmem's own block" in t for t in by_title)
    saved = next(s for s in out["saved"])
    status, note, _ = laptop.json("read", saved["id"], cwd=laptop.checkout)
    assert note["meta"]["agent"].startswith("gemini") and "imported-gemini" in note["meta"]["tags"]
    status, text, _ = laptop.run("import", "--from", "gemini", cwd=laptop.user_home)
    assert "pass --project" in text
    status, out, err = laptop.json("import", "--from", "gemini", "--project", "app", "--apply", cwd=laptop.user_home)
    by_title = {i["title"]: i for i in out["items"]}
    assert by_title["I prefer pnpm over npm."]["action"] == "save" and by_title["Local setup"]["action"] == "present"
    assert by_title["The unmapped repo uses yarn."]["action"] == "refused"


def test_codex_memories_go_to_the_project_their_cwd_maps_to(laptop, tmp_path):
    root = laptop.user_home / ".codex" / "memories"
    (root / "extensions" / "ad_hoc" / "notes").mkdir(parents=True)
    (root / "MEMORY.md").write_text(
        f"# Task Group: app build\nscope: the build\napplies_to: cwd={laptop.checkout}; reuse_rule=this checkout\n"
        "## Task 1: fix the cache key\n### rollout_summary_files\n"
        f"- rollout_summaries/a.md (cwd={laptop.checkout}, rollout_path=/x, updated_at=2026-11-01)\n"
        "### keywords\n- cache, lockfile\n## Reusable knowledge\n- the key includes the lockfile hash\n"
        f"# Task Group: other repo deploys\nscope: deploys\napplies_to: cwd={tmp_path}/nowhere; reuse_rule=x\n"
        "## Reusable knowledge\n- the VPN is needed\n")
    (root / "memory_summary.md").write_text(
        "v1\n## User Profile\nA backend developer who works in small steps.\n\n## User preferences\n"
        "- Short commit messages.\n- Run tests before pushing.\n\n## General Tips\n- Use rg, not grep.\n\n"
        "## What's in Memory\n### app\n- build: cache, lockfile\n  - desc: the app build\n")
    (root / "extensions" / "ad_hoc" / "notes" / "2026-11-02T09-00-00-vpn.md").write_text("Use the office VPN.\n")
    status, out, err = laptop.json("import", "--from", "codex", cwd=laptop.user_home)
    assert status == errors.EXIT_ATTENTION, err  # the global memories, refused without --project
    by_title = {i["title"]: i for i in out["items"]}
    assert by_title["app build"]["action"] == "save" and by_title["app build"]["project"] == "app"
    assert by_title["other repo deploys"]["action"] == "refused" and "not mapped" in by_title["other repo deploys"]["reason"]
    for title in ("Short commit messages.", "Run tests before pushing.", "Use rg, not grep.", "User Profile",
                  "Use the office VPN."):
        assert by_title[title]["action"] == "refused" and "--project" in by_title[title]["reason"], title
    assert not any("desc: the app build" in t or t == "What's in Memory" for t in by_title)
    status, out, err = laptop.json("import", "--from", "codex", "--project", "app", "--apply", cwd=laptop.user_home)
    assert status == errors.EXIT_ATTENTION, err  # the other repository's memory, refused
    assert out["counts"] == {"save": 6, "present": 0, "refused": 1}
    status, note, _ = laptop.json("read", out["saved"][0]["id"], cwd=laptop.checkout)
    assert note["meta"]["agent"].startswith("codex") and "imported-codex" in note["meta"]["tags"]


def test_import_with_redact_is_idempotent(laptop):
    bank = laptop.checkout / "memory-bank"
    bank.mkdir()
    (bank / "deploy.md").write_text(f"# Deploy\nThe deploy token is {TOKEN}\n")
    (bank / "tools.md").write_text("# Tools\nUse pnpm.\n")
    status, out, err = laptop.json("import", "--from", "cline", "--apply", "--redact", cwd=laptop.checkout)
    assert status == 0 and out["counts"] == {"save": 2, "present": 0, "refused": 0}, (out, err)
    for _ in range(2):
        status, out, err = laptop.json("import", "--from", "cline", "--apply", "--redact", cwd=laptop.checkout)
        assert status == 0 and out["counts"] == {"save": 0, "present": 2, "refused": 0}, out
        assert out["saved"] == []
    status, out, _ = laptop.json("import", "--from", "cline", cwd=laptop.checkout)  # without --redact too
    assert out["counts"] == {"save": 0, "present": 2, "refused": 0}
    notes = laptop.user_home.parent.parent / "shared-store" / "projects" / "app" / "notes"
    assert len(list(notes.glob("*.md"))) == 2


def test_a_token_in_a_memory_files_name_is_never_printed(laptop):
    bank = laptop.checkout / "memory-bank"
    bank.mkdir()
    (bank / f"deploy-{TOKEN}.md").write_text("Deploys go through the release branch.\n")
    for extra in ([], ["--apply"], ["--apply", "--redact"]):
        status, text, err = laptop.run("import", "--from", "cline", *extra, cwd=laptop.checkout)
        assert TOKEN not in text + err, extra
        status, out, err = laptop.json("import", "--from", "cline", *extra, cwd=laptop.checkout)
        assert TOKEN not in json.dumps(out) + err, extra
    (item,) = out["items"]
    assert item["action"] in ("save", "present") and "[REDACTED" in item["source"]
    status, text, _ = laptop.run("search", "release branch", cwd=laptop.checkout)
    assert TOKEN not in text


def test_one_gemini_project_memory_folder_given_as_path_goes_to_the_project_its_marker_names(laptop, tmp_path):
    gemini = _gemini_home(laptop, tmp_path)
    legacy = next(p for p in (gemini / "tmp").iterdir() if len(p.name) == 64) / "memory"
    (legacy.parent / ".project_root").write_text(str(laptop.checkout))
    status, out, err = laptop.json("import", "--from", "gemini", legacy, cwd=laptop.user_home)
    assert status == 0, err
    assert [(i["title"], i["action"], i["project"]) for i in out["items"]] == [
        ("Staging deploys need the VPN.", "save", "app")]


def test_a_memory_bank_of_another_checkout_goes_to_that_checkouts_project_not_the_current_one(machines, tmp_path):
    app, web, loose = (tmp_path / "src" / name for name in ("app", "web", "loose"))
    for checkout in (app, web, loose):
        (checkout / "memory-bank").mkdir(parents=True)
    m = machines("laptop", {app: "app", web: "web"})
    (web / "memory-bank" / "deploy.md").write_text("# Deploy\nThe web app deploys from the release branch.\n")
    status, out, err = m.json("import", "--from", "cline", str(web / "memory-bank"), "--apply", cwd=app)
    assert status == 0 and [i["project"] for i in out["items"]] == ["web"], (out, err)
    status, found, _ = m.json("search", "release branch", cwd=web)
    assert [r["title"] for r in found["results"]] == ["Deploy"]
    status, found, _ = m.json("search", "release branch", cwd=app)
    assert found["results"] == []
    # --project naming another project refuses it, saying whose it is
    status, out, _ = m.json("import", "--from", "cline", str(web / "memory-bank"), "--project", "app", cwd=app)
    assert status == errors.EXIT_ATTENTION and out["items"][0]["action"] == "refused"
    assert "belongs to project web" in out["items"][0]["reason"]
    # a bank in an unmapped folder goes nowhere without --project, and where --project says with it
    (loose / "memory-bank" / "tools.md").write_text("# Tools\nThis repository uses pnpm.\n")
    status, out, _ = m.json("import", "--from", "cline", str(loose / "memory-bank"), cwd=app)
    assert status == errors.EXIT_ATTENTION and out["items"][0]["action"] == "refused"
    assert "is not mapped here" in out["items"][0]["reason"] and "--project" in out["items"][0]["reason"]
    status, out, _ = m.json("import", "--from", "cline", str(loose / "memory-bank"), "--project", "app", cwd=app)
    assert status == 0 and out["items"][0]["project"] == "app" and out["items"][0]["action"] == "save"
    # run inside the checkout holding it, a bank stays that checkout's
    status, out, _ = m.json("import", "--from", "cline", cwd=web)
    assert status == 0 and out["items"][0]["project"] == "web" and out["items"][0]["action"] == "present"
