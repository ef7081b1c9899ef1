"""A cache is screened again when the scanner's rules change, and only then: not when its files merely moved.

An upgrade or a reinstall writes `safety/` anew with new modification times; before, that alone made the
next search clean every cached note again (7 s at 100k notes, docs/benchmarks.md). Now `screened` records
a hash of the rules' source, and files with another fingerprint but the same rules only update it.
"""

from __future__ import annotations

import os
import shutil

import pytest

from agentmem.replica import redacted_copies
from tests.test_planted_credentials import NOTE_ID, TOKEN, planted


@pytest.fixture
def scanner(monkeypatch, tmp_path):
    """This scanner's rules as a copy of `safety/` that a test may touch or edit; fingerprint and rules
    worked out afresh from it, as a new process would."""
    copy = tmp_path / "safety"
    shutil.copytree(redacted_copies._safety_folder(), copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(redacted_copies, "_safety_folder", lambda: str(copy))

    def new_process():
        monkeypatch.setattr(redacted_copies, "_fingerprint", None)
        monkeypatch.setattr(redacted_copies, "_rules", None)

    new_process()
    return copy, new_process


@pytest.fixture
def rescreens(monkeypatch):
    """The projects whose cache was cleaned again (the real rescreen runs)."""
    calls: list[str] = []
    real = redacted_copies.rescreen

    def counted(pdir):
        calls.append(pdir)
        return real(pdir)

    monkeypatch.setattr(redacted_copies, "rescreen", counted)
    return calls


def _cache_with_a_raw_note(tmp_path):
    """A project cache screened by this scanner, then given a note an older version cached unscreened."""
    pdir = tmp_path / "pdir"
    (pdir / "notes").mkdir(parents=True)
    assert redacted_copies.ensure_screened(str(pdir))
    (pdir / "notes" / f"{NOTE_ID}.md").write_bytes(planted())
    return pdir


def _upgrade_leaving_the_rules_as_they_were(copy):
    """What an upgrade does to files it does not change: written anew, later times."""
    for name in os.listdir(copy):
        if name.endswith(".py"):
            data = (copy / name).read_bytes()
            (copy / name).unlink()
            (copy / name).write_bytes(data)
            stat = (copy / name).stat()
            os.utime(copy / name, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))


def test_a_reinstalled_scanner_with_the_same_rules_does_not_screen_the_cache_again(scanner, rescreens, tmp_path):
    copy, new_process = scanner
    pdir = _cache_with_a_raw_note(tmp_path)
    rescreens.clear()  # the first screening of the new cache
    before = redacted_copies.fingerprint()
    _upgrade_leaving_the_rules_as_they_were(copy)
    new_process()
    assert redacted_copies.fingerprint() != before
    assert redacted_copies.ensure_screened(str(pdir)) and rescreens == []
    first, rules = (pdir / "screened").read_text().split("\n")
    assert first == redacted_copies.fingerprint() and rules == redacted_copies.rules()
    assert redacted_copies.ensure_screened(str(pdir)) and rescreens == []  # the record now names these files


def test_new_file_times_alone_do_not_screen_the_cache_again(monkeypatch, rescreens, tmp_path):
    pdir = _cache_with_a_raw_note(tmp_path)
    rescreens.clear()
    monkeypatch.setattr(redacted_copies, "_fingerprint", "tokens.py:100.2")  # what a later process sees after a reinstall
    assert redacted_copies.ensure_screened(str(pdir)) and rescreens == []


def test_a_changed_rule_screens_every_cached_note_again(scanner, rescreens, tmp_path):
    # INV no-credentials: what the new rules find in the cache is withheld from it
    copy, new_process = scanner
    pdir = _cache_with_a_raw_note(tmp_path)
    rescreens.clear()  # the first screening of the new cache
    rules = redacted_copies.rules()
    with open(copy / "tokens.py", "a", encoding="utf-8") as fh:
        fh.write("\n# a rule added\n")
    new_process()
    assert redacted_copies.rules() != rules
    assert redacted_copies.ensure_screened(str(pdir)) and rescreens == [str(pdir)]
    assert TOKEN.encode() not in (pdir / "notes" / f"{NOTE_ID}.md").read_bytes()
    assert redacted_copies.withheld_of(str(pdir), NOTE_ID)


def test_the_rules_are_the_files_contents_not_their_times(scanner):
    copy, new_process = scanner
    rules, first = redacted_copies.rules(), redacted_copies.fingerprint()
    _upgrade_leaving_the_rules_as_they_were(copy)
    new_process()
    assert redacted_copies.rules() == rules and redacted_copies.fingerprint() != first
    (copy / "placeholders.py").write_bytes((copy / "placeholders.py").read_bytes().replace(b"changeme", b"changeit"))
    new_process()
    assert redacted_copies.rules() != rules


def test_a_record_an_older_version_wrote_for_these_files_is_kept_and_given_the_rules(scanner, rescreens, tmp_path):
    pdir = tmp_path / "pdir"
    (pdir / "notes").mkdir(parents=True)
    (pdir / "screened").write_text(redacted_copies.fingerprint())  # all an older agentmem recorded
    assert redacted_copies.ensure_screened(str(pdir)) and rescreens == []
    assert (pdir / "screened").read_text() == f"{redacted_copies.fingerprint()}\n{redacted_copies.rules()}"


def test_a_record_of_other_files_without_rules_screens_the_cache_again(scanner, rescreens, tmp_path):
    pdir = _cache_with_a_raw_note(tmp_path)
    rescreens.clear()  # the first screening of the new cache
    (pdir / "screened").write_text("tokens.py:100.1")  # an older agentmem's record of other files
    assert redacted_copies.ensure_screened(str(pdir)) and rescreens == [str(pdir)]
    assert TOKEN.encode() not in (pdir / "notes" / f"{NOTE_ID}.md").read_bytes()
