"""Note frontmatter survives every character a field can hold: one key per line, for us and for YAML."""

from __future__ import annotations

import json

import pytest
import yaml

from agentmem.errors import InvalidInput
from agentmem.note import document

SEPARATORS = {"NEL": "\u0085", "LINE SEPARATOR": "\u2028", "PARAGRAPH SEPARATOR": "\u2029"}


@pytest.mark.parametrize("sep", SEPARATORS.values(), ids=SEPARATORS.keys())
def test_a_note_written_with_a_raw_line_separator_and_an_ampersand_keeps_its_frontmatter(sep):
    # INV one-key-per-line
    # What an older agentmem wrote for `--tag "a<U+2028>b & c"`: json.dumps leaves the separator raw.
    data = ("---\n"
            + "".join(f"{k}: {json.dumps(v, ensure_ascii=False)}\n" for k, v in {
                "id": "20261130T101502123Z-abcdefgh", "title": "Deploy", "kind": "note", "project": "app",
                "created": "2026-11-30T10:15:02.123Z", "agent": "laptop", "sources": [f"src{sep}x & y"],
                "tags": [f"a{sep}b & c"], "session": f"s{sep}1&2"}.items())
            + "---\n\nbody\n").encode()
    parsed = document.parse(data)
    assert parsed.meta["id"] == "20261130T101502123Z-abcdefgh" and parsed.title == "Deploy"
    assert parsed.meta["tags"] == [f"a{sep}b & c"] and parsed.meta["session"] == f"s{sep}1&2"
    assert parsed.meta["sources"] == [f"src{sep}x & y"]
    assert parsed.body == "body\n"


def test_render_escapes_every_character_a_reader_could_take_for_a_line_break():
    # INV one-key-per-line
    note = document.Note(id="20261130T101502123Z-abcdefgh", title="t\u2028u", kind="note", project="app",
                         created="2026-11-30T10:15:02.123Z", agent="a", body="b", tags=["x\u0085y & z", "c\x9bd"],
                         session="s\u2029t")
    data = note.render()
    block = data.decode().split("\n---\n")[0].removeprefix("---\n")
    assert block.splitlines() == block.split("\n")  # no hidden line break inside a key's line
    assert "\\u2028" in block and "\\u0085" in block and "\\u2029" in block and "\\u009b" in block
    parsed = document.parse(data)
    assert parsed.meta["tags"] == ["x\u0085y & z", "c\x9bd"] and parsed.title == "t\u2028u"
    assert parsed.meta["session"] == "s\u2029t"
    # Any YAML reader sees the same mapping.
    assert yaml.safe_load(block) == parsed.meta


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\u0085", "\r", "\x0b", "\x0c", "\x1c", "\n"])
@pytest.mark.parametrize("field", ["tags", "sources"])
def test_a_one_line_field_holding_a_line_break_is_refused(field, sep):
    with pytest.raises(InvalidInput) as info:
        document.build(body="b", title="t", kind="note", project="app", agent="a", **{field: [f"a{sep}b & c"]})
    assert "one line" in info.value.one_line()


def test_a_session_holding_a_line_separator_is_refused():
    with pytest.raises(InvalidInput):
        document.build(body="b", title="t", kind="note", project="app", agent="a", session="s\u2028t")


@pytest.mark.parametrize("field", ["title", "tags", "body"])
def test_undecodable_argument_bytes_are_refused_with_one_line_not_a_traceback(field):
    # On POSIX, argument bytes that are not UTF-8 reach Python as lone surrogates (`--title $'\xff'`).
    values = {"title": "t", "body": "b", "tags": []}
    values[field] = ["x\udcff"] if field == "tags" else "x\udcff"
    with pytest.raises(InvalidInput) as info:
        document.build(kind="note", project="app", agent="a", **values)
    assert "UTF-8" in info.value.one_line()


def test_save_refuses_a_tag_with_a_line_separator_in_one_line_and_writes_nothing(laptop, store_dir):
    status, out, err = laptop.run("save", "--tag", "a\u2028b&c", input="# x\n\nbody\n", cwd=laptop.checkout)
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err, (out, err)
    assert list(store_dir.rglob("*.md")) == []
