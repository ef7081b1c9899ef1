"""Clean means clean, on every machine: a purge leaves nothing of the note in the review queue's file or in a
memory view page written earlier, on the machine that purged and on one that learns of it; another machine's
`read` (CLI and MCP `memory_read`) knows of a purge or retraction without searching first; and a retraction
reason holding a credential, written by another tool, is never printed, cached or spoken in the helper's voice.

Two machine homes share one folder store, each through the real CLI."""

from __future__ import annotations

from pathlib import Path

from agentmem.note import records
from agentmem.view import page, written
from tests.fixtures_core import make_machine, new_folder_store
from tests.mcpkit import call, session
from tests.test_secrets_cli import fake


class Two:
    def __init__(self, tmp_path: Path):
        self.root = tmp_path / "store"
        new_folder_store(self.root)
        self.cwd = tmp_path / "app"
        self.cwd.mkdir()
        self.a, self.b = (make_machine(tmp_path, n, self.root, {self.cwd: "app"}, agent=f"codex@{n}") for n in "ab")

    def json(self, m, *args: str) -> tuple[int, dict]:
        status, out, _ = m.json(*args, cwd=self.cwd)
        return status, out

    def text(self, m, *args: str) -> tuple[int, str]:
        status, out, err = m.run(*args, cwd=self.cwd)
        return status, out + err

    def save(self, body: str, title: str) -> str:
        status, out = self.json(self.a, "save", "--title", title, "--text", body)
        assert status == 0, out
        return out["id"]


def _holding(folder: Path, word: bytes) -> list[str]:
    return sorted(str(p) for p in folder.rglob("*") if p.is_file() and word in p.read_bytes())


def test_a_purge_leaves_no_title_in_the_review_file_and_no_view_page_holding_the_note_on_either_machine(tmp_path):
    # INV purged-gone
    t = Two(tmp_path)
    leak = t.save("The deploy token lives in the vault; copy pasted here: numbatword.", "numbattitle deploy")
    t.save("The deploy runs at noon.", "deploy time")
    custom = tmp_path / "pages" / "memory.html"
    for m in (t.a, t.b):
        assert t.json(m, "search", "deploy")[0] == 0
        assert t.json(m, "review")[0] == 0  # review.json keeps each note's title
        assert t.json(m, "view")[0] == 0  # the default page, in the machine folder
    assert t.json(t.b, "view", "--output", str(custom))[0] == 0  # and one where the person asked
    for folder in (t.a.home, t.b.home, custom.parent):
        assert _holding(folder, b"numbattitle"), folder  # the title is in each review file and page
    status, done = t.json(t.a, "purge", leak, "--yes")
    assert status == 0 and done["status"] == "purged" and "view" in done["removed_here"]
    assert _holding(t.a.home, b"numbattitle") == [] and _holding(t.a.home, b"numbatword") == []
    assert t.json(t.b, "search", "deploy")[0] == 0  # B learns of the purge
    assert _holding(t.b.home, b"numbattitle") == [] and _holding(custom.parent, b"numbattitle") == []
    assert [i for i in t.json(t.b, "review")[1]["items"] if leak in i["notes"]] == []
    assert t.json(t.b, "view")[0] == 0  # written again, without the note
    assert b"deploy time" in (t.b.home / "view" / "index.html").read_bytes()


def test_a_view_page_that_is_not_ours_is_never_deleted_and_the_default_page_is_where_view_writes(tmp_path):
    home = tmp_path / "home"
    (home / "view").mkdir(parents=True)
    assert written.pages(home)[0] == page.default_path(str(home))
    (home / "view" / "index.html").write_text("a page of my own naming 20261201T000000000Z-aaaaaaaa")
    assert written.drop_holding(home, ["20261201T000000000Z-aaaaaaaa"]) == []
    assert (home / "view" / "index.html").exists()


def test_bs_read_of_a_note_it_cached_knows_of_a_purge_and_a_retraction_made_on_a_without_searching(tmp_path):
    # INV read-your-writes, INV purged-gone
    t = Two(tmp_path)
    purged = t.save("The staging password is quollword.", "staging access")
    wrong = t.save("The cache lives in /var/cache/app.", "cache place")
    for note_id in (purged, wrong):
        status, out = t.json(t.b, "read", note_id)
        assert status == 0 and out["retracted"] is None  # B has both cached now
    assert t.json(t.a, "purge", purged, "--yes")[0] == 0
    assert t.json(t.a, "retract", wrong, "--reason", "it moved to /srv/cache")[0] == 0
    status, out = t.json(t.b, "read", purged)
    assert status == 4 and out["error"] == "not-found" and "was purged on" in out["message"]
    assert _holding(t.b.home, b"quollword") == []
    status, out = t.json(t.b, "read", wrong)
    assert status == 0 and out["retracted"]["reason"] == "it moved to /srv/cache" and out["stale"] is False
    status, text = t.text(t.b, "read", wrong)
    assert text.startswith("RETRACTED on ")


def test_bs_mcp_read_knows_of_a_purge_and_a_retraction_made_on_a_without_searching(tmp_path):
    # INV read-your-writes, INV purged-gone
    t = Two(tmp_path)
    purged = t.save("The staging password is dibblerword.", "staging access")
    wrong = t.save("The queue holds 100 jobs.", "queue size")

    async def read_both(c):
        return [await call(c, "memory_read", {"id": i}) for i in (purged, wrong)]

    before, _ = session(t.b.env, t.cwd, read_both)
    assert [r[0] for r in before] == [False, False] and before[1][2]["retracted"] is None
    assert t.json(t.a, "purge", purged, "--yes")[0] == 0
    assert t.json(t.a, "retract", wrong, "--reason", "it holds 500 now")[0] == 0
    (gone, retracted), stderr = session(t.b.env, t.cwd, read_both)
    assert stderr == ""
    assert gone[0] is True and "was purged on" in gone[1]
    assert retracted[0] is False and retracted[2]["retracted"]["reason"] == "it holds 500 now"
    assert retracted[1].startswith("RETRACTED on ")


def test_a_retraction_reason_with_a_token_written_by_another_tool_is_never_printed_nor_cached(tmp_path):
    # INV no-credentials, INV framed-recall: the reason is memory content, framed, and withheld
    t = Two(tmp_path)
    token = fake("ghp_", 36)
    note_id = t.save("The CI runner uses the shared cache.", "ci cache")
    record = records.build("retract", note_id, "app", "othertool@ci", f"rotated; the old one was {token}")
    (t.root / record.path()).write_bytes(record.render())  # another tool: no screening of ours on the way in
    status, out = t.json(t.b, "search", "runner", "--include-retracted")
    [shown] = out["results"]
    assert shown["retracted"]["reason"] == "rotated; the old one was [REDACTED:github-token]"
    status, out = t.json(t.b, "read", note_id)
    assert out["retracted"]["reason"] == "rotated; the old one was [REDACTED:github-token]"
    status, text = t.text(t.b, "read", note_id)
    assert status == 0 and token not in text
    lines = text.splitlines()
    reason_line = next(i for i, x in enumerate(lines) if "the old one was" in x)
    assert lines[reason_line].startswith("│ ")  # inside a frame, quoted as data
    assert lines[reason_line - 1].startswith("<<<BEGIN RECALLED MEMORY") and "retraction reason" in lines[reason_line - 1]
    assert _holding(t.b.home, token.encode()) == []  # the cache keeps it withheld too
    assert t.json(t.b, "view")[0] == 0 and _holding(t.b.home, token.encode()) == []
