"""The note format: IDs, frontmatter, validation limits."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import yaml

from agentmem.errors import InvalidInput
from agentmem.note import document


def make(**kw):
    base = dict(body="Body text", title="T", kind="note", project="app", agent="tester")
    base.update(kw)
    return document.build(**base)


def test_ids_are_unique_and_sort_by_creation_time():
    t1 = datetime(2026, 1, 2, 3, 4, 5, 6000, tzinfo=UTC)
    t2 = datetime(2026, 1, 2, 3, 4, 5, 7000, tzinfo=UTC)
    ids = {document.new_id(t1) for _ in range(2000)}
    assert len(ids) == 2000
    assert max(ids) < document.new_id(t2)
    assert document.new_id(t1).startswith("20260102T030405006Z-")


def test_rendered_frontmatter_is_yaml_and_round_trips():
    note = make(title='Quotes " and: colons', tags=["a", "b"], sources=["src/x.py:12"], corrects="20260101T000000000Z-aaaaaaaa")
    data = note.render()
    head = data.decode().split("---")[1]
    assert yaml.safe_load(head)["title"] == 'Quotes " and: colons'
    parsed = document.parse(data)
    assert parsed.meta["tags"] == ["a", "b"]
    assert parsed.meta["corrects"] == "20260101T000000000Z-aaaaaaaa"
    assert parsed.body == "Body text\n"
    assert parsed.kind == "note" and parsed.title == 'Quotes " and: colons'


def test_title_defaults_to_the_first_line_of_the_body():
    assert make(title=None, body="\n# Heading here\nmore").title == "Heading here"


@pytest.mark.parametrize(
    "kw, message",
    [
        (dict(body="   \n"), "empty"),
        (dict(kind="diary"), "kind"),
        (dict(title="x" * 201), "too long"),
        (dict(tags=["a\nb"]), "tag"),
        (dict(corrects="../x"), "note ID"),
        (dict(body="x" * (document.MAX_NOTE_BYTES + 1)), "limit"),
    ],
)
def test_bad_notes_are_rejected_with_a_clear_message(kw, message):
    with pytest.raises(InvalidInput) as exc:
        make(**kw)
    assert message in exc.value.one_line()


def test_bodies_must_be_utf8_text_within_the_limit():
    with pytest.raises(InvalidInput, match="UTF-8"):
        document.decode_body(b"\xff\xfe\x00abc"[0:2] + b"abc")
    with pytest.raises(InvalidInput, match="NUL"):
        document.decode_body(b"abc\x00def")
    with pytest.raises(InvalidInput, match="64 KiB"):
        document.decode_body(b"a" * (document.MAX_NOTE_BYTES + 1))
    assert document.decode_body("\ufeffhello".encode()) == "hello"


def test_frontmatter_written_by_hand_is_read_with_a_safe_yaml_fallback():
    data = b"---\ntitle: Hand written\ntags:\n  - x\ncreated: 2026-01-01T00:00:00Z\n---\nBody\n"
    parsed = document.parse(data)
    assert parsed.title == "Hand written" and parsed.meta["tags"] == ["x"]


def test_yaml_alias_bombs_in_frontmatter_are_ignored_not_expanded():
    bomb = "---\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b]\ntitle: boom\n---\nbody\n"
    parsed = document.parse(bomb.encode())
    assert parsed.meta == {} and parsed.body == "body\n"
