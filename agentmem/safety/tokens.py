"""Credentials known by their shape: a vendor's prefix and charset (`hf_`, `ghp_`, `xoxb-`, `dckr_pat_`,
`GOCSPX-`, `hvs.`...), a JWT, an AWS key, a Discord or Telegram bot token. `credentials.py` runs these first.

A prefix is matched with the charset of what follows it and a lower bound on its length, never an exact
length: vendors lengthen their tokens. Most prefixes end in `_`, `-` or `.`, so one pass per such separator
finds them all: the regex engine jumps from one separator to the next (a literal is what it finds fastest),
asks that enough token characters follow, and only then whether a known prefix precedes it; each hit is then
matched against its vendor's pattern. Forty prefixes cost three passes instead of forty searches of the
text (docs/benchmarks.md). Prefixes with no separator start with `A` (`AKIA`, `AIza`, `ATATT3`) and share
a pass of their own; a few shapes are found from where they are used (`credentials.py`'s DETECTORS here).

The left boundary is the check's to judge, so a token glued onto the word before it (`checkpointghp_...`,
a lost space) is found while random data that merely holds a prefix is not.
"""

from __future__ import annotations

import re

from agentmem.safety.placeholders import has_letter_and_digit, is_placeholder, rx

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the scanner is on the save path)
if TYPE_CHECKING:
    from collections.abc import Callable

KIND_NAMES = {
    "hf-token": "a Hugging Face token",
    "github-token": "a GitHub token",
    "gitlab-token": "a GitLab token",
    "slack-token": "a Slack token",
    "slack-webhook": "a Slack webhook URL",
    "stripe-key": "a Stripe secret key",
    "anthropic-key": "an Anthropic API key",
    "openai-key": "an OpenAI API key",
    "npm-token": "an npm token",
    "pypi-token": "a PyPI token",
    "aws-access-key-id": "an AWS access key ID",
    "aws-secret-access-key": "an AWS secret access key",
    "gcp-api-key": "a Google API key",
    "google-oauth": "a Google OAuth client secret or access token",
    "jwt": "a JSON Web Token",
    "sendgrid-key": "a SendGrid API key",
    "twilio-key": "a Twilio API key",
    "discord-webhook": "a Discord webhook URL",
    "discord-bot-token": "a Discord bot token",
    "telegram-bot-token": "a Telegram bot token",
    "docker-token": "a Docker access token",
    "mailgun-key": "a Mailgun API key",
    "mailchimp-key": "a Mailchimp API key",
    "shopify-token": "a Shopify access token",
    "digitalocean-token": "a DigitalOcean token",
    "vault-token": "a HashiCorp Vault token",
    "terraform-token": "a Terraform Cloud token",
    "atlassian-token": "an Atlassian API token",
    "linear-key": "a Linear API key",
    "azure-ad-secret": "an Azure AD client secret",
    "vendor-token": "an API token with a vendor's prefix",
}


def _not_dummy(m: re.Match) -> bool:
    """A vendor-shaped token that is really filler (`hf_xxxx...`, `...EXAMPLE`) is documentation."""
    text = m.group(0)
    dummy = rx("dummy", r"x{4,}|0{6,}|example|abcdefgh|1234567890")
    return len(set(text)) >= 10 and not dummy.search(text)


def _glued_or_alone(m: re.Match) -> bool:
    """A vendor token alone, or glued onto the word before it (`checkpointghp_...`, a lost space or newline):
    that word is letters only and the token holds a digit, which random data around a prefix rarely gives."""
    start, text = m.start(), m.string
    if start and text[start - 1].isalnum():
        word = start - 1
        while word > max(0, start - 40) and text[word - 1].isalnum():
            word -= 1
        if not text[word:start].isalpha() or not any(c.isdigit() for c in m.group(0)):
            return False
    return _not_dummy(m)


def _alone(m: re.Match) -> bool:
    """For prefixes that are also endings of words (`pubkey-`, `monkey-`): nothing glued before it."""
    start = m.start()
    return not (start and (m.string[start - 1].isalnum() or m.string[start - 1] in "_-")) and _not_dummy(m)


def _mixed(m: re.Match) -> bool:
    return has_letter_and_digit(m.group(0)) and _glued_or_alone(m)


def _check_value(m: re.Match) -> bool:
    return not is_placeholder(m.group("value"))


def _check_openai(m: re.Match) -> bool:
    value = m.group("value")
    if value is None:
        return True  # sk-proj-, sk-svcacct-, sk-admin-
    # `#sk-3f9a...` (a CSS id, a hash) is hex; a key's 32 or more characters are mixed-case alphanumerics.
    return has_letter_and_digit(value) and not re.fullmatch(r"[0-9a-f]+|[0-9A-F]+", value)


def _check_jwt(m: re.Match) -> bool:
    import base64
    import binascii
    import json

    head = m.group(0).split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
        header = json.loads(decoded)
    except (binascii.Error, ValueError):
        return False
    return isinstance(header, dict) and "alg" in header


def _check_discord(m: re.Match) -> bool:
    """A Discord bot token's first part is the bot's numeric ID in base64."""
    import base64
    import binascii

    head = m.group(0).split(".", 1)[0]
    try:
        decoded = base64.b64decode(head + "=" * (-len(head) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        return False
    return decoded.isdigit() and 17 <= len(decoded) <= 20 and _not_dummy(m)


def _twilio(m: re.Match) -> bool:
    return not (m.start() and m.string[m.start() - 1].isalnum()) and has_letter_and_digit(m.group(0)[2:]) and (
        _not_dummy(m))


_E = r"(?![A-Za-z0-9])"  # end boundary
_EU = r"(?![A-Za-z0-9_-])"  # end boundary for charsets holding `_` and `-`

# (kind, prefixes, lead, pattern, check): the pattern is matched where a prefix starts, `lead` characters
# before it (a Terraform token's 14 characters before `.atlasv1.`). Earlier entries win a shared prefix.
PREFIXED = [
    ("hf-token", ("hf_", "api_org_"), 0, r"(?:hf|api_org)_[A-Za-z0-9]{30,}" + _E, _glued_or_alone),
    ("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), 0,
     r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})" + _E, _glued_or_alone),
    ("stripe-key", ("sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_"), 0,
     r"(?:[sr]k_(?:live|test)_|whsec_)[A-Za-z0-9]{20,}" + _E, _glued_or_alone),
    ("npm-token", ("npm_",), 0, r"npm_[A-Za-z0-9]{30,}" + _E, _glued_or_alone),
    ("docker-token", ("dckr_pat_", "dckr_oat_"), 0, r"dckr_[po]at_[A-Za-z0-9_-]{20,}" + _EU, _glued_or_alone),
    ("shopify-token", ("shpat_", "shpca_", "shppa_", "shpss_"), 0,
     r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32,}" + _E, _glued_or_alone),
    ("digitalocean-token", ("dop_v1_", "doo_v1_", "dor_v1_"), 0, r"do[opr]_v1_[a-f0-9]{40,}" + _E,
     _glued_or_alone),
    ("linear-key", ("lin_api_", "lin_oauth_"), 0, r"lin_(?:api|oauth)_[A-Za-z0-9]{32,}" + _E, _glued_or_alone),
    ("vendor-token", ("glc_", "glsa_", "sntrys_", "sntryu_", "pscale_tkn_", "pscale_pw_", "pscale_oauth_",
                      "gsk_", "r8_", "figd_", "rubygems_", "CLOJARS_", "bkua_", "ntn_", "pnu_", "fo1_", "ops_"),
     0, r"(?:glc_[A-Za-z0-9+/]{32,}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|sntry[su]_[A-Za-z0-9+/=_-]{40,}"
        r"|pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{30,}|gsk_[A-Za-z0-9]{40,}|r8_[A-Za-z0-9]{30,}"
        r"|figd_[A-Za-z0-9_-]{30,}|rubygems_[a-f0-9]{40,}|CLOJARS_[a-z0-9]{40,}|bkua_[a-f0-9]{40,}"
        r"|ntn_[A-Za-z0-9]{40,}|pnu_[A-Za-z0-9]{30,}|fo1_[A-Za-z0-9_-]{40,}|ops_eyJ[A-Za-z0-9+/=_-]{60,})"
        + _E, _mixed),
    ("gitlab-token", ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "gloas-", "glsoat-", "glffct-", "glimt-",
                      "glagent-", "glft-", "glrtr-"), 0,
     r"gl(?:pat|dt|rt|ptt|cbt|oas|soat|ffct|imt|agent|ft|rtr)-[A-Za-z0-9_-]{20,}" + _EU, _glued_or_alone),
    # Bot, user, refresh and configuration tokens (xoxb-, xoxp-, xoxe-1-...) and app-level tokens (xapp-1-...):
    # the prefix and the charset, whatever the length of each part.
    ("slack-token", ("xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-", "xapp-"), 0,
     r"(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,}" + _E, _mixed),
    ("anthropic-key", ("sk-ant-",), 0, r"sk-ant-[a-z]{2,10}[0-9]{2}-[A-Za-z0-9_-]{32,}" + _EU, _glued_or_alone),
    ("openai-key", ("sk-",), 0,
     r"(?<![A-Za-z0-9_-])sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{32,}|(?P<value>[A-Za-z0-9]{32,}))" + _EU,
     _check_openai),
    ("pypi-token", ("pypi-",), 0, r"pypi-AgE[A-Za-z0-9_-]{50,}" + _EU, _glued_or_alone),
    ("google-oauth", ("GOCSPX-", "ya29."), 0, r"(?:GOCSPX-[A-Za-z0-9_-]{24,}|ya29\.[A-Za-z0-9_-]{40,})" + _EU,
     _glued_or_alone),
    ("mailgun-key", ("key-",), 0, r"key-[0-9a-f]{32}" + _E, _alone),
    ("vendor-token", ("PMAK-", "NRAK-", "HRKU-", "pul-", "xai-", "pplx-", "AGE-SECRET-KEY-", "sq0atp-", "sq0csp-",
                      "v1.0-"), 0,
     r"(?:PMAK-[a-f0-9]{24}-[a-f0-9]{34}|NRAK-[A-Z0-9]{27}|HRKU-[A-Za-z0-9_-]{40,}|pul-[a-f0-9]{40}"
     r"|xai-[A-Za-z0-9]{60,}|pplx-[A-Za-z0-9]{40,}|AGE-SECRET-KEY-1[0-9A-Z]{50,}|sq0(?:atp|csp)-[A-Za-z0-9_-]{22,}"
     r"|v1\.0-[a-f0-9]{24}-[a-f0-9]{100,})" + _E, _mixed),
    ("sendgrid-key", ("SG.",), 0, r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{30,}" + _EU, _glued_or_alone),
    ("vault-token", ("hvs.", "hvb.", "hvr."), 0, r"hv[sbr]\.[A-Za-z0-9_-]{24,}" + _EU, _mixed),
    ("vendor-token", ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit.", "dt0c01.", "sk."), 0,
     r"(?:dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}|dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}"
     r"|sk\.eyJ[A-Za-z0-9_-]{50,}\.[A-Za-z0-9_-]{20,})" + _EU, _mixed),
    ("terraform-token", (".atlasv1.",), 14, r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}" + _EU, _glued_or_alone),
    ("azure-ad-secret", ("Q~",), 4, r"[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
     lambda m: _mixed(m) and not is_placeholder(m.group(0))),
    # No separator: these start with `A`, which has a pass of its own (the `A` below is the prefix's first).
    ("aws-access-key-id", ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"), 0,
     r"(?<![A-Z0-9])(?P<value>(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16})(?![A-Z0-9])", _check_value),
    ("gcp-api-key", ("AIza",), 0, r"AIza[0-9A-Za-z_-]{30,}" + _EU, _glued_or_alone),
    ("atlassian-token", ("ATATT3", "ATCTT3"), 0, r"AT[AC]TT3[A-Za-z0-9_=-]{50,}" + _EU, _glued_or_alone),
    ("vendor-token", ("AKCp",), 0, r"AKCp[A-Za-z0-9]{60,}" + _E, _glued_or_alone),  # Artifactory
]
# What must follow each pass's separator before any prefix is even considered.
_FOLLOW = {"_": "(?=[A-Za-z0-9_+/=-]{16})", "-": "(?=[A-Za-z0-9_+/=-]{16})", ".": "(?=[A-Za-z0-9_-]{6})",
           "~": "(?=[A-Za-z0-9_~.-]{24})", "A": ""}
# Shapes with no prefix, found from a separator by what surrounds it: (separator, lookaround, handler name).
_SHAPES = {
    ".": (r"(?=ey[A-Za-z0-9_-]{8})", r"(?=[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{20})"),  # JWT; Discord bot token
    "-": (r"(?=us[0-9]{1,2}(?![A-Za-z0-9]))",),  # Mailchimp: <32 hex>-us<datacenter>
    ":": (r"(?=A[A-Za-z0-9_-]{30})(?<=[0-9]{5}:)",),  # Telegram: <bot id>:A<35>
}
_SHAPE_PATTERNS = {
    "jwt": r"ey[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{16,}" + _E,
    "discord-bot-token": r"[MNO][A-Za-z0-9_-]{22,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,}" + _EU,
    "mailchimp-key": r"[0-9a-f]{32}-us[0-9]{1,2}" + _E,
    "telegram-bot-token": r"[0-9]{5,16}:A[A-Za-z0-9_-]{30,}" + _EU,
}
_SHAPE_CHECKS = {"jwt": _check_jwt, "discord-bot-token": _check_discord, "mailchimp-key": _not_dummy,
                 "telegram-bot-token": _mixed}

_compiled: dict[str, re.Pattern] = {}


def _rx(key: str, source: str) -> re.Pattern:
    found = _compiled.get(key)
    if found is None:
        found = _compiled[key] = re.compile(source)
    return found


def _by_separator() -> dict[str, list[tuple[str, int]]]:
    """Separator -> (prefix, index into PREFIXED) for every prefix whose last (or, for `A`, first) character
    it is."""
    out: dict[str, list[tuple[str, int]]] = {}
    for index, (_, prefixes, _, _, _) in enumerate(PREFIXED):
        for prefix in prefixes:
            key = "A" if prefix[0] == "A" and prefix[-1] not in "_-.~" else prefix[-1]
            out.setdefault(key, []).append((prefix, index))
    return out


_SEPARATORS = _by_separator()


def _pass_pattern(sep: str) -> str:
    if sep == "A":
        return "A(?=" + "|".join(re.escape(p[1:]) for p, _ in _SEPARATORS["A"]) + ")"
    known = "|".join(f"(?<={re.escape(p)})" for p, _ in _SEPARATORS.get(sep, []))
    shapes = "|".join(_SHAPES.get(sep, ()))
    both = "|".join(x for x in (_FOLLOW.get(sep, "") + f"(?:{known})" if known else "", shapes) if x)
    return re.escape(sep) + f"(?:{both})"


PASSES = ("_", "-", ".", ":", "~", "A")


def find(text: str, has_char: Callable[[str], bool]) -> list[tuple[int, int, str]]:
    """(start, end, kind) of every prefixed or shaped token in `text`; `has_char(c)`: whether it holds c."""
    out: list[tuple[int, int, str]] = []
    for sep in PASSES:
        if not has_char(sep):
            continue
        reach = -1  # the end of the last token found: its own separators are not looked at again
        rx = _compiled.get(sep) or _rx(sep, _pass_pattern(sep))  # its source built once, not per text
        for m in rx.finditer(text):
            at = m.start()
            if at < reach:
                continue
            found = _at_separator(text, sep, at)
            if found is not None:
                out.append(found)
                reach = found[1]
    return out


def _at_separator(text: str, sep: str, at: int) -> tuple[int, int, str] | None:
    for prefix, index in _SEPARATORS.get(sep, ()):
        start = at if sep == "A" else at + 1 - len(prefix)
        if start < 0 or not text.startswith(prefix, start):
            continue
        kind, _, lead, pattern, check = PREFIXED[index]
        m = _rx(f"p{index}", pattern).match(text, start - lead) if start >= lead else None
        if m is not None and check(m):
            span = m.span("value") if "value" in m.re.groupindex and m.group("value") else m.span()
            return span[0], span[1], kind
    for kind in ("jwt", "discord-bot-token", "mailchimp-key", "telegram-bot-token"):
        m = _shape_at(text, kind, sep, at)
        if m is not None and _SHAPE_CHECKS[kind](m):
            return m.start(), m.end(), kind
    return None


def _shape_at(text: str, kind: str, sep: str, at: int) -> re.Match | None:
    """The shape `kind` around the separator at `at`, matched from the start of the run that ends there."""
    wanted = {"jwt": ".", "discord-bot-token": ".", "mailchimp-key": "-", "telegram-bot-token": ":"}[kind]
    if sep != wanted:
        return None
    chars = "0123456789" if kind == "telegram-bot-token" else None
    start = at
    while start > 0 and at - start < 40 and (text[start - 1] in chars if chars else (
            text[start - 1].isalnum() or text[start - 1] in "_-") and text[start - 1].isascii()):
        start -= 1
    if start and (text[start - 1].isalnum() or text[start - 1] in "_-"):
        return None  # the run is longer than the shape's first part: something else
    return _rx(kind, _SHAPE_PATTERNS[kind]).match(text, start)


def _aws_secret_check(m: re.Match) -> bool:
    return _check_value(m)


# Shapes found by a word near them, as credentials._DETECTORS (kind, anchors, regex, check), in priority order.
DETECTORS = [
    ("slack-webhook", ("hooks.slack.com/",),
     r"https://hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Z0-9]{6,}/[A-Za-z0-9/_-]{16,}", _not_dummy),
    ("aws-secret-access-key", ("aws",),
     r"(?i:aws)[A-Za-z0-9_.-]{0,20}(?i:secret)[A-Za-z0-9_.-]{0,20}[\"']?\s*(?::=|=>|=|:)\s*[\"']?"
     r"(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])", _aws_secret_check),
    ("twilio-key", ("SK",), r"SK[0-9a-fA-F]{32}" + _E, _twilio),
    ("discord-webhook", ("/webhooks/",),
     r"https://(?:(?:canary|ptb)\.)?discord(?:app)?\.com/api/(?:v[0-9]+/)?webhooks/[0-9]{17,20}/[A-Za-z0-9_-]{60,80}",
     _not_dummy),
]
