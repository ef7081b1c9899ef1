"""A generated corpus for the credential scanner: credential forms that must be found, benign look-alikes that
must not (issue 25, "Measured, not hoped").

Nothing here is a secret: every template names the shape of its material (`{alnum:36}`, `{pw}`, `{basic}`) and
`credentials()` fills it from a seeded random generator when a test runs, so the repository holds no string a
secret scanner would take for a real key, while each run sees the same corpus (SEED). The benign side is built
the same way: random digests, UUIDs, SHAs and images, real-looking public keys, and the stand-ins documentation
writes where a secret goes.

A credential *form* is a way a credential reaches a note: a vendor token in each of the surroundings a note puts
it in (a sentence, a shell export, JSON, a table, glued to a word, split by a backslash-newline), and each
command, header, URL and config form of issue 25's everyday list; and the forms developers actually paste
(issue V, tests/secrets_corpus_field.py): vendor prefixes, a credential name in every spelling and syntax,
formats whose lines are secrets. `family` groups the samples one template made (tests/test_secrets_oracle.py
gives each family where detect-secrets disagrees a reason).
"""

from __future__ import annotations

import base64
import random
import re
import string
import uuid
from dataclasses import dataclass, field
from urllib.parse import quote

from tests import secrets_corpus_field as field_forms

SEED = 20261201

ALPHABETS = {
    "alnum": string.ascii_letters + string.digits,
    "lower": string.ascii_lowercase,
    "updigits": string.ascii_uppercase + string.digits,
    "digits": string.digits,
    "hex": "0123456789abcdef",
    "b64": string.ascii_letters + string.digits + "+/",
    "b64url": string.ascii_letters + string.digits + "-_",
    "pw": string.ascii_letters + string.digits + "!%+-.@^_~",
}
_FILLER = re.compile(r"x{3}|0{6}|example|abcdefgh|1234567890|test|fake|dummy|sample|todo|pass|secret|token|key"
                     r"|your|my[_-]?|changeme|redacted|placeholder|vault|none|null|true|false",
                     re.IGNORECASE)
SLOT = re.compile(r"\{(?:(" + "|".join(ALPHABETS) + r"):(\d+)|pw|basic|dockerauth|sas|uuid|sha|jwt|discord)\}")


@dataclass
class Sample:
    form: str  # what the sample is, e.g. "github-token in a sentence"
    kind: str | None  # the kind the scanner must report; None: benign, must have no finding
    text: str
    material: list[str] = field(default_factory=list)  # generated secret parts, which redaction must remove
    family: str = ""  # the template it came from, e.g. "Docker personal access token" or "a YAML member"
    # Kinds it may be reported as instead: a credential name that is also a header name (`apiKey: ...`) is
    # found by whichever of the two detectors reads it first.
    also: tuple[str, ...] = ()

    @property
    def kinds(self) -> set[str]:
        return {self.kind, *self.also} if self.kind else set()


class Material:
    """Random material for the slots, from one seeded generator."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def chars(self, alphabet: str, n: int) -> str:
        chars = ALPHABETS[alphabet]
        mixed = any(c.isdigit() for c in chars) and any(c.isalpha() for c in chars)
        while True:
            value = "".join(self.rng.choice(chars) for _ in range(n))
            if mixed and not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
                continue
            if (n < 12 or len(set(value)) >= 10) and not _FILLER.search(value) and value[:1].isalnum():
                return value

    def slot(self, name: str, size: str | None) -> str:
        if size is not None:
            return self.chars(name, int(size))
        if name == "pw":
            return self.chars("pw", self.rng.randrange(10, 20))
        if name == "basic":
            return base64.b64encode(f"deploy:{self.slot('pw', None)}".encode()).decode()
        if name == "dockerauth":
            return base64.b64encode(f"ci-bot:{self.chars('alnum', 24)}".encode()).decode()
        if name == "sas":
            return quote(base64.b64encode(self.rng.randbytes(32)).decode(), safe="")
        if name == "uuid":
            return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        if name == "sha":
            return self.chars("hex", 40)
        if name == "discord":  # the bot's numeric ID in base64, a timestamp, an HMAC
            bot_id = base64.b64encode(str(self.rng.randrange(10**17, 10**18)).encode()).decode().rstrip("=")
            return f"{bot_id}.{self.chars('b64url', 6)}.{self.chars('b64url', 38)}"
        assert name == "jwt"
        head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').rstrip(b"=").decode()
        body = base64.urlsafe_b64encode(b'{"sub":"%d"}' % self.rng.randrange(10**9)).rstrip(b"=").decode()
        return f"{head}.{body}.{self.chars('b64url', 43)}"

    def fill(self, template: str) -> tuple[str, list[str]]:
        values: list[str] = []

        def one(m: re.Match) -> str:
            value = self.slot(m.group(1) or m.group(0)[1:-1], m.group(2))
            values.append(value)
            return value

        text = SLOT.sub(one, template).replace("{{", "{").replace("}}", "}")  # `{{` writes a brace
        return text, values


# Vendor tokens: (kind, what, template, may be glued onto a word).
TOKENS = [
    ("hf-token", "Hugging Face", "hf_{alnum:34}", True),
    ("github-token", "GitHub classic", "ghp_{alnum:36}", True),
    ("github-token", "GitHub OAuth", "gho_{alnum:36}", True),
    ("github-token", "GitHub app installation", "ghs_{alnum:36}", True),
    ("github-token", "GitHub fine-grained", "github_pat_{alnum:22}_{alnum:59}", True),
    ("gitlab-token", "GitLab personal", "glpat-{b64url:20}", True),
    ("slack-token", "Slack bot", "xoxb-{digits:12}-{digits:13}-{alnum:24}", True),
    ("slack-token", "Slack app-level", "xapp-1-A{updigits:10}-{digits:13}-{hex:64}", True),
    ("slack-token", "Slack app-level, short", "xapp-1-A{updigits:8}-{digits:6}-{hex:12}", True),
    ("slack-webhook", "Slack webhook", "https://hooks.slack.com/services/T{updigits:8}/B{updigits:8}/{alnum:24}", False),
    ("stripe-key", "Stripe live", "sk_live_{alnum:24}", True),
    ("stripe-key", "Stripe restricted", "rk_live_{alnum:24}", True),
    ("anthropic-key", "Anthropic", "sk-ant-api03-{b64url:93}AA", True),
    ("openai-key", "OpenAI legacy", "sk-{alnum:48}", False),
    ("openai-key", "OpenAI project", "sk-proj-{b64url:100}", False),
    ("npm-token", "npm", "npm_{alnum:36}", True),
    ("pypi-token", "PyPI", "pypi-AgEIcHlwaS5vcmc{b64url:60}", True),
    ("aws-access-key-id", "AWS access key ID", "AKIA{updigits:16}", True),
    ("gcp-api-key", "Google API", "AIza{b64url:35}", True),
    ("jwt", "JWT", "{jwt}", False),
    ("sendgrid-key", "SendGrid", "SG.{b64url:22}.{b64url:43}", True),
    ("twilio-key", "Twilio API key", "SK{hex:32}", False),
    ("discord-webhook", "Discord webhook",
     "https://discord.com/api/webhooks/{digits:18}/{b64url:68}", False),
]

# Where a note puts a token: (what, template with {t} for the token).
SURROUNDINGS = [
    ("alone on a line", "{t}"),
    ("in a sentence", "The CI job used {t} until it was rotated on Friday."),
    ("in backticks", "Set it to `{t}` in the runner."),
    ("in a JSON value", '{{"name": "deploy", "value": "{t}"}}'),
    ("in a markdown table", "| prod | {t} | rotated |"),
    ("in a quoted reply", "> here is what I used: {t}"),
]
GLUED = ("glued onto a word", "checkpoint{t}")
SPLIT = ("split by a trailing backslash", "export DEPLOY_VALUE={head}\\\n{tail}")

# Everyday forms of issue 25 (and a few of their kin): (kind, what, template).
EVERYDAY = [
    ("basic-auth", "curl -u", "curl -u deploy:{pw} https://api.invalid/v1/items"),
    ("basic-auth", "curl --user, quoted", 'curl --user "ci-bot:{pw}" https://api.invalid/v1'),
    ("basic-auth", "curl --user=", "curl -sS --user=admin:{pw} https://api.invalid"),
    ("basic-auth", "curl -u glued", "curl -uadmin:{pw} https://api.invalid"),
    ("basic-auth", "curl -u on a continued line",
     "curl -sS -X POST \\\n  -H 'Content-Type: application/json' \\\n  -u admin:{pw} \\\n  https://api.invalid/hook"),
    ("basic-auth", "Authorization: Basic", "Authorization: Basic {basic}"),
    ("basic-auth", "a curl Basic header", "curl -H 'Authorization: Basic {basic}' https://api.invalid"),
    ("basic-auth", "a Basic header in code", 'headers = {{"Authorization": "Basic {basic}"}}'),
    ("auth-header", "x-api-key in an HTTP dump", "GET /v1/items HTTP/1.1\nHost: api.invalid\nx-api-key: {alnum:40}"),
    ("auth-header", "X-API-Key with curl", "curl -H 'X-API-Key: {alnum:32}' https://api.invalid/v2"),
    ("auth-header", "api-key (Azure OpenAI)", 'curl -H "api-key: {hex:32}" https://oai.invalid/openai'),
    ("auth-header", "X-Auth-Token", 'curl -H "X-Auth-Token: {alnum:32}" https://api.invalid'),
    ("auth-header", "Private-Token (GitLab)", "curl --header 'Private-Token: {b64url:20}' https://gitlab.invalid/api"),
    # A Vault token is known by its prefix before the header it is in.
    ("vault-token", "X-Vault-Token", "curl -H 'X-Vault-Token: hvs.{alnum:24}' https://vault.invalid/v1/kv"),
    ("auth-header", "Ocp-Apim-Subscription-Key", "Ocp-Apim-Subscription-Key: {hex:32}"),
    ("auth-header", "X-API-KEY in a Python dict", 'requests.get(url, headers={{"X-API-KEY": "{alnum:32}"}})'),
    ("auth-header", "Authorization: Token", "curl -H 'Authorization: Token {hex:40}' https://api.invalid"),
    ("auth-header", "Authorization: Bot", "Authorization: Bot {alnum:24}.{b64url:6}.{b64url:27}"),
    ("auth-header", "Authorization: SSWS", "Authorization: SSWS {b64url:42}"),
    ("command-password", "PGPASSWORD before psql", "PGPASSWORD={pw} psql -h db.internal -U app app"),
    ("command-password", "PGPASSWORD quoted before pg_dump", "PGPASSWORD='{pw}' pg_dump -h db app > app.sql"),
    ("command-password", "mysql -p glued", "mysql -u root -p{pw} app"),
    ("command-password", "mysql -p quoted", "mysql -h db -uroot -p'{pw}' -e 'select 1'"),
    # A value after `--password=`, short or long, is a password given to a credential-named option.
    ("password-assignment", "mysqldump --password= short", "mysqldump --user=app --password={alnum:7} app"),
    ("password-assignment", "mysql --password= in a script", "mysql --password={pw} --execute 'show tables' app"),
    ("command-password", "sshpass, the password quoted", "sshpass -p '{pw}' ssh deploy@host.invalid"),
    ("command-password", "sshpass, the password glued on", "sshpass -p{pw} scp build.tgz host.invalid:/srv"),
    ("command-password", "MYSQL_PWD before mysql", "MYSQL_PWD={pw} mysql -u app -h db"),
    ("command-password", "docker login -p", "docker login -u ci -p {pw} registry.invalid"),
    ("command-password", "redis-cli -a", "redis-cli -h cache.internal -a {pw} ping"),
    ("command-password", "a token variable before a command", "DEPLOY_TOKEN={alnum:24} ./scripts/deploy.sh prod"),
    ("password-assignment", "a short password variable at the end of a line", "export DB_PASSWORD={alnum:6}"),
    ("azure-key", "an Azure storage connection string",
     "DefaultEndpointsProtocol=https;AccountName=appstore;AccountKey={b64:86}==;EndpointSuffix=core.windows.net"),
    ("azure-key", "a connection string in appsettings.json",
     '{{"AzureWebJobsStorage": "DefaultEndpointsProtocol=https;AccountName=fn;AccountKey={b64:86}=="}}'),
    ("azure-key", "a Service Bus SharedAccessKey",
     "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={b64:43}="),
    ("azure-sas", "a SAS URL",
     "https://acct.blob.core.windows.net/c/report.csv?sv=2022-11-02&ss=b&srt=o&sp=r"
     "&se=2026-12-31T00:00:00Z&spr=https&sig={sas}"),
    ("azure-sas", "a SAS in a connection string",
     "BlobEndpoint=https://acct.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&sp=rl&sig={sas}"),
    ("url-token", "?access_token=", "https://api.invalid/v1/items?access_token={alnum:40}"),
    ("url-token", "?token= on a websocket", "wss://stream.invalid/socket?token={b64url:32}"),
    ("url-token", "&token= in a feed URL", "https://tracker.invalid/feed.xml?user=ann&token={hex:32}"),
    ("url-token", "?api_key=", "https://host.invalid/api?api_key={alnum:32}&format=json"),
    ("url-token", "?token= on raw GitHub", "https://raw.githubusercontent.com/o/r/main/x.txt?token=GHSAT{updigits:29}"),
    ("url-token", "#access_token= in a redirect", "https://app.invalid/cb#access_token={b64url:40}&token_type=bearer"),
    ("url-token", "?password= in a URL", "https://nas.invalid/login?user=admin&password={pw}"),
    ("docker-auth", "a Docker config.json auth",
     '{{\n  "auths": {{\n    "registry.invalid": {{\n      "auth": "{dockerauth}"\n    }}\n  }}\n}}'),
    ("docker-auth", "an identitytoken", '{{"auths": {{"acr.invalid": {{"identitytoken": "{b64url:40}"}}}}}}'),
]


def _split(template: str, material: Material) -> tuple[str, list[str]]:
    token, values = material.fill(template)
    cut = len(token) // 2
    return SPLIT[1].format(head=token[:cut], tail=token[cut:]), values + [token]


def credentials(seed: int = SEED) -> list[Sample]:
    """Every credential form with fresh material (the same for the same seed)."""
    material = Material(random.Random(seed))
    out: list[Sample] = []
    for kind, what, template, glues in TOKENS + field_forms.VENDORS:
        places = SURROUNDINGS + ([GLUED] if glues else [])
        for where, around in places:
            token, values = material.fill(template)
            out.append(Sample(f"{what} {where}", kind, around.format(t=token), values, what))
        text, values = _split(template, material)
        out.append(Sample(f"{what} {SPLIT[0]}", kind, text, values, what))
    for kind, what, template in EVERYDAY:
        text, values = material.fill(template)
        out.append(Sample(what, kind, text, values, what))
    out += _named(material)
    for kind, what, template in field_forms.FILES:
        text, values = material.fill(template)
        out.append(Sample(what, kind, text, values, what))
    return out


def _named(material: Material) -> list[Sample]:
    """A credential name in each spelling given a value in each syntax (issue V): coverage as a property."""
    from agentmem.safety import contexts

    header = re.compile(contexts._HEADER_NAME)
    out = []
    for i, (spelling, name, password) in enumerate(field_forms.NAMES):
        for j, (syntax, template, passwords_only) in enumerate(field_forms.SYNTAXES):
            if passwords_only and not password:
                continue
            # Every third value is longer than 200 characters (real session tokens are).
            slot = "{pw}" if password else ("{b64url:320}" if (i + j) % 3 == 0 else "{alnum:32}")
            text, values = material.fill(template.replace("{v}", slot).replace("{n}", name))
            also = ("auth-header",) if ":" in template and header.fullmatch(name) else ()
            out.append(Sample(f"{spelling} name ({name}), {syntax}", "password-assignment", text, values, syntax,
                              also))
    return out


def benign(seed: int = SEED) -> list[Sample]:
    """Every benign look-alike, random parts filled (the same for the same seed)."""
    material = Material(random.Random(seed + 1))
    out: list[Sample] = []
    for form, templates in BENIGN.items():
        for template in templates:
            text, _ = material.fill(template)
            out.append(Sample(form, None, text))
    for form, templates in field_forms.BENIGN.items():
        for template in templates:
            text, _ = material.fill(template)
            out.append(Sample(form, None, text))
    rng = random.Random(seed + 2)
    for form, make in GENERATED_BENIGN.items():
        for _ in range(3):
            out.append(Sample(form, None, make(rng)))
    return out


def _integrity(rng: random.Random) -> str:
    digest = base64.b64encode(rng.randbytes(64)).decode()
    return f'"node_modules/left-pad": {{"version": "1.3.0", "integrity": "sha512-{digest}"}}'


def _data_uri(rng: random.Random) -> str:
    image = base64.b64encode(b"\x89PNG\r\n\x1a\n" + rng.randbytes(300)).decode()
    return f'<img alt="logo" src="data:image/png;base64,{image}">'


def _ssh_ed25519(rng: random.Random) -> str:
    blob = b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + rng.randbytes(32)
    return f"ssh-ed25519 {base64.b64encode(blob).decode()} ann@laptop"


def _ssh_rsa(rng: random.Random) -> str:
    blob = b"\x00\x00\x00\x07ssh-rsa\x00\x00\x00\x03\x01\x00\x01\x00\x00\x01\x01\x00" + rng.randbytes(256)
    return f"github.com ssh-rsa {base64.b64encode(blob).decode()}"


def _pem(kind: str):
    def make(rng: random.Random) -> str:
        body = base64.b64encode(rng.randbytes(270)).decode()
        lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
        return f"-----BEGIN {kind}-----\n{lines}\n-----END {kind}-----"

    return make


def _go_sum(rng: random.Random) -> str:
    return f"golang.org/x/text v0.14.0 h1:{base64.b64encode(rng.randbytes(32)).decode()}"


def _uuid_row(rng: random.Random) -> str:
    ids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(3)]
    return f"request_id={ids[0]} trace={ids[1]} tenant={ids[2].upper()}"


GENERATED_BENIGN = {
    "lockfile integrity (sha512)": _integrity,
    "data: URI image": _data_uri,
    "ssh-ed25519 public key": _ssh_ed25519,
    "ssh-rsa known_hosts line": _ssh_rsa,
    "PEM public key": _pem("PUBLIC KEY"),
    "PEM certificate": _pem("CERTIFICATE"),
    "go.sum hash": _go_sum,
    "UUIDs in a log line": _uuid_row,
}

# Benign look-alikes by form: templates whose slots are filled with random (non-secret) material.
BENIGN = {
    "lockfile hashes": [
        'checksum = "{hex:64}"',
        'hash = "sha256:{hex:64}"',
        "requests==2.32.3 --hash=sha256:{hex:64}",
        "  integrity sha1-{b64:27}=",
        "oid sha256:{hex:64}\nsize 48213",
    ],
    "UUIDs": [
        "uid: {uuid}",
        '{{"id": "{uuid}", "parent": "{uuid}"}}',
        "arn:aws:kms:eu-west-1:{digits:12}:key/{uuid}",
        "subscriptions/{uuid}/resourceGroups/app",
    ],
    "commit SHAs": [
        "commit {sha}",
        "git checkout {sha} -- src/",
        "https://github.com/org/repo/commit/{sha}",
        "sha: {sha}",
        '{{"sha": "{sha}", "ref": "refs/heads/main"}}',
        "registry.invalid/app@sha256:{hex:64}",
        "uses: actions/checkout@{sha} # v4",
    ],
    "ARNs": [
        "arn:aws:iam::{digits:12}:role/deploy",
        "arn:aws:secretsmanager:us-east-1:{digits:12}:secret:prod/db-password-AbCdEf",
        "arn:aws:s3:::app-artifacts-{digits:6}/builds/*",
        "arn:aws:lambda:us-east-1:{digits:12}:function:token-refresher",
    ],
    "code that reads a secret from the environment": [
        'token = os.environ["HF_TOKEN"]',
        'api_key = os.getenv("OPENAI_API_KEY")',
        "const token = process.env.GITHUB_TOKEN;",
        "password: ${{{{ secrets.DB_PASSWORD }}}}",
        "NPM_TOKEN: ${{{{ secrets.NPM_TOKEN }}}}",
        "PGPASSWORD=$DB_PASS psql -h db -U app",
        'PGPASSWORD="${{PGPASSWORD}}" pg_dump app',
        'mysql -u root -p"$MYSQL_ROOT_PASSWORD" app',
        'curl -u "$USER:$TOKEN" https://api.invalid',
        "curl -u deploy:$DEPLOY_PASSWORD https://api.invalid",
        'curl -H "X-API-Key: $API_KEY" https://api.invalid',
        'curl -H "Authorization: Basic $(printf %s "$CREDS" | base64)" https://api.invalid',
        "sshpass -e ssh deploy@host.invalid",
        'sshpass -p "$SSHPASS" ssh host.invalid',
        "echo $PGPASSWORD | wc -c",
        "docker login -u ci --password-stdin registry.invalid < token.txt",
        "valueFrom:\n  secretKeyRef:\n    name: db-credentials\n    key: password",
        "//registry.npmjs.org/:_authToken=${{NPM_TOKEN}}",
        "export GITHUB_TOKEN=$(gh auth token)",
        "https://api.invalid/v1?access_token=${{ACCESS_TOKEN}}",
        'redis-cli -a "$REDIS_PASSWORD" ping',
    ],
    "documentation placeholders": [
        "export HF_TOKEN=<your-token>",
        "token: xxxx",
        "API_KEY=YOUR_API_KEY",
        "OPENAI_API_KEY=sk-...",
        "GITHUB_TOKEN=ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
        "ghp_XXXXXXXX",
        "password: changeme",
        "hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "https://api.invalid/items?token=<token>",
        "https://api.invalid/items?token=$TOKEN",
        "https://api.invalid/items?access_token=YOUR_ACCESS_TOKEN",
        "https://api.invalid/items?token={{{{token}}}}",
        "https://api.invalid/items?token=%3Ctoken%3E",
        "curl -u user:password https://api.invalid",
        "curl -u USER:PASS https://api.invalid",
        "Authorization: Basic <base64 of user:password>",
        "Authorization: Basic dXNlcjpwYXNzd29yZA==",
        "-H 'X-API-Key: <your-api-key>'",
        "AccountKey=<storage-account-key>",
        "DefaultEndpointsProtocol=https;AccountName=<name>;AccountKey=...;EndpointSuffix=core.windows.net",
        "&sig=<signature>",
        '"auth": "<base64 user:token>"',
        "SG.xxxxxxxxxxxxxxxxxxxxxx.xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "PGPASSWORD=secret psql",
        "mysql -u root -ppassword",
        "sshpass -p '<password>' ssh host",
        "https://discord.com/api/webhooks/<id>/<token>",
        "xapp-1-...",
        "sk-ant-...",
    ],
    "other tools' -p and -u options": [
        "mkdir -p build/out",
        "ssh -p 2222 deploy@host.invalid",
        "docker run -p 8080:80 nginx",
        "scp -P 2222 file host.invalid:",
        "git add -p",
        "cp -p a b",
        "pytest -p no:cacheprovider",
        "mysql -P 3306 -h db -u app -p",
        "mysql -u root -p app",
        "mysql -uroot -p -h db.internal",
        "lsof -p 1234",
        "ps -p 42 -o pid,cmd",
        "grep -P '\\d+' log.txt",
        "sort -u names.txt | uniq -c",
        "curl -u admin https://api.invalid  # prompts for the password",
        "curl -u : --negotiate https://intranet.invalid",
        "git log -u -p HEAD~3..",
        "kubectl exec -it pod -- psql -U app -p 5432",
    ],
    "token and password options that name a file": [
        "gh auth login --with-token < token.txt",
        "vault login -method=token --token-file ~/.vault-token",
        "app --password-file=/run/secrets/db --token-file=/run/secrets/api",
        "rclone config --password-command 'pass show rclone'",
        "--secret id=npmrc,src=$HOME/.npmrc",
    ],
    "prose about tokens and passwords": [
        "The token expired after an hour, so the job failed with 401.",
        "Rotate the database password every ninety days; the password is kept in the vault.",
        "Pass the API key in the X-API-Key header, never in the query string.",
        "The api-key: header is case-insensitive in this gateway.",
        "Basic auth is disabled on the staging proxy.",
        "password: required (the form rejects an empty one)",
        "Authorization: token expired",
        "Use `mysql -p` so the password is prompted for, not stored in history.",
        "The tokenizer splits on whitespace; max_tokens = 4096.",
        "We pass token=token to the client constructor.",
        "sshpass is a last resort; prefer keys.",
        "Set `?token=` only in local tests, with a fake value.",
        "The secret key is derived at start-up from the machine ID.",
        "pad_token = \"[PAD]\" and eos_token = \"</s>\"",
        "A PGPASSWORD in the environment is read by psql and pg_dump.",
    ],
    "identifiers vendors print": [
        "Twilio account AC{hex:32} (the SID, shown on every invoice)",
        "SendGrid template d-{hex:32}",
        "https://discord.gg/{alnum:8}",
        "https://discord.com/channels/{digits:18}/{digits:18}",
        "https://app.slack.com/client/T{updigits:8}/C{updigits:8}",
        "Slack channel C{updigits:8}",
        "https://{hex:32}@o{digits:6}.ingest.sentry.io/{digits:7}",
        "UseDevelopmentStorage=true",
        '<img src="https://codecov.io/gh/org/repo/branch/main/graph/badge.svg?token={updigits:10}">',
        "AccountName=appstore;EndpointSuffix=core.windows.net",
        "https://acct.blob.core.windows.net/c/report.csv?sv=2022-11-02&se=2026-12-31",
        "projects/{digits:12}/locations/global/keyRings/app/cryptoKeys/token-signer",
    ],
    "ordinary code and config": [
        'password_hash = "$2b$12${b64:53}"',
        "css: #{hex:6}; color: #{hex:6}",
        "build {digits:8} took 3m12s; cache key linux-node-{hex:16}",
        "page_token=CAEQ{b64url:12}&page_size=50",
        "https://api.invalid/list?next_token={digits:10}&limit=100",
        "https://api.invalid/oauth?response_type=code&token_type=bearer",
        'session_id = "{hex:32}"',
        "x-request-id: {uuid}",
        "X-Token-Count: 4096",
        "X-Idempotency-Key: {uuid}",
        "X-Cache-Key: GET:/api/v1/items:page=2",
        "X-Hub-Signature-256: sha256={hex:64}",
        "X-GitHub-Delivery: {uuid}",
        "environment:\n  - POSTGRES_PASSWORD_FILE=/run/secrets/pg\n  - POSTGRES_USER=app",
        "Key: value pairs are separated by a colon.",
        '"auth": "required"',
        "authorization: none",
        "def refresh_token(self, token: str) -> str:",
        "token = parts[2]",
        "headers['Authorization'] = f'Bearer {{token}}'",
        'auth = HTTPBasicAuth(user, password)',
        "--user=app --host=db.internal",
        "curl --user-agent 'agentmem/1.0' https://api.invalid",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: api-token-x7k2p",
        "docker-compose.yml: POSTGRES_PASSWORD_FILE=/run/secrets/pg",
    ],
}
