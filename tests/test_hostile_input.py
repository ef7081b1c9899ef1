"""Hostile input wherever it enters: arguments, config.toml, notes arriving from the store, store listings.

Every case ends with a clear one-line error (or a harmless result) and nothing changed on disk.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from agentmem.note import document
from agentmem.replica import cache
from agentmem.store.base import Changes, Listed, ObjectInfo, StoreDescription
from agentmem.store.opening import open_store
from tests.proptest import given, settings


def snapshot(*roots: Path) -> dict[str, str]:
    """Every file below the roots with a digest of its bytes (and symlinks by target)."""
    out = {}
    for root in roots:
        if not root.exists():
            continue
        for p in sorted(root.rglob("*")):
            if p.is_symlink():
                out[str(p)] = "-> " + os.readlink(p)
            elif p.is_file():
                out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
            else:
                out[str(p)] = "dir"
    return out


def assert_clean_failure(status: int, out: str, err: str, expected: int = 2) -> None:
    assert status == expected, (status, out, err)
    assert "Traceback" not in out + err
    assert err.startswith("agentmem: ") and err.count("\n") == 1, err


TRAVERSAL = ["../../etc/passwd", "..", "a/b", "/etc/passwd", "x\\..\\y", "", "-", "id with space", "ｉｄ", ".hidden"]


@pytest.mark.parametrize("bad", TRAVERSAL)
def test_note_ids_with_separators_or_traversal_are_refused_and_change_nothing(laptop, store_dir, bad):
    laptop.run("save", input="# seed\n\nfirst note\n", cwd=laptop.checkout, check_status=0)
    before = snapshot(laptop.home, store_dir)
    for args in (["read", bad], ["read", "--fresh", bad], ["save", "--retry", bad], ["save", "--corrects", bad]):
        assert_clean_failure(*laptop.run(*args, cwd=laptop.checkout, input="# x\n\nbody\n"))
    assert snapshot(laptop.home, store_dir) == before


@pytest.mark.parametrize("bad", ["../app", "app/../../x", "/abs", "a/b", "APP", "..", "x" * 65, "app\nx"])
def test_project_names_with_separators_or_traversal_are_refused_and_change_nothing(laptop, store_dir, bad):
    before = snapshot(laptop.home, store_dir)
    for args in (["save", "--project", bad], ["search", "--project", bad], ["read", "--project", bad, "x"],
                 ["map", str(laptop.checkout), bad]):
        status, out, err = laptop.run(*args, cwd=laptop.checkout, input="# x\n\nbody\n")
        assert_clean_failure(status, out, err)
    assert snapshot(laptop.home, store_dir) == before


def test_a_config_mapping_to_a_traversing_project_name_is_refused(laptop, store_dir):
    laptop.write_config(
        f'agent = "a"\n[store]\nkind = "folder"\nlocation = "{store_dir}"\n'
        f'[projects]\n"{laptop.checkout}" = "../../outside"\n'
    )
    before = snapshot(laptop.home, store_dir)
    for args in (["save"], ["search"], ["read", "20261130T101502123Z-abcdefgh"]):
        assert_clean_failure(*laptop.run(*args, cwd=laptop.checkout, input="# x\n\nbody\n"))
    assert snapshot(laptop.home, store_dir) == before
    assert not (laptop.home.parent / "outside").exists()


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"# big\n\n" + b"x" * (65 * 1024), "64 KiB"),
        (b"# bin\n\n\x00\x01\x02", "NUL"),
        (b"# latin1\n\ncaf\xe9", "UTF-8"),
        (b"\n\n \n", "empty"),
        (b"x" * (3 * 1024 * 1024), "64 KiB"),
    ],
)
def test_huge_binary_or_empty_bodies_are_refused_and_write_nothing(laptop, store_dir, body, why):
    before = snapshot(laptop.home, store_dir)
    status, out, err = laptop.run("save", input=body, cwd=laptop.checkout)
    assert_clean_failure(status, out, err)
    assert why in err
    assert snapshot(laptop.home, store_dir) == before


UNPARSEABLE = [
    ("not toml", b'agent = "a"\n[store\nkind = "folder"\n'),
    ("not utf-8", b'agent = "caf\xe9"\n'),
    ("duplicate key", b'agent = "a"\nagent = "b"\n'),
]


@pytest.mark.parametrize(("why", "text"), UNPARSEABLE, ids=[w for w, _ in UNPARSEABLE])
def test_an_unparseable_config_stops_every_command_naming_the_file_and_is_never_rewritten(laptop, why, text):
    path = laptop.home / "config.toml"
    original = b"# my notes: do not lose this comment\n" + text
    path.write_bytes(original)
    commands = [["save"], ["search", "x"], ["read", "20261130T101502123Z-abcdefgh"], ["where"], ["pending"],
                ["map", str(laptop.checkout), "app"], ["skills"], ["publish-skill", str(laptop.checkout)],
                ["save", "--retry", "20261130T101502123Z-abcdefgh"]]
    for args in commands:
        status, out, err = laptop.run(*args, cwd=laptop.checkout, input="# x\n\nbody\n")
        if args == ["pending"] and status == 0:
            continue  # listing pending notes needs no config
        assert_clean_failure(status, out, err, expected=2)
        assert str(path) in err and "nothing was changed" in err, (args, err)
        assert path.read_bytes() == original, args
    assert sorted(p.name for p in laptop.home.iterdir()) == ["config.toml"]


def test_a_malformed_timeout_does_not_block_saving_and_is_left_as_written(laptop, store_dir):
    # A bad [network] timeout falls back to the default so a note is never lost to a config typo.
    path = laptop.home / "config.toml"
    original = path.read_bytes() + b"[network]\ntimeout = \"soon\"  # my typo\n"
    path.write_bytes(original)
    laptop.run("save", cwd=laptop.checkout, input="# x\n\nbody\n", check_status=0)
    assert path.read_bytes() == original


def _mapped(laptop, store_dir) -> bytes:
    return f'[projects]\n"{laptop.checkout}" = "app"\n'.encode()


SEMANTIC = [
    ("store is a string", b'agent = "a"\nstore = "folder"\n'),
    ("unknown store kind", b'agent = "a"\n[store]\nkind = "ftp"\nlocation = "x"\n'),
    ("relative folder", b'agent = "a"\n[store]\nkind = "folder"\nlocation = "relative/path"\n'),
    ("bad agent", b'agent = "../../me"\n[store]\nkind = "folder"\nlocation = "{store}"\n'),
    ("projects is a list", b'agent = "a"\nprojects = ["app"]\n[store]\nkind = "folder"\nlocation = "{store}"\n'),
]


@pytest.mark.parametrize(("why", "text"), SEMANTIC, ids=[w for w, _ in SEMANTIC])
def test_a_config_with_wrong_values_refuses_to_save_naming_the_file_and_keeps_the_users_text(
    laptop, store_dir, why, text
):
    path = laptop.home / "config.toml"
    original = b"# my notes: do not lose this comment\n" + text.replace(b"{store}", str(store_dir).encode())
    if b"projects" not in original:
        original += _mapped(laptop, store_dir)
    path.write_bytes(original)
    status, out, err = laptop.run("save", cwd=laptop.checkout, input="# x\n\nbody\n")
    assert status in (2, 3)
    assert_clean_failure(status, out, err, expected=status)
    assert str(path) in err
    assert path.read_bytes() == original
    assert list(store_dir.iterdir()) == []
    for args in (["search", "x"], ["read", "20261130T101502123Z-abcdefgh"], ["where"], ["skills"],
                 ["map", str(laptop.checkout), "app"]):
        status, out, err = laptop.run(*args, cwd=laptop.checkout)
        assert "Traceback" not in err and err.count("\n") <= 1, (args, err)
        if status != 0:
            assert path.read_bytes() == original, args
    # Whatever succeeded (map edits [projects] only), every line the user wrote is still there.
    kept = path.read_bytes().decode("utf-8", "replace").splitlines()
    for line in original.decode("utf-8", "replace").splitlines():
        assert line in kept, line


def test_config_toml_that_is_a_folder_is_an_error_naming_it(laptop):
    (laptop.home / "config.toml").unlink()
    (laptop.home / "config.toml").mkdir()
    status, out, err = laptop.run("search", cwd=laptop.checkout)
    assert_clean_failure(status, out, err)
    assert "config.toml" in err


# --- notes arriving from the store -----------------------------------------------------------

NOTE_DIR = "projects/app/notes"
BOMBS = {
    "20261130T000000001Z-laughsaa": (
        b'---\ntitle: "laughs"\na: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
        b"b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
        b"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n---\nbomb body\n"
    ),
    "20261130T000000002Z-deepjson": b"---\ntags: " + b"[" * 3000 + b"]" * 3000 + b"\n---\nbomb body\n",
    "20261130T000000003Z-deepyaml": b"---\ntitle: x\nt: " + b"{a: " * 1300 + b"1" + b"}" * 1300 + b"\n---\nbomb body\n",
    "20261130T000000004Z-hugetags": b"---\ntags: [" + b",".join([b'"t"'] * 2500) + b"]\n---\nbomb body\n",
    "20261130T000000005Z-pytagsaa": b"---\ntitle: !!python/object/apply:os.system ['touch /tmp/pwned']\n---\nbomb body\n",
    "20261130T000000006Z-binaryaa": b"\x00\x01\xff\xfe bomb body \x1b[2J\x1b]0;title\x07\r\n",
    "20261130T000000007Z-hugenote": b"---\ntitle: \"huge\"\n---\nbomb body\n" + b"y" * (2 * 1024 * 1024),
    "20261130T000000008Z-longline": b'---\ntitle: "long"\n---\nbomb body ' + b"z" * 200_000 + b"\n",
    "20261130T000000009Z-notyaml": b"---\n: : :\n- [\n---\nbomb body\n",
}


def _plant(store_dir: Path, files: dict[str, bytes]) -> None:
    for note_id, data in files.items():
        path = store_dir / NOTE_DIR / f"{note_id}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def test_frontmatter_bombs_and_odd_notes_from_the_store_never_break_search_or_read(laptop, store_dir):
    _, good, _ = laptop.json("save", "--title", "good", input="# good\n\nbomb body, but friendly\n",
                             cwd=laptop.checkout)
    _plant(store_dir, BOMBS)
    status, out, err = laptop.json("search", "bomb", "--limit", "50", cwd=laptop.checkout)
    assert status == 0, err
    found = {r["id"] for r in out["results"]}
    assert good["id"] in found
    assert found >= set(BOMBS) - {"20261130T000000007Z-hugenote"}  # over 1 MiB: not a note, never cached
    assert not Path("/tmp/pwned").exists()
    status, text, err = laptop.run("search", "bomb", "--limit", "50", cwd=laptop.checkout)
    assert status == 0 and "Traceback" not in err
    assert "\x1b" not in text and "\x00" not in text
    for note_id in BOMBS:
        if note_id.endswith("hugenote"):
            continue
        status, text, err = laptop.run("read", note_id, cwd=laptop.checkout)
        assert status == 0, (note_id, err)
        assert "\x1b" not in text and "\x00" not in text and "\x07" not in text


def test_reading_an_oversized_object_from_the_store_is_refused_without_caching_it(laptop, store_dir):
    _plant(store_dir, {"20261130T000000007Z-hugenote": BOMBS["20261130T000000007Z-hugenote"]})
    status, out, err = laptop.run("read", "20261130T000000007Z-hugenote", cwd=laptop.checkout)
    assert_clean_failure(status, out, err)
    assert "1 MiB" in err or "too large" in err
    assert not list((laptop.home / "cache").rglob("*hugenote*")) if (laptop.home / "cache").exists() else True


class LyingListing:
    """A store whose listing is hostile (as a compromised or buggy server might send); reads are real."""

    def __init__(self, inner, extra: list[ObjectInfo]):
        self.inner, self.extra = inner, extra
        self.description = inner.description
        self.fetched: list[str] = []

    def list(self, prefix):
        return self.inner.list(prefix) + self.extra

    def changes(self, prefix, token):
        listed = [Listed(o.path, o.size) for o in self.list(prefix)]
        return Changes(Changes.FULL, {}, "listing", listing=listed)

    def get(self, path, limit=None):
        self.fetched.append(path)
        return self.inner.get(path)

    def put(self, path, data):
        return self.inner.put(path, data)

    def info(self, path):
        return self.inner.info(path)


HOSTILE_PATHS = [
    "projects/app/notes/../../../../outside.md",
    "projects/app/notes/../../other/notes/20261130T000000000Z-aaaaaaaa.md",
    "projects/other/notes/20261130T000000000Z-aaaaaaaa.md",
    "projects/app/notes/sub/20261130T000000000Z-aaaaaaaa.md",
    "projects/app/notes/..md",
    "projects/app/notes/.tmp-x.md",
    "projects/app/notes//etc/passwd.md",
    "/etc/passwd",
    "projects/app/notes/a\\..\\..\\x.md",
    "projects/app/notes/20261130T000000000Z-aaaaaaaa.md/../../../x.md",
    "projects/app/notes/" + "a" * 300 + ".md",
    "projects/app/notes/\u2024\u2024.md",
]


def test_a_hostile_listing_never_reads_or_writes_outside_the_project_or_the_cache(tmp_path, store_dir):
    home = tmp_path / "home"
    desc = StoreDescription("folder", str(store_dir))
    real = open_store(desc)
    real.put(f"{NOTE_DIR}/20261130T000000001Z-goodnote.md", b'---\ntitle: "ok"\n---\nfine\n')
    store = LyingListing(real, [ObjectInfo(p, 10) for p in HOSTILE_PATHS])
    status = cache.refresh(home, desc, "app", store=store)
    assert not status.stale
    assert store.fetched == [f"{NOTE_DIR}/20261130T000000001Z-goodnote.md"]
    cached = sorted(p.relative_to(home).as_posix() for p in home.rglob("*") if p.is_file())
    assert cached == [  # the note, and what the cache derives beside it (its state, its kept names)
        f"cache/{desc.key}/projects/app/names",
        f"cache/{desc.key}/projects/app/names.gen",
        f"cache/{desc.key}/projects/app/names.lock",
        f"cache/{desc.key}/projects/app/notes/20261130T000000001Z-goodnote.md",
        f"cache/{desc.key}/projects/app/state.json",
    ]
    assert not (tmp_path / "outside.md").exists()


def test_a_symlink_planted_in_a_folder_store_is_not_followed(laptop, store_dir, tmp_path):
    secret = tmp_path / "private.md"
    secret.write_text("---\ntitle: private\n---\nprivate words\n")
    (store_dir / NOTE_DIR).mkdir(parents=True)
    os.symlink(secret, store_dir / NOTE_DIR / "20261130T000000001Z-symlinkd.md")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "20261130T000000002Z-viadirln.md").write_text("private words via a folder link\n")
    os.symlink(outside, store_dir / "projects" / "other")
    status, out, err = laptop.json("search", "private", cwd=laptop.checkout)
    assert status == 0, err
    assert out["results"] == []
    # The project's own folder replaced by a link to somewhere else: nothing there is listed or read.
    other = tmp_path / "other-checkout"
    (other / "notes").mkdir(parents=True)
    (other / "notes" / "20261130T000000003Z-projlink.md").write_text("private words via the project link\n")
    os.rename(store_dir / "projects" / "app", tmp_path / "app-moved")
    os.symlink(other, store_dir / "projects" / "app")
    status, out, err = laptop.json("search", "private", "--refresh", cwd=laptop.checkout)
    assert out.get("results", []) == [], out
    status, out, err = laptop.run("read", "20261130T000000003Z-projlink", cwd=laptop.checkout)
    assert "private words" not in out


# --- properties -------------------------------------------------------------------------------

def _text(st):
    return st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=80)


def _one_line(st):
    return _text(st).map(lambda s: " ".join(s.split())).filter(bool)


@settings(max_examples=150, deadline=None)
@given(
    title=_one_line,
    body=lambda st: _text(st).filter(lambda s: s.strip()),
    tags=lambda st: st.lists(_one_line(st).map(lambda s: s[:64]), max_size=5),
    sources=lambda st: st.lists(_one_line(st), max_size=3),
)
def test_frontmatter_render_and_parse_round_trip(title, body, tags, sources):
    note = document.build(body=body, title=title, kind="note", project="app", agent="a", sources=sources, tags=tags)
    parsed = document.parse(note.render())
    assert parsed.title == note.title
    assert parsed.meta["id"] == note.id
    assert parsed.meta.get("tags", []) == note.tags
    assert parsed.meta["sources"] == note.sources
    assert parsed.body.rstrip("\n") == note.body.strip("\n")


@settings(max_examples=200, deadline=None)
@given(data=lambda st: st.binary(max_size=2000))
def test_parsing_arbitrary_bytes_never_raises(data):
    parsed = document.parse(b"---\n" + data)
    assert isinstance(parsed.meta, dict) and isinstance(parsed.body, str)
    json.dumps(parsed.meta)


HOSTILE_BUCKET_NAMES = [
    "projects/app/notes/../../../escape.md",
    "projects/app/notes/../../other/notes/20261130T000000000Z-aaaaaaaa.md",
    "projects/app/notes/./20261130T000000000Z-dotdotdo.md",
    "projects/app/notes/sub/20261130T000000000Z-nestedaa.md",
    "projects/app/notes/..md",
    "projects/app/notes/.tmp-20261130T000000000Z-tmpfilea.md",
    "projects/app/notes/a\\..\\..\\x.md",
    "projects/app/notes//20261130T000000000Z-doubleaa.md",
    "projects/app/notes/" + "a" * 300 + ".md",
    "projects/app/notes/20261130T000000000Z-hugenote.md",
]


def test_hostile_names_in_a_bucket_listing_never_escape_the_cache_folder(hub, tmp_path):
    from tests.fixtures_hub import BucketMachine

    token = hub.add_user("alice")
    hub.add_bucket("alice/agent-memory")
    good = "projects/app/notes/20261130T000000001Z-goodnote.md"
    hub.put_file("alice/agent-memory", good, b'---\ntitle: "good"\n---\nplanted words\n')
    for name in HOSTILE_BUCKET_NAMES:
        data = b"planted words " + (b"y" * (2 * 1024 * 1024) if name.endswith("hugenote.md") else b"")
        hub.put_file("alice/agent-memory", name, data)
    reader = BucketMachine(tmp_path / "reader", hub, token)
    done = reader.run("search", "planted", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert [r["id"] for r in out["results"]] == ["20261130T000000001Z-goodnote"]
    cached_notes = sorted(p.name for p in (reader.home / "cache").rglob("*.md"))
    assert cached_notes == ["20261130T000000001Z-goodnote.md"]
    project_dirs = {p.parent.parent.name for p in (reader.home / "cache").rglob("*.md")}
    assert project_dirs == {"app"}
    assert not list(tmp_path.rglob("escape.md"))
    for note_id in ("..", "20261130T000000000Z-nestedaa", "20261130T000000000Z-hugenote"):
        done = reader.run("read", note_id, "--fresh")
        assert done.returncode in (2, 4), (note_id, done.stdout, done.stderr)
        assert "planted" not in done.stdout and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "args",
    [
        [f"--tag=t{i}" for i in range(33)],
        ["--tag", "x" * 65],
        ["--tag", "two\nlines"],
        ["--title", "x" * 201],
        ["--source", "s" * 501],
        ["--kind", "../checkpoint"],
        ["--session", "a\nb"],
    ],
    ids=["33-tags", "long-tag", "multiline-tag", "long-title", "long-source", "bad-kind", "multiline-session"],
)
def test_oversized_or_multiline_metadata_is_refused_and_writes_nothing(laptop, store_dir, args):
    before = snapshot(laptop.home, store_dir)
    assert_clean_failure(*laptop.run("save", *args, input="# x\n\nbody\n", cwd=laptop.checkout))
    assert snapshot(laptop.home, store_dir) == before
