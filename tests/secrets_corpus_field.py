"""The forms developers actually paste (issue V), for the generated corpus (tests/secrets_corpus.py).

Written from the field's rule categories taken as facts about formats (which vendors put which prefix on
their tokens, which files hold secrets line by line), in patterns of our own. Three parts:

- VENDORS: tokens known by a prefix and a charset (and a few by shape: Discord and Telegram bot tokens,
  Mailchimp keys, Terraform Cloud and Azure AD secrets), placed in every surrounding of `SURROUNDINGS`;
- NAMED: a credential name in every common spelling given a value in every common syntax, so coverage is
  a property of name x syntax rather than a list (the value is a password for password names and a key
  for the others, sometimes longer than 200 characters);
- FILES: formats whose lines are secrets (.netrc, .pgpass, INI, kubeconfig, a service account's JSON).

BENIGN holds the look-alikes that must keep saving: the same names and syntaxes with placeholders,
hashes, UUIDs, public keys, names with no value, and credential words in prose.
"""

from __future__ import annotations

# (kind, what, template, may be glued onto a word): as secrets_corpus.TOKENS.
VENDORS = [
    ("google-oauth", "Google OAuth client secret", "GOCSPX-{b64url:28}", True),
    ("google-oauth", "Google OAuth access token", "ya29.{b64url:150}", True),
    ("docker-token", "Docker personal access token", "dckr_pat_{b64url:27}", True),
    ("discord-bot-token", "Discord bot token", "{discord}", False),
    ("telegram-bot-token", "Telegram bot token", "{digits:10}:AA{b64url:33}", False),
    ("mailgun-key", "Mailgun API key", "key-{hex:32}", False),
    ("mailchimp-key", "Mailchimp API key", "{hex:32}-us{digits:2}", False),
    ("shopify-token", "Shopify admin token", "shpat_{hex:32}", True),
    ("shopify-token", "Shopify shared secret", "shpss_{hex:32}", True),
    ("digitalocean-token", "DigitalOcean personal token", "dop_v1_{hex:64}", True),
    ("vault-token", "Vault service token", "hvs.{b64url:95}", True),
    ("vault-token", "Vault batch token", "hvb.{b64url:140}", True),
    ("terraform-token", "Terraform Cloud token", "{alnum:14}.atlasv1.{b64url:67}", False),
    ("atlassian-token", "Atlassian API token", "ATATT3{b64url:180}={updigits:8}", True),
    ("linear-key", "Linear API key", "lin_api_{alnum:40}", True),
    ("slack-token", "Slack bot, random-looking IDs", "xoxb-{alnum:11}-{alnum:12}-{alnum:24}", True),
    ("slack-token", "Slack app-level, tail under 64", "xapp-1-A{updigits:10}-{digits:13}-{hex:40}", True),
    ("slack-token", "Slack refresh token", "xoxe-1-{alnum:140}", True),
    ("azure-ad-secret", "Azure AD client secret", "{alnum:3}{digits:1}Q~{b64url:34}", False),
    ("vendor-token", "Postman API key", "PMAK-{hex:24}-{hex:34}", True),
    ("vendor-token", "Doppler token", "dp.pt.{alnum:43}", True),
    ("vendor-token", "Grafana service account token", "glsa_{alnum:32}_{hex:8}", True),
    ("vendor-token", "Sentry user token", "sntryu_{hex:64}", True),
    ("vendor-token", "PlanetScale token", "pscale_tkn_{alnum:43}", True),
    ("vendor-token", "New Relic user key", "NRAK-{updigits:27}", True),
    ("vendor-token", "Pulumi token", "pul-{hex:40}", True),
    ("vendor-token", "Groq key", "gsk_{alnum:52}", True),
    ("vendor-token", "Replicate token", "r8_{alnum:37}", True),
    ("vendor-token", "age secret key", "AGE-SECRET-KEY-1{updigits:58}", True),
    ("vendor-token", "Square access token", "sq0atp-{b64url:22}", True),
    ("vendor-token", "Square OAuth secret", "sq0csp-{b64url:43}", True),
    ("vendor-token", "Dynatrace token", "dt0c01.{updigits:24}.{updigits:64}", True),
    ("vendor-token", "Buildkite token", "bkua_{hex:40}", True),
    ("vendor-token", "RubyGems key", "rubygems_{hex:48}", True),
    ("vendor-token", "Notion token", "ntn_{alnum:46}", True),
    ("vendor-token", "Artifactory API key", "AKCp{alnum:69}", True),
    ("github-token", "GitHub refresh token", "ghr_{alnum:76}", True),
    ("gitlab-token", "GitLab deploy token", "gldt-{b64url:20}", True),
    ("stripe-key", "Stripe webhook secret", "whsec_{alnum:32}", True),
    ("hf-token", "Hugging Face organization token", "api_org_{alnum:34}", True),
    ("openai-key", "OpenAI service account key", "sk-svcacct-{b64url:120}", False),
    ("anthropic-key", "Anthropic admin key", "sk-ant-admin01-{b64url:93}AA", True),
    ("gcp-api-key", "Google API key, longer", "AIza{b64url:39}", True),
    ("aws-access-key-id", "AWS temporary key ID", "ASIA{updigits:16}", True),
    ("npm-token", "npm token, longer", "npm_{alnum:40}", True),
]

# Credential names in the spellings people write: (spelling, name, is a password).
NAMES = [
    ("snake", "db_password", True),
    ("camel", "dbPassword", True),
    ("upper kebab", "DB-PASSWORD", True),
    ("upper snake", "MYSQL_ROOT_PASSWORD", True),
    ("dotted", "spring.datasource.password", True),
    ("short", "mysqlPwd", True),
    ("passphrase", "keyPassphrase", True),
    ("x- prefixed kebab", "x-api-key", False),
    ("camel key", "apiKey", False),
    ("upper token", "AUTH_TOKEN", False),
    ("camel token", "authToken", False),
    ("camel access key", "secretAccessKey", False),
    ("snake secret", "client_secret", False),
    ("camel secret", "webhookSecret", False),
    ("kebab token", "refresh-token", False),
    ("trailing base", "SECRET_KEY_BASE", False),
]

# Syntaxes: (what, template with {n} for the name and {v} for the value, for password names only).
SYNTAXES = [
    ("a config line", "{n}={v}", False),
    ("code, quoted", '{n} = "{v}"', False),
    ("a YAML member", "{n}: {v}", False),
    ("a JSON member", '{{"user": "app", "{n}": "{v}"}}', False),
    ("Ruby or PHP =>", "'{n}' => '{v}',", False),
    ("Go :=", '{n} := "{v}"', False),
    ("a CLI flag", "./deploy --{n} {v} --region eu", False),
    ("a CLI flag with =", "./deploy --{n}={v}", False),
    ("mid-sentence", "Use {n}={v} with the staging app.", False),
    ("a log line", "2026-12-01T10:00:00Z INFO user=ann {n}={v} status=200", False),
    ("a keyword argument", 'client = Client(host="db", {n}="{v}")', False),
    ("a comparison", 'if {n} == "{v}":', False),
    ("a YAML list item", "  - {n}: '{v}'", False),
    ("an export", 'export {n}="{v}"', False),
    ("PowerShell", '$env:{n} = "{v}"', False),
    ("a libpq string", "host=db.internal port=5432 user=app {n}={v} dbname=app", True),
]

FILES = [
    ("netrc-password", ".netrc on one line", "machine api.invalid login ann password {pw}"),
    ("netrc-password", ".netrc over several lines", "machine git.invalid\n  login ci-bot\n  password {alnum:40}"),
    ("pgpass-password", ".pgpass line", "db.internal:5432:app:app:{pw}"),
    ("pgpass-password", ".pgpass line with wildcards", "*:*:*:replicator:{pw}"),
    ("pgpass-password", ".pgpass line for an address", "10.0.3.7:6432:billing:billing_rw:{pw}"),
    ("password-assignment", "INI pass =", "[database]\nhost = db.internal\nuser = app\npass = {pw}"),
    ("password-assignment", "INI password =", "[client]\nuser = root\npassword = {pw}\nport = 3306"),
    ("password-assignment", ".pypirc", "[pypi]\nusername = __token__\npassword = {pw}"),
    ("password-assignment", "kubeconfig client-key-data",
     "users:\n- name: admin\n  user:\n    client-certificate: /etc/kubernetes/pki/admin.crt\n    client-key-data: {b64:600}"),
    ("password-assignment", "kubeconfig user token", "users:\n- name: ci\n  user:\n    token: {alnum:48}"),
    ("password-assignment", "an AWS session token, 600 characters", "aws_session_token = {b64:600}"),
    ("password-assignment", "a credential name with a 300-character value", "API_TOKEN={b64url:300}"),
    ("password-assignment", ".npmrc auth token", "//registry.invalid/:_authToken={alnum:36}"),
    ("password-assignment", "application.properties", "spring.datasource.url=jdbc:postgresql://db/app\n"
     "spring.datasource.password={pw}"),
    ("private-key", "a service account's JSON",
     '{{"type": "service_account", "project_id": "app-prod", "private_key_id": "k1", '
     '"private_key": "-----BEGIN PRIVATE KEY-----\\n{b64:64}\\n{b64:64}\\n{b64:64}\\n-----END PRIVATE KEY-----\\n", '
     '"client_email": "ci@app.iam.invalid"}}'),
]

BENIGN = {
    "placeholders in every syntax": [
        'dbPassword = "<your-password>"',
        "apiKey: ${API_KEY}",
        "AUTH_TOKEN=xxxx",
        '"clientSecret": "********"',
        "DB-PASSWORD: changeme",
        "./deploy --api-key $API_KEY --region eu",
        './deploy --db-password "$DB_PASSWORD"',
        "Use client_secret=<client-secret> with the staging app.",
        "host=db.internal user=app password=${PGPASSWORD} dbname=app",
        'SECRET_KEY_BASE=<%= ENV["SECRET_KEY_BASE"] %>',
        "machine api.invalid login ann password <token>",
        "db.internal:5432:app:app:<password>",
        "[database]\npass = changeme",
        "client-key-data: <base64 of the key>",
        "webhookSecret: '{{{{ .Values.webhookSecret }}}}'",
        "POSTGRES_PASSWORD=postgres",
        "  - MYSQL_ROOT_PASSWORD=root",
        "refresh-token: ...",
        "$env:AUTH_TOKEN = $token",
        "x-api-key=YOUR_API_KEY",
        "password=********",
        "secretAccessKey: !Ref SecretKeyParameter",
    ],
    "hashes under other names": [
        "password_hash: $argon2id$v=19$m=65536,t=3,p=4${b64:22}${b64:43}",
        'token_sha256 = "{hex:64}"',
        "secret_digest: sha256:{hex:64}",
        "htpasswd: deploy:$apr1${alnum:8}${b64:22}",
        "api_key_fingerprint={hex:40}",
    ],
    "UUIDs and IDs under credential-like names": [
        'request_id = "{uuid}"',
        "tokenId: {uuid}",
        "secretName: db-credentials-v2",
        "api_key_id={alnum:20}",
        '{{"token_type": "Bearer", "expires_in": 3600}}',
    ],
    "public keys and certificates": [
        'public_key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{b64:43} ann@laptop"',
        "client-certificate-data: {b64:600}",
        "certificate-authority-data: {b64:600}",
        "Mailgun public validation key pubkey-{hex:32}",
        '"publishableKey": "pk_live_{alnum:24}"',
    ],
    "names with no value": [
        "dbPassword",
        "export AUTH_TOKEN",
        "unset DB_PASSWORD",
        "api_key:",
        "secretAccessKey?: string;",
        "def login(password: str, *, api_key: str | None = None):",
        "const {{ apiKey, authToken }} = config;",
        "password=password",
        "token=self.token",
        "apiKey: apiKey,",
        "dbPassword: process.env.DB_PASSWORD,",
        "client_secret = settings.CLIENT_SECRET",
        'password = getpass.getpass("Password: ")',
        "Pass --api-key to the CLI, or set AUTH_TOKEN.",
    ],
    "credential words in prose": [
        "The password: it must be twelve characters or more.",
        "Forgot password: click the link in the email.",
        "Rotate the client_secret every ninety days.",
        "Set apiKey in the dashboard, then restart the worker.",
        "token: expired, fetch a new one from the vault",
        "The build machine password is kept in the team vault.",
        "Tokens starting with xoxb- are bot tokens; hvs. tokens replaced the s. ones.",
    ],
    "colon-separated lines that are not .pgpass": [
        "deploy:x:1001:1001:Deploy user:/home/deploy:/bin/bash",
        "root:*:19000:0:99999:7:::",
        "10:15:30:250:done",
        "2001:db8:0:1:2:3:4:5",
        "0.0.0.0:5432->5432/tcp",
        "app/models.py:12:80: E501 line too long",
    ],
    "INI and config lines that are not secrets": [
        "[limits]\npass = 3\npasses = 5",
        "password_min_length = 12",
        "bypass = true",
        "[auth]\npassword_file = /etc/app/password",
        "client-key: /etc/kubernetes/pki/client.key",
        "ssl_key = client.key",
    ],
}
