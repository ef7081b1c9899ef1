"""The runtimes' JSON files as the user keeps them: any layout, escape, line ending or comment survives
our hooks going in and out (hooks/jsonedit.py edits the text; it never re-serialises the file)."""

from __future__ import annotations

import json
import re

import pytest

from agentmem.hooks import jsonedit
from tests.fixtures_core import make_machine
from tests.proptest import given, settings

HELPER = '["/opt/py/bin/python3", "-m", "agentmem"]'


@pytest.fixture
def m(tmp_path):
    m = make_machine(tmp_path, "laptop", tmp_path / "store", {tmp_path: "app"})
    with open(m.home / "config.toml", "a") as fh:
        fh.write(f'\n[runtimes]\nenabled = ["codex", "claude", "gemini"]\n\n[helper]\ncommand = {HELPER}\n')
    return m


def _install_and_remove(m, runtime, rel, original: bytes) -> bytes:
    path = m.user_home / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(original)
    status, out, err = m.run("hooks", "install", "--runtime", runtime)
    assert status == 0, (out, err)
    installed = path.read_bytes()
    assert b"hook reminder --runtime " + runtime.encode() in installed
    status, out, err = m.run("hooks", "remove", "--runtime", runtime)
    assert status == 0, (out, err)
    assert path.read_bytes() == original  # INV outside-untouched
    return installed


def test_a_compact_one_line_hooks_json_comes_back_byte_equal_and_ours_are_written_compact_too(m):
    # INV outside-untouched
    original = b'{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify-send done","timeout":5}]}]}}'
    installed = _install_and_remove(m, "codex", ".codex/hooks.json", original)
    assert b"\n" not in installed and b'", "' not in installed and b'": ' not in installed, installed
    assert installed.startswith(original[:-3] + b',{"hooks":[{"type":"command","command":"/opt/py/bin/python3 -m agentmem hook stop')


def test_escaped_slashes_and_crlf_line_endings_come_back_byte_equal(m):
    # INV outside-untouched: `\/` stays `\/` (not `/`), CRLF stays CRLF (not LF)
    original = (b'{\r\n  "statusLine": {"command": "curl https:\\/\\/example.com\\/status"},\r\n'
                b'  "env": {"HOME_PAGE": "https:\\/\\/example.org"},\r\n'
                b'  "hooks": {\r\n    "Stop": [\r\n      {"hooks": [{"type": "command", "command": "true"}]}\r\n'
                b'    ]\r\n  }\r\n}\r\n')
    installed = _install_and_remove(m, "claude", ".claude/settings.json", original)
    assert installed.count(b"\n") == installed.count(b"\r\n") > original.count(b"\n"), installed
    assert b"https:\\/\\/example.com\\/status" in installed


GEMINI_JSONC = """// Gemini CLI settings: my own notes stay
{
  /* how I sign in */
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "privacy": {
    "usageStatisticsEnabled": false // no telemetry
  },
  "hooks": {
    // mine: tell me when it ends
    "SessionEnd": [{"hooks": [{"type": "command", "command": "notify-send bye"}]}]
  }
}
"""


def test_a_gemini_settings_file_with_comments_is_edited_with_its_comments_kept(m):
    # INV outside-untouched: Gemini CLI reads settings.json as JSON with comments (strip-json-comments)
    installed = _install_and_remove(m, "gemini", ".gemini/settings.json", GEMINI_JSONC.encode()).decode()
    for comment in ("// Gemini CLI settings: my own notes stay", "/* how I sign in */", "// no telemetry",
                    "// mine: tell me when it ends"):
        assert comment in installed
    data = json.loads(re.sub(r"//[^\n]*|/\*.*?\*/", "", installed, flags=re.S))  # what Gemini CLI parses
    assert data["hooks"]["SessionEnd"][0]["hooks"][0]["command"] == "notify-send bye"
    assert [h["name"] for g in data["hooks"]["SessionStart"] for h in g["hooks"]] == ["agentmem-reminder"]
    assert data["privacy"] == {"usageStatisticsEnabled": False}


def test_a_comment_inside_a_string_is_the_strings_text_not_a_comment():
    text = '{"url": "http://example.com/*x*/", "pattern": "a//b"}'
    assert jsonedit.loads(text) == {"url": "http://example.com/*x*/", "pattern": "a//b"}
    data = jsonedit.loads(text)
    data["more"] = 1
    assert jsonedit.dumps_like(data, text) == b'{"url": "http://example.com/*x*/", "pattern": "a//b", "more": 1}'


# -- any layout: add entries and take them out again, byte for byte ---------------------------------

def json_value(st):
    json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=4))
    return st.recursive(json_leaf, lambda inner: st.lists(inner, max_size=3)
                        | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=8)


def layouts(st):
    return st.fixed_dictionaries({"indent": st.sampled_from([None, 2, 4, "\t"]),
                                  "separators": st.sampled_from([(", ", ": "), (",", ":"), (",", ": ")]),
                                  "crlf": st.booleans(), "newline": st.booleans(), "slashes": st.booleans(),
                                  "ascii": st.booleans()})


def _layout(data, layout) -> str:
    text = json.dumps(data, indent=layout["indent"], separators=layout["separators"], ensure_ascii=layout["ascii"])
    if layout["slashes"]:
        text = text.replace("/", "\\/")
    if layout["newline"]:
        text += "\n"
    return text.replace("\n", "\r\n") if layout["crlf"] else text


@settings(max_examples=150, deadline=None)
@given(data=lambda st: st.dictionaries(st.text(max_size=3), json_value(st), max_size=4), layout=layouts,
       lists=lambda st: st.lists(st.sampled_from(["/a", "é", "x"]), max_size=3))
def test_adding_keys_and_items_and_taking_them_out_again_leaves_any_layout_byte_equal(data, layout, lists):
    # INV outside-untouched
    text = _layout(data, layout)
    parsed = jsonedit.loads(text)
    grown = dict(parsed)
    grown["agentmem-added"] = {"hooks": [{"type": "command", "command": "/x/agentmem hook stop"}], "n": 3}
    for key, value in parsed.items():
        if isinstance(value, list):
            grown[key] = [*value, *lists]
    edited = jsonedit.dumps_like(grown, text).decode()
    assert _plain(jsonedit.loads(edited)) == _plain(grown)
    if layout["crlf"]:
        assert edited.count("\n") == edited.count("\r\n")
    if layout["indent"] is None and "\n" not in text.strip():
        assert "\n" not in edited.strip()
    assert jsonedit.dumps_like(parsed, edited).decode() == text


def _plain(value):
    if isinstance(value, jsonedit.Number):
        return json.loads(value.text)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
