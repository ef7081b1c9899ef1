"""detect-secrets (Yelp's scanner, the test extra) as an oracle over the generated corpus: whatever it flags, our
scanner flags too, or the string is listed below with the reason it is not a credential.  # INV no-credentials

detect-secrets scans each sample as a note file would be scanned in a repository (its default plugins and
filters); a flag counts as ours when one of our findings overlaps the flagged string.
"""

from __future__ import annotations

from pathlib import Path

from agentmem.safety import credentials
from tests import secrets_corpus
from tests.fixtures_core import missing_prerequisite

# (benign form, detect-secrets plugin): why what it flags there is not a credential.
BENIGN_FLAGS = {
    ("lockfile hashes", "Hex High Entropy String"):
        "a digest of a published package or file (Cargo.lock checksum, pip --hash, an LFS oid): public",
    ("lockfile integrity (sha512)", "Base64 High Entropy String"):
        "an npm lockfile's subresource-integrity digest of a public tarball",
    ("go.sum hash", "Base64 High Entropy String"): "go.sum's hash of a public module's contents",
    ("commit SHAs", "Hex High Entropy String"): "a git commit or image digest: names public content",
    ("code that reads a secret from the environment", "Secret Keyword"):
        "the call that reads the key (`os.getenv(...)`), not the key",
    ("documentation placeholders", "Secret Keyword"):
        "a stand-in documentation writes (YOUR_API_KEY, sk-..., changeme, `secret`): see placeholders.py",
    ("documentation placeholders", "GitHub Token"): "ghp_XXXXXXXX: the prefix with filler",
    ("documentation placeholders", "AWS Access Key"): "AKIAIOSFODNN7EXAMPLE, AWS's own documentation key",
    ("documentation placeholders", "SendGrid API Key"): "SG.xxxx.xxxx: the shape filled with x",
    ("prose about tokens and passwords", "Secret Keyword"):
        "`password: required (...)`: a sentence describing the field",
    ("identifiers vendors print", "Twilio API Key"):
        "AC... is a Twilio account SID, an identifier on every invoice; the API key (SK...) is the secret",
}


def _detect_secrets():
    try:
        from detect_secrets import SecretsCollection
        from detect_secrets.settings import default_settings
    except ImportError:
        missing_prerequisite("detect-secrets is not installed (pip install -e '.[test]')")
    return SecretsCollection, default_settings


def _oracle_flags(samples, tmp_path: Path) -> list[tuple[object, str, str]]:
    """(sample, plugin, flagged string) for every string detect-secrets flags in each sample."""
    SecretsCollection, default_settings = _detect_secrets()
    out = []
    note = tmp_path / "note.md"
    with default_settings():
        for sample in samples:
            note.write_text(sample.text + "\n")
            found = SecretsCollection(root=str(tmp_path))
            found.scan_file(note.name)
            for name in found.files:
                out.extend((sample, secret.type, secret.secret_value) for secret in found[name])
    return out


def _ours(sample, flagged: str) -> bool:
    """Whether one of our findings overlaps the flagged string (detect-secrets may keep a closing `\\`)."""
    flagged = flagged.strip("\\\"'")
    start = sample.text.find(flagged)
    assert start >= 0, (flagged, sample.text)
    return any(f.start < start + len(flagged) and start < f.end for f in credentials.scan(sample.text))


def test_every_string_detect_secrets_flags_in_a_credential_form_is_flagged_by_us(tmp_path):
    # INV no-credentials
    samples = secrets_corpus.credentials()
    flags = _oracle_flags(samples, tmp_path)
    unmatched = [(s.form, plugin, value) for s, plugin, value in flags if not _ours(s, value)]
    caught = {id(s) for s, _, _ in flags}
    print(f"\ndetect-secrets flags {len(caught)}/{len(samples)} credential forms; we flag {len(samples)}")
    assert unmatched == []


def test_every_string_detect_secrets_flags_in_a_benign_look_alike_is_listed_with_its_reason(tmp_path):
    samples = secrets_corpus.benign()
    flags = _oracle_flags(samples, tmp_path)
    unlisted = [(s.form, plugin, value) for s, plugin, value in flags
                if (s.form, plugin) not in BENIGN_FLAGS and not _ours(s, value)]
    flagged_forms = {(s.form, plugin) for s, plugin, _ in flags}
    print(f"\ndetect-secrets flags {len({id(s) for s, _, _ in flags})}/{len(samples)} benign look-alikes; "
          f"we flag {sum(bool(credentials.scan(s.text)) for s in samples)}")
    assert unlisted == []
    # The list stays true: every entry is one detect-secrets still raises.
    assert set(BENIGN_FLAGS) <= flagged_forms, set(BENIGN_FLAGS) - flagged_forms




def test_detect_secrets_finds_only_the_documentation_stand_ins_in_the_corpus_module(tmp_path):
    # What is committed holds templates and the stand-ins documentation writes, never random material.
    import shutil

    SecretsCollection, default_settings = _detect_secrets()
    source = Path(secrets_corpus.__file__)
    shutil.copy(source, tmp_path / source.name)
    lines = source.read_text().splitlines()
    with default_settings():
        found = SecretsCollection(root=str(tmp_path))
        found.scan_file(source.name)
        flagged = [(s.type, lines[s.line_number - 1]) for name in found.files for s in found[name]]
    assert flagged, "detect-secrets should see the documented stand-ins"
    for plugin, line in flagged:
        assert any(s in line for s in ("EXAMPLE", "XXXX", "xxxx")), (plugin, line)
