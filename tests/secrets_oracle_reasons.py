"""Where detect-secrets (the oracle in the test extra) and our scanner disagree on the generated corpus, and why.

`compare()` runs both over the same samples (tests/secrets_corpus.py): each sample is written to a note file
and scanned with detect-secrets' default plugins and filters, as a repository scan would. A string it flags
counts as ours when one of our findings overlaps it. tests/test_secrets_oracle.py holds the figures to
these lists; bench/secrets_oracle.py prints them for docs/benchmarks.md.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from agentmem.safety import credentials

SPLIT = ("split across two lines by a backslash-newline: detect-secrets reads a note line by line and neither "
         "half has the token's shape; we scan the text with the join undone")

# Credential forms detect-secrets does not flag: reason -> the families (tests/secrets_corpus.py) it covers.
MISSED = {
    "no rule for this vendor's prefix; its entropy plugins read quoted strings only, so it finds the token, "
    "if at all, where a note quotes it (the JSON value)": [
        "Hugging Face", "Hugging Face organization token", "Anthropic", "Anthropic admin key", "npm",
        "npm token, longer", "Google API", "Google API key, longer", "Google OAuth client secret",
        "Google OAuth access token", "Docker personal access token", "Mailgun API key", "Shopify admin token",
        "Shopify shared secret", "DigitalOcean personal token", "Vault service token", "Vault batch token",
        "Terraform Cloud token", "Atlassian API token", "Linear API key", "Azure AD client secret",
        "Postman API key", "Doppler token", "Grafana service account token", "Sentry user token",
        "PlanetScale token", "New Relic user key", "Pulumi token", "Groq key", "Replicate token", "age secret key",
        "Square access token", "Dynatrace token", "Buildkite token", "RubyGems key", "Notion token",
        "Stripe webhook secret", "Discord webhook", "GitHub fine-grained"],
    "its OpenAI rule wants the `T3BlbkFJ` marker that legacy keys carried; project, service-account and newer "
    "keys have none": ["OpenAI legacy", "OpenAI project", "OpenAI service account key"],
    "its PyPI rule wants 70 or more characters after the prefix's fixed part; the corpus's token has 60 (real "
    "ones are longer), and we match the prefix and charset whatever the length": ["PyPI"],
    "its Slack rule knows xox[baprs]- tokens with numeric IDs and webhooks: app-level `xapp-`, refresh `xoxe-` "
    "tokens and IDs with letters are not in it": [
        "Slack app-level", "Slack app-level, short", "Slack app-level, tail under 64", "Slack bot, random-looking IDs",
        "Slack refresh token"],
    "its Artifactory rule wants a blank, a quote, `=` or `:` before the key: in backticks or glued onto a word "
    "it is not seen": ["Artifactory API key"],
    "a password given on a command line (to curl, mysql, sshpass, docker login, redis-cli, or a variable set "
    "for the command): no rule reads command lines": [
        "curl -u", "curl --user, quoted", "curl --user=", "curl -u glued", "curl -u on a continued line",
        "mysql -p glued", "mysql -p quoted", "mysqldump --password= short", "mysql --password= in a script",
        "sshpass, the password quoted", "sshpass, the password glued on", "MYSQL_PWD before mysql",
        "docker login -p", "redis-cli -a", "a token variable before a command"],
    "a credential in an HTTP header: no rule knows header names (X-API-Key, Private-Token, X-Vault-Token) or "
    "Authorization schemes other than Bearer, and its Basic-auth rule reads `user:password@` in URLs only": [
        "x-api-key in an HTTP dump", "X-API-Key with curl", "api-key (Azure OpenAI)", "Private-Token (GitLab)",
        "X-Vault-Token", "Authorization: Token", "Authorization: Bot", "Authorization: SSWS",
        "Authorization: Basic", "a curl Basic header", "a Basic header in code"],
    "a token in a URL's query: no rule reads query parameters": [
        "?access_token=", "?token= on a websocket", "&token= in a feed URL", "?api_key=", "?token= on raw GitHub",
        "#access_token= in a redirect", "?password= in a URL"],
    "its Azure rule reads `AccountKey=` only: Service Bus's `SharedAccessKey=` and SAS signatures are not in it": [
        "a Service Bus SharedAccessKey", "a SAS URL", "a SAS in a connection string"],
    "its keyword rule knows a fixed list of spellings and, in a file whose type it cannot tell (a note), reads "
    "mostly quoted values: camelCase, kebab and prefixed names, bare values, options (`--db-password X`), `:=`, "
    "keyword arguments and pairs in the middle of a line pass it": [
        "a config line", "code, quoted", "a YAML member", "a JSON member", "Go :=", "a CLI flag",
        "a CLI flag with =", "mid-sentence", "a log line", "a keyword argument", "a YAML list item", "an export",
        "a libpq string"],
    "no rule knows these formats: .netrc puts the password after a blank, .pgpass in a colon-separated field, "
    "INI, .pypirc and kubeconfig after an unquoted `=` or `:`": [
        ".netrc on one line", ".netrc over several lines", ".pgpass line", ".pgpass line with wildcards",
        ".pgpass line for an address", "INI pass =", ".pypirc", "kubeconfig client-key-data", "kubeconfig user token"],
}
_MISSED_BY_FAMILY = {family: reason for reason, families in MISSED.items() for family in families}

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
    ("placeholders in every syntax", "Secret Keyword"):
        "`changeme` and the defaults compose files print (`POSTGRES_PASSWORD=postgres`, `root`): stand-ins",
    ("hashes under other names", "Secret Keyword"):
        "the name says digest, fingerprint or htpasswd, and the value is a hash (sha256:..., $apr1$...)",
    ("hashes under other names", "Hex High Entropy String"): "a SHA-256 digest or a key's fingerprint: public",
    ("UUIDs and IDs under credential-like names", "Secret Keyword"):
        "`secretName: db-credentials-v2` names a Kubernetes Secret object; it does not hold one",
    ("public keys and certificates", "Base64 High Entropy String"):
        "a kubeconfig's client certificate and certificate authority: public by design",
    ("names with no value", "Secret Keyword"):
        "code that names the value (a type annotation, the name itself, settings.X, a getpass() call)",
    ("credential words in prose", "Secret Keyword"): "a sentence after `password:`, not a password",
}


@dataclass
class Comparison:
    credentials: list = field(default_factory=list)
    benign: list = field(default_factory=list)
    flags: dict = field(default_factory=dict)  # id(sample) -> [(plugin, flagged string)]
    ours: dict = field(default_factory=dict)  # id(sample) -> our findings

    def oracle_found(self, samples) -> list:
        return [s for s in samples if self.flags[id(s)]]

    def we_found(self, samples) -> list:
        return [s for s in samples if self.ours[id(s)]]

    def unmatched(self) -> list[tuple[str, str]]:
        """(form, plugin) of each string detect-secrets flags in a credential form that we do not."""
        out = []
        for s in self.credentials:
            for plugin, value in self.flags[id(s)]:
                flagged = value.strip("\\\"'")
                start = s.text.find(flagged)
                assert start >= 0, (s.form, plugin)  # else the overlap below would be judged at the wrong place
                if not any(f.start < start + len(flagged) and start < f.end for f in self.ours[id(s)]):
                    out.append((s.form, plugin))
        return out

    def missed_by_oracle(self) -> list:
        return [s for s in self.credentials if not self.flags[id(s)]]

    def benign_flags(self) -> dict[tuple[str, str], int]:
        """(form, plugin) -> how many look-alikes of that form detect-secrets flags with that plugin."""
        out: dict[tuple[str, str], int] = {}
        for s in self.benign:
            for plugin in {p for p, _ in self.flags[id(s)]}:
                out[(s.form, plugin)] = out.get((s.form, plugin), 0) + 1
        return out


def reason_missed(sample) -> str | None:
    if sample.form.endswith("split by a trailing backslash"):
        return SPLIT
    return _MISSED_BY_FAMILY.get(sample.family)


def compare(credential_samples, benign_samples) -> Comparison:
    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    result = Comparison(list(credential_samples), list(benign_samples))
    with tempfile.TemporaryDirectory() as tmp, default_settings():
        note = Path(tmp) / "note.md"
        for sample in result.credentials + result.benign:
            note.write_text(sample.text + "\n")
            found = SecretsCollection(root=tmp)
            found.scan_file(note.name)
            result.flags[id(sample)] = [(secret.type, secret.secret_value) for name in found.files
                                        for secret in found[name]]
            result.ours[id(sample)] = credentials.scan(sample.text)
    return result
