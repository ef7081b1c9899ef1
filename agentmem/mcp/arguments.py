"""One argument of an MCP tool call checked against its schema entry: its JSON type, Unicode text (no lone
surrogate), an integer's range, an enum's values; one clear message for the fault (mcp/catalogue.py checks
a whole call with it)."""

from __future__ import annotations

from agentmem.errors import InvalidInput

_JSON_TYPES = ((bool, "a boolean"), (str, "a string"), (int, "an integer"), (float, "a number"),
               (list, "an array"), (dict, "an object"))


def json_type(value: object) -> str:
    if value is None:
        return "null"
    return next((label for kind, label in _JSON_TYPES if isinstance(value, kind)), type(value).__name__)


# What the server reads in place of a lone surrogate escape (`\ud800`, half an emoji from a JavaScript
# client), which the SDK's JSON parser refuses along with the whole call (server.without_lone_surrogates):
# a noncharacter, never text, refused here like the surrogate it stands for.
LONE_SURROGATE = "\uffff"


def _encodable(value: object) -> bool:
    try:
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str):
                text.encode("utf-8")
                if LONE_SURROGATE in text:
                    return False
    except UnicodeEncodeError:
        return False
    return True


def check_value(tool: str, key: str, spec: dict, value: object) -> object:
    kind = spec["type"]
    if kind == "string" and not isinstance(value, str):
        raise InvalidInput(f"{tool}: `{key}` must be a string, not {json_type(value)}")
    if kind in ("string", "array") and not _encodable(value):
        raise InvalidInput(f"{tool}: `{key}` is not valid Unicode text (a lone surrogate)")
    if kind == "integer":
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidInput(f"{tool}: `{key}` must be an integer, not {json_type(value)}")
        if not spec["minimum"] <= value <= spec["maximum"]:
            raise InvalidInput(f"{tool}: `{key}` must be between {spec['minimum']} and {spec['maximum']}")
    if kind == "array" and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        raise InvalidInput(f"{tool}: `{key}` must be an array of strings")
    if "enum" in spec and value not in spec["enum"]:
        raise InvalidInput(f"{tool}: `{key}` must be one of {', '.join(spec['enum'])}")
    return value
