"""detect-secrets (Yelp's scanner, the test extra) as an oracle over the generated corpus, forms and look-alikes
alike: whatever it flags in a credential form we flag too; every form it misses and every look-alike it flags is
listed, with the reason, in tests/secrets_oracle_reasons.py and in docs/benchmarks.md.  # INV no-credentials

The figures print with `-s`; bench/secrets_oracle.py prints them with the disagreement list.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests import secrets_corpus, secrets_corpus_field
from tests import secrets_oracle_reasons as reasons
from tests.fixtures_core import REPO, missing_prerequisite


@pytest.fixture(scope="module")
def comparison():
    try:
        import detect_secrets  # noqa: F401
    except ImportError:
        missing_prerequisite("detect-secrets is not installed (pip install -e '.[test]')")
    return reasons.compare(secrets_corpus.credentials(), secrets_corpus.benign())


def test_we_find_every_form_and_no_look_alike_and_every_string_detect_secrets_flags_in_a_form(comparison):
    # INV no-credentials
    c = comparison
    print(f"\nforms: we flag {len(c.we_found(c.credentials))}/{len(c.credentials)}, detect-secrets "
          f"{len(c.oracle_found(c.credentials))}; look-alikes: we flag {len(c.we_found(c.benign))}/{len(c.benign)}, "
          f"detect-secrets {len(c.oracle_found(c.benign))}")
    assert [s.form for s in c.credentials if not c.ours[id(s)]] == []
    assert [s.form for s in c.benign if c.ours[id(s)]] == []
    assert c.unmatched() == []


def test_every_form_detect_secrets_misses_has_its_reason_and_every_listed_family_is_still_missed(comparison):
    missed = comparison.missed_by_oracle()
    assert [(s.form, s.family) for s in missed if reasons.reason_missed(s) is None] == []
    # The list stays true: each family it names is one detect-secrets still misses at least once.
    still = {s.family for s in missed}
    listed = {family for families in reasons.MISSED.values() for family in families}
    assert listed <= still, sorted(listed - still)


def test_every_look_alike_detect_secrets_flags_is_listed_with_its_reason(comparison):
    flags = comparison.benign_flags()
    assert sorted(set(flags) - set(reasons.BENIGN_FLAGS)) == []
    assert sorted(set(reasons.BENIGN_FLAGS) - set(flags)) == []  # every entry is one it still raises


def test_docs_benchmarks_lists_each_disagreement_reason():
    # The disagreement list lives with the figures (docs/benchmarks.md, a dated section).
    docs = " ".join((REPO / "docs" / "benchmarks.md").read_text().split())
    for reason in [reasons.SPLIT, *reasons.MISSED, *reasons.BENIGN_FLAGS.values()]:
        assert reason in docs, reason
    for form, plugin in reasons.BENIGN_FLAGS:
        assert f"{form} ({plugin})" in docs, (form, plugin)


@pytest.mark.parametrize("module", [secrets_corpus, secrets_corpus_field])
def test_detect_secrets_finds_only_stand_ins_in_the_corpus_modules(module, tmp_path):
    # What is committed holds templates and the stand-ins documentation writes, never random material.
    try:
        from detect_secrets import SecretsCollection
        from detect_secrets.settings import default_settings
    except ImportError:
        missing_prerequisite("detect-secrets is not installed (pip install -e '.[test]')")
    source = Path(module.__file__)
    shutil.copy(source, tmp_path / source.name)
    lines = source.read_text().splitlines()
    with default_settings():
        found = SecretsCollection(root=str(tmp_path))
        found.scan_file(source.name)
        flagged = [(s.type, lines[s.line_number - 1]) for name in found.files for s in found[name]]
    stand_ins = ("EXAMPLE", "XXXX", "xxxx", "changeme", "postgres", "root", "********", "password=password")
    for plugin, line in flagged:  # a stand-in, or a template whose slots are filled when the tests run
        assert any(s in line for s in stand_ins) or secrets_corpus.SLOT.search(line), (plugin, line)
