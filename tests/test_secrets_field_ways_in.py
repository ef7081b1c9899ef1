"""The forms developers actually paste (issue V) meet the same scanner on every way in and out: `save` (in
process for every form, the CLI for a note of them), MCP `memory_save`, `import`, `audit`, the view, and the
outputs a note planted in the store reaches. A refusal never prints the value it refused.  # INV no-credentials
"""

from __future__ import annotations

import json
import os

import pytest

from agentmem.errors import SecretFound
from tests import secrets_corpus, secrets_corpus_field
from tests.mcpkit import call, session
from tests.test_planted_credentials import FolderSide, cache_bytes, every_output
from tests.test_secrets_corpus import _machine

_FIELD = {what for _, what, _, _ in secrets_corpus_field.VENDORS} | {
    what for _, what, _ in secrets_corpus_field.FILES} | {s for s, _, _ in secrets_corpus_field.SYNTAXES}
# Every form issue V added (vendor tokens in every surrounding, each name in each syntax, the files).
NEW = [s for s in secrets_corpus.credentials() if s.family in _FIELD]
# One of each family, on one line (what a memory bullet or an argument can carry).
ONE_EACH = list({s.family: s for s in NEW if "\n" not in s.text and "alone" in s.form or s.family not in
                 {w for _, w, _, _ in secrets_corpus_field.VENDORS} and "\n" not in s.text}.values())


def _values(samples) -> list[str]:
    return [v for s in samples for v in s.material if len(v) >= 8]


def test_the_field_forms_are_many_and_one_of_each_family_fits_on_a_line():
    assert len(NEW) >= 500 and len(ONE_EACH) >= 60


def test_save_refuses_every_new_form_and_its_refusal_never_holds_the_value(tmp_path):
    # INV no-credentials
    from agentmem.memory import save

    home, cfg, store = _machine(tmp_path)
    leaked, saved = [], []
    for sample in NEW:
        try:
            save.save(home, cfg, "app", f"# Setup\n\n{sample.text}\n", title="setup", timeout=5)
            saved.append(sample.form)
        except SecretFound as refused:
            shown = refused.one_line() + json.dumps({"hint": str(refused.hint)})
            leaked += [(sample.form, v) for v in sample.material if len(v) >= 4 and v in shown]
    assert saved == [] and leaked == []
    assert list(store.rglob("*.md")) == [] and not os.path.exists(os.path.join(home, "pending"))


def test_the_cli_refuses_a_note_of_every_family_in_one_line_naming_none_of_the_values(laptop, store_dir):
    # INV no-credentials
    body = "# Pasted while debugging\n\n" + "\n".join(s.text for s in ONE_EACH) + "\n"
    status, out, err = laptop.run("save", "--title", "debugging notes", input=body, cwd=laptop.checkout)
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"and {len(ONE_EACH) - 5} more; nothing was written" in err
    assert not any(v in out + err for v in _values(ONE_EACH))
    assert not store_dir.exists() or list(store_dir.rglob("*.md")) == []


def test_mcp_memory_save_refuses_one_of_each_family_and_says_nothing_of_the_value(laptop, store_dir):
    # INV no-credentials
    async def steps(c):
        return [await call(c, "memory_save", {"body": f"pasted: {s.text}", "title": "debugging"}) for s in ONE_EACH]

    replies, stderr = session(laptop.env, laptop.checkout, steps)
    for sample, (is_error, text, data) in zip(ONE_EACH, replies):
        assert is_error and data["error"] == "secret-found", (sample.form, text)
        shown = text + json.dumps(data)
        assert not any(v in shown for v in _values([sample])), sample.form
    assert not any(v in stderr for v in _values(ONE_EACH))
    assert not store_dir.exists() or list(store_dir.rglob("*.md")) == []


def test_import_refuses_each_memory_holding_a_field_form(laptop):
    # INV no-credentials
    gemini = laptop.user_home / ".gemini"
    gemini.mkdir()
    bullets = "".join(f"- pasted {s.text}\n" for s in ONE_EACH)
    (gemini / "GEMINI.md").write_text(f"## Gemini Added Memories\n- Use pnpm.\n{bullets}")
    status, out, err = laptop.json("import", "--from", "gemini", "--apply", "--project", "app", cwd=laptop.checkout)
    assert out["counts"]["refused"] == len(ONE_EACH) and len(out["saved"]) == 1, out["counts"]
    assert not any(v in json.dumps(out) + err for v in _values(ONE_EACH))


@pytest.fixture
def planted_side(laptop, store_dir):
    """A note holding one of each family, written into the folder store by hand (save would refuse it)."""
    from tests.test_planted_credentials import NOTE_ID

    side = FolderSide(laptop, store_dir)
    body = "\n".join(s.text for s in ONE_EACH)
    side.plant((f"---\nid: {NOTE_ID}\ntitle: Debugging notes\nkind: note\nproject: app\n"
                f"created: 2026-11-30T10:15:00.000Z\nagent: by-hand\ntags: [zebra]\n---\n\n"
                f"The zebra pipeline deploys from the release branch.\n{body}\n").encode())
    return side


def test_audit_finds_every_family_in_a_planted_note_without_printing_a_value(planted_side):
    # INV no-credentials
    status, out, err = planted_side.run("audit", "--json")
    assert status == 12, (out, err)
    [finding] = json.loads(out)["findings"]
    lines = {w["line"] for w in finding["withheld"] if w["where"] == "body"}
    assert len(lines) == len(ONE_EACH)
    assert not any(v in out + err for v in _values(ONE_EACH))


def test_every_way_out_and_the_view_withhold_every_family_of_a_planted_note(planted_side, laptop):
    # INV no-credentials
    values = _values(ONE_EACH)
    outs, parsed = every_output(planted_side)
    assert not [v for v in values if any(v in text for text in outs)]
    assert all(v.encode() not in data for data in cache_bytes(laptop.home).values() for v in values)
    status, out, _ = laptop.json("view", cwd=laptop.user_home)
    assert status == 0
    page = laptop.home / "view" / "index.html"  # and the note bodies in the files beside it
    html = page.read_text() + "".join(p.read_text() for p in sorted((page.parent / "index.files").rglob("*"))
                                      if p.is_file())
    assert not [v for v in values if v in html] and "[REDACTED:" in html
