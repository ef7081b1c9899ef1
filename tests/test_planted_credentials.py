"""A credential planted straight into a store (by hand, an older version, another tool) never reaches any output.

The note is written into the folder store's folder, or put into the bucket through the loopback Hub,
as something other than agentmem's save would; then every way out is tried: read and search (text and
--json, every mode), the MCP tools through the SDK's own client, the reminder hook, pending, and every
byte under the machine's cache/ (the SQLite index included).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentmem.safety import credentials
from tests.fixtures_core import REPO
from tests.fixtures_hub import BucketMachine
from tests.mcpkit import call, session
from tests.test_secrets_cli import fake

NOTE_ID = "20261130T101500000Z-plantedz"
TOKEN = fake("ghp_", 36)
GLUED = fake("ghp_", 40)  # written glued onto a word: "checkpoint" + GLUED


def planted(token: str = TOKEN, glued: str | None = None) -> bytes:
    """A hand-written note (YAML frontmatter, as another tool writes it) with the token in title, tags, body."""
    extra = f"Saved at checkpoint{glued} by the old tool.\n" if glued else ""
    return (
        "---\n"
        f"id: {NOTE_ID}\n"
        f"title: Deploy with {token}\n"
        "kind: note\n"
        "project: app\n"
        "created: 2026-11-30T10:15:00.000Z\n"
        "agent: by-hand\n"
        f"tags: [zebra, {token}]\n"
        "---\n\n"
        "The zebra pipeline deploys from the release branch.\n"
        f"Push with {token} as the password.\n"
        f"{extra}"
        "Ask the platform team before rotating it.\n"
    ).encode()


class FolderSide:
    def __init__(self, laptop, store_dir: Path):
        self.m, self.store_dir = laptop, store_dir
        self.home, self.cwd, self.env = laptop.home, laptop.checkout, laptop.env

    def plant(self, data: bytes) -> None:
        folder = self.store_dir / "projects" / "app" / "notes"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{NOTE_ID}.md").write_bytes(data)

    def run(self, *args, input=None):
        return self.m.run(*args, input=input, cwd=self.cwd)


class BucketSide:
    def __init__(self, hub, root: Path):
        hub.add_user("alice")
        hub.add_bucket("alice/agent-memory", private=True)
        self.hub, self.token = hub, hub.add_token("alice", write=True)
        self.m = BucketMachine(root, hub, self.token)
        self.home, self.cwd = self.m.home, self.m.src
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home.parent),
                    "AGENTMEM_HOME": str(self.home), "HF_HOME": str(self.m.hf_home), "HF_ENDPOINT": hub.url,
                    "HF_HUB_DISABLE_PROGRESS_BARS": "1", "PYTHONPATH": str(REPO), "HF_TOKEN": self.token}

    def plant(self, data: bytes) -> None:
        self.hub.put_file("alice/agent-memory", f"projects/app/notes/{NOTE_ID}.md", data)

    def run(self, *args, input=None):
        done = self.m.run(*args, stdin=input.decode() if isinstance(input, bytes) else input)
        return done.returncode, done.stdout, done.stderr


@pytest.fixture(params=["folder", "bucket"])
def side(request, tmp_path):
    if request.param == "folder":
        return FolderSide(request.getfixturevalue("laptop"), request.getfixturevalue("store_dir"))
    return BucketSide(request.getfixturevalue("hub"), tmp_path / "bucket-machine")


def cache_bytes(home: Path) -> dict[str, bytes]:
    root = home / "cache"
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def mcp_outputs(side) -> list[str]:
    async def steps(c):
        read = await call(c, "memory_read", {"id": NOTE_ID})
        found = await call(c, "memory_search", {"query": "zebra pipeline"})
        listed = await call(c, "memory_search", {"query": ""})
        return [read, found, listed]

    replies, stderr = session(side.env, side.cwd, steps)
    for is_error, _, _ in replies:
        assert not is_error
    return [text + json.dumps(data) for _, text, data in replies] + [stderr]


def every_output(side) -> tuple[list[str], dict]:
    status, out, err = side.run("pin", NOTE_ID)  # the session-start reminder then shows the note itself
    assert status == 0 and TOKEN not in out + err, (out, err)
    outs = []
    runs = [("read", NOTE_ID), ("read", NOTE_ID, "--json"), ("read", NOTE_ID, "--fresh", "--json"),
            ("search", "zebra"), ("search", "zebra", "--json"), ("search", "--json"),
            ("search", "rotating", "--mode", "literal", "--json"), ("search", "deploy", "--mode", "literal"),
            ("search", "zebra pipeline", "--mode", "hybrid", "--json"),
            ("hook", "reminder", "--runtime", "codex"), ("hook", "reminder", "--runtime", "claude"),
            ("pending",), ("pending", "--json")]
    parsed = {}
    for args in runs:
        status, out, err = side.run(*args)
        assert status == 0, (args, out, err)
        outs += [out, err]
        if "--json" in args:
            parsed[args] = json.loads(out)
    outs += mcp_outputs(side)
    return outs, parsed


def test_a_token_planted_in_title_tags_and_body_reaches_no_output_and_no_cached_byte(side):
    # INV no-credentials
    side.plant(planted())
    outs, parsed = every_output(side)
    for text in outs:
        assert TOKEN not in text
    assert "[REDACTED:github-token]" in "".join(outs)
    reminder = side.run("hook", "reminder", "--runtime", "codex")[1]
    assert "Deploy with [REDACTED:github-token]" in reminder  # the pinned note, redacted
    for name, data in cache_bytes(side.home).items():
        assert TOKEN.encode() not in data, name
    # Export writes the same redacted notes, and says what it withheld.
    exported = side.home.parent / "exported"
    status, out, err = side.run("export", str(exported), "--project", "app", "--json")
    assert status == 0 and TOKEN not in out + err, (out, err)
    assert {w["id"] for w in json.loads(out)["withheld"]} == {NOTE_ID}
    files = [p for p in exported.rglob("*") if p.is_file()]
    assert files and all(TOKEN.encode() not in p.read_bytes() for p in files)

    read = parsed[("read", NOTE_ID, "--json")]
    assert read["meta"]["id"] == NOTE_ID and read["meta"]["tags"] == ["zebra", "[REDACTED:github-token]"]
    assert read["meta"]["title"] == "Deploy with [REDACTED:github-token]"
    assert {(w["where"], w["kind"]) for w in read["withheld"]} == {
        ("title", "github-token"), ("tags", "github-token"), ("body", "github-token")}
    assert parsed[("read", NOTE_ID, "--fresh", "--json")]["withheld"] == read["withheld"]
    [hit] = parsed[("search", "zebra", "--json")]["results"]
    assert hit["id"] == NOTE_ID and hit["withheld"] == read["withheld"]
    # The other words of the note are still found, in every mode.
    assert [r["id"] for r in parsed[("search", "rotating", "--mode", "literal", "--json")]["results"]] == [NOTE_ID]


def test_a_glued_token_is_withheld_on_every_way_out(side):
    # INV no-credentials
    if not credentials.scan("checkpoint" + GLUED):
        pytest.skip("the scanner does not yet find a token glued onto a word (issue Q item 3, branch q-detect)")
    side.plant(planted(glued=GLUED))
    outs, _ = every_output(side)
    for text in outs:
        assert GLUED not in text and TOKEN not in text
    for name, data in cache_bytes(side.home).items():
        assert GLUED.encode() not in data, name


def test_the_redacted_cached_copy_is_not_taken_for_damage_and_still_takes_corrections(laptop, store_dir):
    # INV no-credentials, INV corrections-visible
    side = FolderSide(laptop, store_dir)
    side.plant(planted())
    status, out, _ = side.run("search", "zebra", "--json")
    assert status == 0 and [r["id"] for r in json.loads(out)["results"]] == [NOTE_ID]
    cached = laptop.home / "cache"
    [copy] = list(cached.rglob(f"{NOTE_ID}.md"))
    before = (copy.stat().st_mtime_ns, copy.read_bytes())
    assert len(before[1]) != len(planted())  # shorter than the store's copy, and not fetched again:
    for _ in range(2):
        assert side.run("search", "zebra", "--refresh", "--json")[0] == 0
    assert (copy.stat().st_mtime_ns, copy.read_bytes()) == before

    status, out, err = side.run("save", "--title", "Zebra deploys use the deploy key", "--corrects", NOTE_ID,
                                "--json", input=b"The zebra pipeline now pushes with the deploy key.\n")
    assert status == 0, err
    fixed = json.loads(out)["id"]
    status, out, _ = side.run("search", "zebra pipeline", "--json")
    results = json.loads(out)["results"]
    assert [r["id"] for r in results] == [fixed, NOTE_ID] and results[1]["corrected_by"] == [fixed]
    assert TOKEN not in out


def test_a_cache_written_before_screening_is_cleaned_and_its_index_rebuilt(laptop, store_dir):
    # INV no-credentials, INV index-derived
    side = FolderSide(laptop, store_dir)
    side.plant(b"---\ntitle: harmless\n---\n\nThe zebra pipeline.\n")
    assert side.run("search", "zebra", "--json")[0] == 0
    # What an older agentmem left: the raw note in the cache, indexed, and no record of screening.
    [pdir] = list((laptop.home / "cache").glob("*/projects/app"))
    (pdir / "notes" / f"{NOTE_ID}.md").write_bytes(planted())
    (pdir / "screened").unlink()
    status, out, _ = side.run("search", "zebra", "--offline", "--json")
    assert status == 0 and TOKEN not in out
    assert NOTE_ID in [r["id"] for r in json.loads(out)["results"]]
    for name, data in cache_bytes(laptop.home).items():
        assert TOKEN.encode() not in data, name


def test_a_pending_note_an_older_version_left_with_a_token_is_searched_and_read_redacted(laptop):
    # INV no-credentials, INV nothing-lost: the pending bytes stay exactly as they are, for the upload
    from agentmem import config
    from agentmem.uploads import pending

    data = planted()
    # Bound for this machine's store (a pending note shows in the search of the store it goes to), which no
    # command below delivers to: none of them uploads.
    entry = pending.Entry(id=NOTE_ID, store=config.load(laptop.home).store, project="app",
                          path=f"projects/app/notes/{NOTE_ID}.md", created="2026-11-30T10:15:00.000Z")
    pending.persist(laptop.home, entry, data)
    outs = []
    for args in (("search", "zebra", "--json"), ("search", "zebra"), ("read", NOTE_ID, "--json"), ("read", NOTE_ID),
                 ("pending",), ("pending", "--json")):
        status, out, err = laptop.run(*args, cwd=laptop.checkout)
        assert status == 0, (args, out, err)
        outs.append(out + err)
    assert all(TOKEN not in text for text in outs) and "[REDACTED:github-token]" in outs[0]
    hit = json.loads(outs[0])["results"][0]
    assert hit["pending"] and {w["where"] for w in hit["withheld"]} == {"title", "tags", "body"}
    assert (laptop.home / "pending" / NOTE_ID / "note.md").read_bytes() == data


def test_a_cache_that_cannot_be_screened_again_is_cleaned_on_the_way_out(laptop, store_dir, monkeypatch):
    # INV no-credentials, INV loud-unwritable: a read-only sandbox after an upgrade still shows no credential
    import errno

    from agentmem import config
    from agentmem.memory import recall
    from agentmem.replica import redacted_copies

    side = FolderSide(laptop, store_dir)
    side.plant(b"---\ntitle: harmless\n---\n\nThe zebra pipeline.\n")
    assert side.run("search", "zebra", "--json")[0] == 0
    [pdir] = list((laptop.home / "cache").glob("*/projects/app"))
    (pdir / "notes" / f"{NOTE_ID}.md").write_bytes(planted())  # what an older version cached
    (pdir / "screened").unlink()

    def read_only(pdir):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(redacted_copies, "rescreen", read_only)
    monkeypatch.setenv("AGENTMEM_HOME", str(laptop.home))
    cfg = config.load(laptop.home)
    for mode, query in (("ranked", "zebra deploy push"), ("literal", "push with")):
        out = recall.search(str(laptop.home), cfg, "app", query, mode=mode, offline=True)
        assert TOKEN not in json.dumps(out)
        assert NOTE_ID in [r["id"] for r in out["results"]], (mode, out)
        hit = next(r for r in out["results"] if r["id"] == NOTE_ID)
        assert hit["withheld"] and "[REDACTED:github-token]" in hit["title"]
    out, data = recall.read(str(laptop.home), cfg, "app", NOTE_ID)
    assert TOKEN not in json.dumps(out) and TOKEN.encode() not in data
    assert {w["where"] for w in out["withheld"]} == {"title", "tags", "body"}
