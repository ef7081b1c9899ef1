"""The everyday credential forms of issue 25, each refused by the real CLI `save` in a throwaway home: exit
status 2, one line naming the kind, never the value, nothing written.  # INV no-credentials

The material is generated here (tests/secrets_corpus.py), fresh and random, so nothing committed is a secret.
"""

from __future__ import annotations

import random

import pytest

from tests import secrets_corpus

_material = secrets_corpus.Material(random.Random(20261201))

# (kind, what, template): one per form issue 25 names; the templates' slots are filled when the test runs.
FORMS = [
    ("basic-auth", "curl -u user:pass", "curl -u deploy:{pw} https://api.invalid/v1/items"),
    ("basic-auth", "Authorization: Basic", "curl -H 'Authorization: Basic {basic}' https://api.invalid"),
    ("auth-header", "x-api-key", "x-api-key: {alnum:40}"),
    ("auth-header", "X-API-Key", "curl -H 'X-API-Key: {alnum:32}' https://api.invalid"),
    ("auth-header", "api-key", 'curl -H "api-key: {hex:32}" https://oai.invalid/openai'),
    ("auth-header", "X-Auth-Token", 'curl -H "X-Auth-Token: {alnum:32}" https://api.invalid'),
    ("auth-header", "Private-Token", "curl --header 'Private-Token: {b64url:20}' https://gitlab.invalid/api/v4"),
    ("command-password", "PGPASSWORD=... psql", "PGPASSWORD={pw} psql -h db.internal -U app app"),
    ("command-password", "mysql -pSECRET", "mysql -u root -p{pw} app"),
    ("password-assignment", "mysql --password= (short)", "mysql --user=app --password={alnum:7} app"),
    ("password-assignment", "mysql --password= (long)", "mysql --user=app --password={alnum:14} app"),
    ("command-password", "sshpass -p", "sshpass -p '{pw}' ssh deploy@host.invalid"),
    ("azure-key", "Azure AccountKey=",
     "DefaultEndpointsProtocol=https;AccountName=appstore;AccountKey={b64:86}==;EndpointSuffix=core.windows.net"),
    ("azure-sas", "Azure SAS sig=",
     "https://acct.blob.core.windows.net/c/report.csv?sv=2022-11-02&sp=r&se=2026-12-31T00:00:00Z&sig={sas}"),
    ("url-token", "?access_token=", "https://api.invalid/v1/items?access_token={alnum:40}"),
    ("url-token", "?token=", "wss://stream.invalid/socket?token={b64url:32}"),
    ("docker-auth", "Docker config.json auth", '{{"auths": {{"registry.invalid": {{"auth": "{dockerauth}"}}}}}}'),
    ("hf-token", "a token continued with a trailing backslash", "export HF_TOKEN=hf_{alnum:17}\\\n{alnum:17}"),
    ("sendgrid-key", "SendGrid SG.x.y", "SENDGRID=SG.{b64url:22}.{b64url:43}"),
    ("twilio-key", "Twilio SK key", "twilio api key SK{hex:32}"),
    ("discord-webhook", "Discord webhook URL", "https://discord.com/api/webhooks/{digits:18}/{b64url:68}"),
    ("slack-token", "Slack xapp- (long)", "xapp-1-A{updigits:10}-{digits:13}-{hex:64}"),
    ("slack-token", "Slack xapp- (short)", "xapp-1-A{updigits:8}-{digits:6}-{hex:12}"),
]


def _state(m, store_dir):
    """Every file the machine or the store holds, but the machine's config."""
    roots = [r for r in (m.home, store_dir) if r.exists()]
    return sorted(p for root in roots for p in root.rglob("*") if p.is_file() and p.name != "config.toml")


def _refused(laptop, store_dir, args, body, where, kind, values):
    status, out, err = laptop.run("save", *args, input=body, cwd=laptop.checkout)
    assert status == 2, (out, err)
    assert f"{where}: " in err and f"({kind})" in err, err
    assert "nothing was written" in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not any(v in out + err for v in values if len(v) >= 4), err
    assert _state(laptop, store_dir) == []


@pytest.mark.parametrize(("kind", "what", "template"), FORMS, ids=[f[1] for f in FORMS])
def test_save_refuses_each_everyday_credential_form_and_names_its_kind(laptop, store_dir, kind, what, template):
    # INV no-credentials
    text, values = _material.fill(template)
    if "\\\n" in text:
        values.append(text.split("=", 1)[1].replace("\\\n", ""))
    body = f"# Deploy notes\n\nWhat worked:\n{text}\n"
    _refused(laptop, store_dir, (), body, "line 4", kind, values)


@pytest.mark.parametrize(("args", "where"), [
    (("--title", "{tok}"), "title"),
    (("--tag", "ok", "--tag", "{tok}"), "tag 2"),
    (("--source", "https://ci.invalid/run/{tok}"), "source 1"),
    (("--corrects", "{tok}"), "corrects"),
    ((), "line 3"),
])
def test_a_token_glued_onto_a_word_is_refused_in_every_field(laptop, store_dir, args, where):
    # INV no-credentials: `checkpointghp_...`, a lost space, is still a GitHub token wherever it is typed
    token, _ = _material.fill("ghp_{alnum:36}")
    glued = f"checkpoint{token}"
    argv = [a.replace("{tok}", glued) for a in args]
    body = "# Checkpoint\n\n" + (glued if not args else "Resumed the run.") + "\n"
    _refused(laptop, store_dir, argv, body, where, "github-token", [token])


@pytest.mark.parametrize("line", [
    "mysql -u root -p app",
    "mkdir -p build && ssh -p 2222 deploy@host.invalid && docker run -p 8080:80 nginx",
    "vault login --token-file ~/.vault-token",
    "curl -H 'X-API-Key: $API_KEY' 'https://api.invalid/items?token=<token>&access_token=$TOKEN'",
    "PGPASSWORD=$DB_PASS psql -h db -U app; the token expired, so rotate the password.",
])
def test_save_stores_everyday_notes_that_only_look_like_these_forms(laptop, line):
    laptop.run("save", input=f"# Ops\n\n{line}\n", cwd=laptop.checkout, check_status=0)


def test_save_redact_keeps_each_command_readable_and_drops_only_the_secret(laptop, store_dir):
    # INV no-credentials: the finding covers the value, so the note still says which command and option
    import json

    lines = [_material.fill(t) for t in (
        "curl -u deploy:{pw} https://api.invalid/v1",
        "PGPASSWORD={pw} psql -h db.internal -U app",
        "curl -H 'X-API-Key: {alnum:32}' https://api.invalid",
        "https://api.invalid/v1/items?access_token={alnum:40}&page=2",
    )]
    body = "# Ops\n\n" + "\n".join(text for text, _ in lines) + "\n"
    status, out, err = laptop.run("save", "--redact", "--json", input=body, cwd=laptop.checkout)
    assert status == 0, err
    saved = json.loads(out)
    assert [r["kind"] for r in saved["redacted"]] == ["basic-auth", "command-password", "auth-header", "url-token"]
    stored = (store_dir / saved["path"]).read_text()
    assert "curl -u deploy:[REDACTED:basic-auth] https://api.invalid/v1" in stored
    assert "PGPASSWORD=[REDACTED:command-password] psql -h db.internal -U app" in stored
    assert "curl -H 'X-API-Key: [REDACTED:auth-header]' https://api.invalid" in stored
    assert "?access_token=[REDACTED:url-token]&page=2" in stored
    assert not any(v in stored for _, values in lines for v in values)
