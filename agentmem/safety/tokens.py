"""Credentials known by their shape: a vendor's prefix and format (`hf_`, `ghp_`, `xoxb-`, `sk-ant-`, `SG.`...),
a JWT, an AWS key. Each pattern starts with its literal prefix, which the regex engine finds fastest; the left
boundary is the check's to judge, so a token glued onto the word before it (`checkpointghp_...`, a lost space)
is found while random data that merely holds a prefix is not. `credentials.py` runs these first.
"""

from __future__ import annotations

import re

from agentmem.safety.placeholders import has_letter_and_digit, is_placeholder, rx

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
    "jwt": "a JSON Web Token",
    "sendgrid-key": "a SendGrid API key",
    "twilio-key": "a Twilio API key",
    "discord-webhook": "a Discord webhook URL",
}


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


def _check_value(m: re.Match) -> bool:
    return not is_placeholder(m.group("value"))


def _check_openai(m: re.Match) -> bool:
    value = m.group("value")
    if value is None:
        return True  # sk-proj-, sk-svcacct-, sk-admin-
    # `#sk-3f9a...` (a CSS id, a hash) is hex; a key's 32 or more characters are mixed-case alphanumerics.
    return has_letter_and_digit(value) and not re.fullmatch(r"[0-9a-f]+|[0-9A-F]+", value)


def _twilio(m: re.Match) -> bool:
    return not (m.start() and m.string[m.start() - 1].isalnum()) and has_letter_and_digit(m.group(0)[2:]) and (
        _not_dummy(m))


# (kind, anchors, regex, check), as credentials._DETECTORS, in priority order.
_B = r"(?<![A-Za-z0-9])"  # start boundary: `_` may touch a token (`MY_hf_...`)
_E = r"(?![A-Za-z0-9])"  # end boundary
# Patterns checked by _glued_or_alone start with their prefix and have no start boundary: the check judges what
# comes before (a prefix glued onto a word is a token; one inside random data is not).
DETECTORS = [
    ("hf-token", ("hf_",), r"hf_[A-Za-z0-9]{34,}" + _E, _glued_or_alone),
    # One anchor for a family whose prefixes share their start: the pattern's own search for it is as fast.
    ("github-token", ("gh", "github_pat_"),
     r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})" + _E, _glued_or_alone),
    ("gitlab-token", ("gl",),
     r"(?:glpat|gldt|glrt|glptt|glcbt|gloas)-[A-Za-z0-9_-]{20,}" + _E, _glued_or_alone),
    # Bot, user and refresh tokens (xoxb-, xoxp-, xoxe-1-), and app-level tokens (xapp-1-A0...-<digits>-<hex>),
    # which are known by their four parts whatever the length of each.
    ("slack-token", ("xox", "xapp-"),
     r"(?:xox[abposre]-[0-9]{1,20}-[A-Za-z0-9-]{16,}|xapp-[0-9]{1,3}-[A-Z0-9]{4,}-[0-9]{4,}-[A-Za-z0-9]{4,})"
     + _E, _glued_or_alone),
    ("slack-webhook", ("hooks.slack.com",),
     r"https://hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Z0-9]{6,}/[A-Za-z0-9/_-]{16,}", _not_dummy),
    ("stripe-key", ("k_live_", "k_test_"),
     r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}" + _E, _glued_or_alone),
    ("anthropic-key", ("sk-ant-",), r"sk-ant-[a-z]{2,10}[0-9]{2}-[A-Za-z0-9_-]{32,}" + _E, _glued_or_alone),
    ("openai-key", ("sk-",),
     r"(?<![A-Za-z0-9_-])sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{32,}|(?P<value>[A-Za-z0-9]{32,}))"
     r"(?![A-Za-z0-9_-])", _check_openai),
    ("npm-token", ("npm_",), r"npm_[A-Za-z0-9]{36}" + _E, _glued_or_alone),
    ("pypi-token", ("pypi-AgE",), r"pypi-AgE[A-Za-z0-9_-]{50,}" + _E, _glued_or_alone),
    ("aws-access-key-id", ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
     r"(?<![A-Z0-9])(?P<value>(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16})(?![A-Z0-9])", _check_value),
    ("aws-secret-access-key", ("aws",),
     r"(?i:aws)[A-Za-z0-9_.-]{0,20}(?i:secret)[A-Za-z0-9_.-]{0,20}[\"']?\s*(?::=|=>|=|:)\s*[\"']?"
     r"(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])", _check_value),
    ("sendgrid-key", ("SG.",), r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _E, _glued_or_alone),
    ("twilio-key", ("SK",), r"SK[0-9a-fA-F]{32}" + _E, _twilio),
    ("discord-webhook", ("discord",),
     r"https://(?:(?:canary|ptb)\.)?discord(?:app)?\.com/api/(?:v[0-9]+/)?webhooks/[0-9]{17,20}/[A-Za-z0-9_-]{60,80}",
     _not_dummy),
    ("gcp-api-key", ("AIza",), r"AIza[0-9A-Za-z_-]{35}" + _E, _glued_or_alone),
    ("jwt", (".ey",), _B + r"ey[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{16,}" + _E, _check_jwt),
]
