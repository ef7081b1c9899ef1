"""Credential detection: one case per token family, placeholders and ordinary text left alone, redaction."""

from __future__ import annotations

import base64
import json
import random
import string

import pytest

from agentmem.errors import SecretFound
from agentmem.safety import credentials
from tests.proptest import given, settings

_rng = random.Random(20261130)
ALNUM = string.ascii_letters + string.digits


def rand(n: int, alphabet: str = ALNUM) -> str:
    """Fake secret material, generated so no real-looking credential is written in this file."""
    while True:
        value = "".join(_rng.choice(alphabet) for _ in range(n))
        mixed = any(c.isdigit() for c in alphabet) and any(c.isalpha() for c in alphabet)
        if not mixed or (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
            return value


def b64url(obj) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()


PEM_BODY = "\n".join(rand(64, ALNUM + "+/") for _ in range(6))

# (kind, text containing exactly one credential of that kind)
FAMILIES = [
    ("hf-token", f"login with hf_{rand(34)} then push"),
    ("aws-access-key-id", f"aws_access_key_id = AKIA{rand(16, string.ascii_uppercase + string.digits)}"),
    ("aws-secret-access-key", f"aws_secret_access_key = {rand(40, ALNUM + '/+')}"),
    ("aws-secret-access-key", f'AWS_SECRET_ACCESS_KEY="{rand(40, ALNUM + "/+")}"'),
    ("gcp-api-key", f"maps key AIza{rand(35, ALNUM + '_-')} in the url"),
    ("private-key", f"-----BEGIN PRIVATE KEY-----\n{PEM_BODY}\n-----END PRIVATE KEY-----\n"),
    ("private-key", f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"),
    ("private-key", f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}\n-----END OPENSSH PRIVATE KEY-----"),
    (
        "private-key",
        json.dumps(
            {
                "type": "service_account",
                "private_key": "-----BEGIN PRIVATE KEY-----\n" + PEM_BODY + "\n-----END PRIVATE KEY-----\n",
            }
        ),
    ),
    ("github-token", f"GH token ghp_{rand(36)}"),
    ("github-token", f"gho_{rand(36)}"),
    ("github-token", f"ghs_{rand(36)}"),
    ("github-token", f"github_pat_{rand(22)}_{rand(59)}"),
    ("gitlab-token", f"glpat-{rand(20, ALNUM + '_-')}"),
    ("slack-token", f"xoxb-{rand(12, string.digits)}-{rand(13, string.digits)}-{rand(24)}"),
    ("slack-webhook", f"https://hooks.slack.com/services/T{rand(8, string.ascii_uppercase)}/B{rand(8)}/{rand(24)}"),
    ("stripe-key", f"sk_live_{rand(24)}"),
    ("stripe-key", f"rk_live_{rand(24)}"),
    ("openai-key", f"sk-proj-{rand(48, ALNUM + '_-')}"),
    ("openai-key", f"OPENAI key sk-{rand(48)}"),
    ("anthropic-key", f"sk-ant-api03-{rand(93, ALNUM + '_-')}AA"),
    ("npm-token", f"npm_{rand(36)}"),
    ("pypi-token", f"pypi-AgEIcHlwaS5vcmc{rand(60, ALNUM + '_-')}"),
    (
        "jwt",
        "Authorization: Bearer "
        + b64url({"alg": "HS256", "typ": "JWT"})
        + "."
        + b64url({"sub": "1234567890", "name": "x"})
        + "."
        + rand(43, ALNUM + "_-"),
    ),
    ("bearer-token", f"curl -H 'Authorization: Bearer {rand(40)}'"),
    ("url-credentials", "DATABASE_URL=postgres://app:Pr0dPassw0rd@db.internal:5432/app"),
    ("password-assignment", 'password = "Tr0ub4dor&3"'),
    ("password-assignment", '  password: "S3cur3!pass"\nport: 5432\n'),
    ("password-assignment", "API_KEY=a8f3k29dm3kd02md"),
    ("password-assignment", 'config["client_secret"] = "9f8e7d6c5b4a3f2e1d0c"'),
    ("password-assignment", "mysql --user=root --password=h4rdT0Gu3ss"),
    ("password-assignment", "export SECRET_KEY=django-insecure-4k2j5h6g"),
]


@pytest.mark.parametrize(("kind", "text"), FAMILIES, ids=[f"{k}-{i}" for i, (k, _) in enumerate(FAMILIES)])
def test_each_credential_family_is_found_with_its_kind_and_line(kind, text):
    text = "first line of the note\n" + text
    findings = credentials.scan(text)
    assert [f.kind for f in findings] == [kind]
    assert findings[0].line == 2


@pytest.mark.parametrize(("kind", "text"), FAMILIES, ids=[f"{k}-{i}" for i, (k, _) in enumerate(FAMILIES)])
def test_redaction_replaces_each_family_and_leaves_nothing_to_find(kind, text):
    redacted = credentials.redact(text)
    assert f"[REDACTED:{kind}]" in redacted
    assert credentials.scan(redacted) == []


def test_private_key_redaction_removes_the_whole_block():
    text = f"key:\n-----BEGIN PRIVATE KEY-----\n{PEM_BODY}\n-----END PRIVATE KEY-----\nafter"
    redacted = credentials.redact(text)
    assert redacted == "key:\n[REDACTED:private-key]\nafter"


def test_assignment_redaction_keeps_the_name_so_the_note_stays_readable():
    assert credentials.redact('password = "Tr0ub4dor&3"') == 'password = "[REDACTED:password-assignment]"'
    assert credentials.redact("API_KEY=a8f3k29dm3kd02md") == "API_KEY=[REDACTED:password-assignment]"


def test_a_password_ending_in_a_bracket_is_redacted_whole_unless_code_before_it_opened_that_bracket():
    # INV no-credentials: a `)` or `]` no earlier bracket opened is the password's own last character
    r = "[REDACTED:password-assignment]"
    assert credentials.redact("DB_PASSWORD=Tr0ub4dor)") == f"DB_PASSWORD={r}"
    assert credentials.redact("password = hunter42]\nport = 5432") == f"password = {r}\nport = 5432"
    assert credentials.redact("token: ab12cd34ef56gh78)") == f"token: {r}"
    # A bracket opened before the name closes the code or the aside around it, and stays.
    assert credentials.redact("db = connect(password=Tr0ub4dor)") == f"db = connect(password={r})"
    assert credentials.redact("db = connect(\n    host=db,\n    password=Tr0ub4dor)") == (
        f"db = connect(\n    host=db,\n    password={r})")
    assert credentials.redact("(the new one is password=Tr0ub4dor)") == f"(the new one is password={r})"
    assert credentials.redact("f([password=Tr0ub4dor])") == f"f([password={r}])"
    assert credentials.redact("(password=Tr0ub4dor))") == f"(password={r})"


def test_a_bracket_inside_a_header_bearer_or_password_value_is_redacted_with_the_rest_of_it():
    # INV no-credentials: a `)` (or `(`) between value characters is the credential's own; the part after it
    # must not stay in the note. One at the value's end still closes the code or the aside around it.
    h, b, p = "[REDACTED:auth-header]", "[REDACTED:bearer-token]", "[REDACTED:password-assignment]"
    assert credentials.redact("X-API-Key: abcd1234)efgh5678") == f"X-API-Key: {h}"
    assert credentials.redact("Authorization: Token k3y(9)x7q2w") == f"Authorization: Token {h}"
    assert credentials.redact('curl -H "X-Auth-Token: abcd1234)efgh5678" https://api.example.com') == (
        f'curl -H "X-Auth-Token: {h}" https://api.example.com')
    assert credentials.redact("Authorization: Bearer abcd1234efgh)5678ijkl9012mnop") == f"Authorization: Bearer {b}"
    assert credentials.redact("(send Authorization: Bearer abcd1234efgh5678ijkl9012mnop)") == (
        f"(send Authorization: Bearer {b})")
    assert credentials.redact("password=ab(cd)ef)") == f"password={p}"
    assert credentials.redact("password=ab(cd)ef") == f"password={p}"
    # Calls stay code: no letter or digit is glued after their closing bracket.
    for code in ("password=getpass()", "password = get_secret(name)", "token = read_token(path).strip()"):
        assert credentials.scan(code) == [], code


def test_brackets_in_header_and_bearer_values_are_scanned_quickly():
    import time

    start = time.process_time()
    for text in ("x-api-key: " + "a)" * 32000, "Authorization: Bearer " + "a(" * 32000, "password=" + "a)" * 32000,
                 "Bearer " + ")" * 64000):
        credentials.scan(text)
    assert time.process_time() - start < 5  # far above what they take; 5 s means a regex went quadratic


def test_a_credential_value_from_the_environment_is_found_whatever_its_shape(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "sentinel-value-1234")
    known = credentials.env_secrets()
    findings = credentials.scan("we used sentinel-value-1234 here", known)
    assert [f.kind for f in findings] == ["env-credential"]
    assert "sentinel" not in credentials.redact("we used sentinel-value-1234 here", known)


def test_a_refusal_names_line_and_kind_and_never_echoes_the_secret():
    token = f"hf_{rand(34)}"
    with pytest.raises(SecretFound) as info:
        credentials.raise_for([f.describe("body") for f in credentials.scan(f"a\nb\nuse {token}\n")])
    message = info.value.one_line()
    assert "body line 3" in message and "hf-token" in message and "--redact" in message
    assert "nothing was written" in message
    assert token not in message


PLACEHOLDERS = [
    "export HF_TOKEN=<your token>",
    "HF_TOKEN=${HF_TOKEN}",
    "HF_TOKEN=$HF_TOKEN",
    'token = os.environ["HF_TOKEN"]',
    'api_key = os.getenv("OPENAI_API_KEY")',
    'password = "changeme"',
    'password = "xxxxxxxx"',
    'password: "********"',
    'api_key = "your-api-key-here"',
    'secret = "{{ vault_secret }}"',
    "token: ${{ secrets.GITHUB_TOKEN }}",
    'password = ""',
    "hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "AKIAIOSFODNN7EXAMPLE",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "postgres://user:${DB_PASSWORD}@db/app",
    "postgres://user:password@localhost/app",
    "API_KEY=/run/secrets/api_key",
    'password = "[REDACTED:password-assignment]"',
]


@pytest.mark.parametrize("text", PLACEHOLDERS)
def test_placeholders_are_not_credentials(text):
    assert credentials.scan(text) == []


ORDINARY = """\
# Checkpoint: tokenizer migration

Goal: move from the old tokenizer to `AutoTokenizer`; keep max_tokens = 4096.
Decided to pass `token=token` through `HfApi(token=token)` rather than reading HF_TOKEN twice.
The password reset flow now sends one email; see auth/reset.py:41.
Run `hf auth login` and paste your token when asked (never into chat).
Commit 3f2a9c1e8b7d6c5a4f3e2d1c0b9a8f7e6d5c4b3a fixed the race; uuid 123e4567-e89b-12d3-a456-426614174000.
Note 20261130T101502123Z-abcdefgh corrects 20261129T090000000Z-qrstuvwx.
Xet hash 9a2b7c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9 was stable.

```python
def load(token: str | None = None, *, secret_name: str = "prod"):
    token = token or get_token()
    password = getpass.getpass("Password: ")
    if token == "integer":
        return None
    headers = {"Authorization": f"Bearer {token}"}
    pad_token = "[PAD]"
    eos_token = "</s>"
    num_tokens = "512"
    secret_key = settings.SECRET_KEY
    return client.login(username=user, password=password)
```

```yaml
steps:
  - run: pytest -q
    env:
      HF_TOKEN: ${{ secrets.HF_TOKEN }}
      password_file: /etc/app/password
```

Styles: Token: "#d8dee9", Keyword: "#81a1c1". See https://huggingface.co/docs/hub/storage-buckets and
git@github.com:org/repo.git and ssh://git@host:22/srv/repo. The sk-learn wrapper and task-1234 stay.
A base64 image: data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==
The JWT spec uses three base64url parts: header.payload.signature, e.g. eyJ... tokens are bearer credentials.
Files begin with -----BEGIN PRIVATE KEY----- and we never store them.
"""


def test_ordinary_code_and_prose_have_no_findings():
    assert credentials.scan(ORDINARY) == []


def test_this_projects_own_code_and_docs_have_no_findings():
    from pathlib import Path

    root = Path(credentials.__file__).parents[2]
    files = [p for folder in ("agentmem", "bench", "docs") for p in (root / folder).rglob("*") if p.is_file()]
    files += [root / "README.md", root / "pyproject.toml"]
    assert len(files) > 20
    assert credentials.scan_files(files, root) == []


def test_scan_files_reports_relative_paths_and_skips_binary_files(tmp_path):
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "run.sh").write_text(f"export GITHUB_TOKEN=ghp_{rand(36)}\n")
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\x00\x00" + f"hf_{rand(34)}".encode())
    (tmp_path / "SKILL.md").write_text("# A skill\nNothing secret here.\n")
    found = credentials.scan_files(sorted(tmp_path.rglob("*")), tmp_path)
    assert [(path, f.kind, f.line) for path, f in found] == [("scripts/run.sh", "github-token", 1)]


def test_pathological_input_is_scanned_quickly():
    import time

    start = time.perf_counter()
    for text in ('token="' * 9000, "a=" * 32000, "-----BEGIN PRIVATE KEY-----\n" * 2000, " " * 64000 + "x"):
        credentials.scan(text)
    # Far above what these take (docs/benchmarks.md); 5 s means a regex went quadratic.
    assert time.perf_counter() - start < 5


def test_pathological_input_for_the_everyday_forms_is_scanned_quickly():
    import time

    # The densest repetitions of each new detector's anchor and value characters (issue 25).
    texts = ["curl -u a" * 8000, "mysql " * 11000, "docker login " * 5000, "sshpass -p" * 6000, "sig=" * 16000,
             "x-api-key: " + "a1" * 32000, "?token=" * 9000, '"auth": "' * 7000, "Basic " + "QUJD" * 16000,
             "A_PASSWORD=x " * 5000, "hf_\\\n" * 15000, "x-" * 30000 + "key:"]
    start = time.process_time()
    for text in texts:
        credentials.scan(text)
    # Far above the CPU these take (docs/benchmarks.md; the command forms cost most: each `mysql` looks up to
    # 400 characters ahead for its -p); 5 s means a regex went quadratic.
    assert time.process_time() - start < 5


def _secrets_and_filler(st):
    secret_texts = st.sampled_from([text for _, text in FAMILIES])
    filler = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60)
    return st.lists(st.one_of(secret_texts, filler), max_size=6)


@settings(max_examples=150, suppress_health_check=["too_slow"], deadline=None)
@given(parts=_secrets_and_filler, sep=lambda st: st.sampled_from(["\n", " ", "", "\n\n", "\t"]))
def test_redaction_never_leaves_a_detected_secret(parts, sep):
    text = sep.join(parts)
    redacted = credentials.redact(text)
    assert credentials.scan(redacted) == []
    for kind, secret in FAMILIES:
        # Glued to neighbouring text (sep ""), a token may no longer have its shape; with a separator it must go.
        if sep and secret in text and kind not in ("password-assignment", "url-credentials"):
            assert secret not in redacted
