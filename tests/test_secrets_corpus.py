"""Two corpora kept beside the scanner: benign text that must save, credentials that must not.

tests/corpus/benign/ holds hand-written and generated text full of things that look random or
name a secret without holding one (UUIDs, git SHAs, digests, base64 images, public keys and
certificates, Kubernetes manifests, schemas, CSS ids). tests/corpus/credentials.txt holds one
entry per way a credential reaches a note, with its random material generated here, so no
secret-shaped string is ever committed.  # INV no-credentials
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
from pathlib import Path

import pytest

from agentmem.errors import SecretFound
from agentmem.safety import credentials, screening

CORPUS = Path(__file__).parent / "corpus"
ALPHABETS = {
    "alnum": string.ascii_letters + string.digits,
    "lower": string.ascii_lowercase,
    "upper": string.ascii_uppercase,
    "updigits": string.ascii_uppercase + string.digits,
    "digits": string.digits,
    "hex": "0123456789abcdef",
    "b64": string.ascii_letters + string.digits + "+/",
    "b64url": string.ascii_letters + string.digits + "-_",
    "django": string.ascii_lowercase + string.digits + "!@#$%^&*(-_=+)",
}
_SLOT = re.compile(r"\{(" + "|".join(ALPHABETS) + r"):(\d+)\}|\{jwt\}")
_FILLER = re.compile(r"x{4}|0{6}|example|abcdefgh|1234567890|test|fake|dummy|sample|todo", re.IGNORECASE)


class Entry:
    def __init__(self, kind: str, unbounded: bool, what: str, template: str):
        self.kind, self.unbounded, self.what, self.template = kind, unbounded, what, template

    def render(self, rng: random.Random) -> tuple[str, list[str]]:
        """The entry's text with fresh material in every slot, and the generated values."""
        values: list[str] = []

        def fill(m: re.Match) -> str:
            value = _jwt(rng) if m.group(0) == "{jwt}" else _material(rng, m.group(1), int(m.group(2)))
            values.append(value)
            return value

        return _SLOT.sub(fill, self.template), values


def _material(rng: random.Random, alphabet: str, n: int) -> str:
    chars = ALPHABETS[alphabet]
    while True:
        value = "".join(rng.choice(chars) for _ in range(n))
        mixed = not any(c.isdigit() for c in chars) or not any(c.isalpha() for c in chars) or (
            any(c.isdigit() for c in value) and any(c.isalpha() for c in value))
        if mixed and (n < 16 or len(set(value)) >= 10) and not _FILLER.search(value):
            return value


def _jwt(rng: random.Random) -> str:
    def part(obj) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part({'sub': _material(rng, 'digits', 9)})}." + _material(
        rng, "b64url", 43)


def load_entries() -> list[Entry]:
    entries: list[Entry] = []
    head, body = None, []
    for line in (CORPUS / "credentials.txt").read_text().splitlines() + ["=== end | end"]:
        if line.startswith("=== "):
            if head is not None:
                kind, _, what = head.partition(" | ")
                words = kind.split()
                entries.append(Entry(words[0], "unbounded" in words[1:], what, "\n".join(body).rstrip("\n")))
            head, body = line[4:], []
        elif head is not None and not line.startswith("%%"):
            body.append(line)
    return entries[:-1] if entries and entries[-1].kind == "end" else entries


ENTRIES = load_entries()
IDS = [f"{e.kind}: {e.what}" for e in ENTRIES]
BENIGN = sorted((CORPUS / "benign").iterdir())


def test_the_credentials_corpora_cover_every_kind_and_each_way_a_key_is_pasted():
    from tests import secrets_corpus

    kinds = {e.kind for e in ENTRIES} | {s.kind for s in secrets_corpus.credentials()}
    assert kinds == set(credentials.KIND_NAMES) - {"env-credential"}
    assert sum(e.kind == "private-key" for e in ENTRIES) >= 15
    assert sum(e.unbounded for e in ENTRIES) == 3


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_every_credential_in_the_corpus_is_found_with_its_kind(entry):
    # INV no-credentials
    text, _ = entry.render(random.Random(entry.what))
    findings = credentials.scan("notes from the session\n" + text + "\nmore notes")
    assert findings, text
    assert {f.kind for f in findings} == {entry.kind}, (findings, text)
    assert all(f.redactable is not entry.unbounded for f in findings)


@pytest.mark.parametrize("entry", [e for e in ENTRIES if not e.unbounded], ids=[i for e, i in zip(ENTRIES, IDS)
                                                                                 if not e.unbounded])
def test_redaction_removes_every_generated_character_of_a_credential(entry):
    # INV no-credentials
    text, values = entry.render(random.Random(entry.what))
    redacted = credentials.redact("before\n" + text + "\nafter")
    assert f"[REDACTED:{entry.kind}]" in redacted
    assert credentials.scan(redacted) == []
    assert redacted.startswith("before\n") and redacted.endswith("\nafter")
    for value in values:
        if len(value) >= 6:
            assert value not in redacted, (value, redacted)


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.unbounded], ids=[i for e, i in zip(ENTRIES, IDS)
                                                                             if e.unbounded])
def test_a_key_block_missing_its_begin_or_end_line_is_refused_rather_than_partly_redacted(entry):
    # INV no-credentials
    text, _ = entry.render(random.Random(entry.what))
    with pytest.raises(SecretFound) as info:
        screening.screen({"body": text}, redact_found=True)
    message = info.value.one_line()
    assert "private-key" in message and "nothing was written" in message and "--redact cannot" in message


@pytest.mark.parametrize("path", BENIGN, ids=[p.name for p in BENIGN])
def test_benign_text_in_the_corpus_has_no_findings(path):
    text = path.read_text()
    assert [(f.kind, f.line) for f in credentials.scan(text)] == []


def _machine(tmp_path: Path):
    from agentmem import config

    home, store, app = tmp_path / "machine", tmp_path / "store", tmp_path / "app"
    for folder in (home, store, app):
        folder.mkdir()
    (home / "config.toml").write_text(f'agent = "laptop"\n\n[store]\nkind = "folder"\nlocation = "{store}"\n\n'
                                      f'[projects]\n"{app}" = "app"\n')
    return str(home), config.load(str(home)), store


def _files(*roots: Path) -> list[Path]:
    return sorted(p for root in roots for p in root.rglob("*") if p.is_file() and p.name != "config.toml")


def test_save_stores_every_benign_file_of_the_corpus(tmp_path):
    from agentmem.memory import save

    home, cfg, store = _machine(tmp_path)
    for path in BENIGN:
        saved = save.save(home, cfg, "app", path.read_text(), title=path.name, timeout=5)
        assert saved.outcome.status == "saved"
    assert len(list(store.rglob("*.md"))) == len(BENIGN)


def test_save_refuses_every_credential_of_the_corpus_and_writes_nothing(tmp_path):
    # INV no-credentials: through the one save path the CLI and an MCP server share
    from agentmem.memory import save

    home, cfg, store = _machine(tmp_path)
    for entry in ENTRIES:
        text, values = entry.render(random.Random(entry.what))
        with pytest.raises(SecretFound) as info:
            save.save(home, cfg, "app", f"# Session notes\n\n{text}\n", timeout=5)
        assert not any(v in info.value.one_line() for v in values if len(v) >= 6)
    assert _files(Path(home), store) == []
