"""Messages that say what to do, with commands that would be accepted as printed."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys

from tests.fixtures_core import laptop, machines, store_dir  # noqa: F401
from tests.fixtures_hub import BucketMachine, hub  # noqa: F401


def test_a_missing_bucket_in_your_own_namespace_names_the_create_command_that_works(hub, tmp_path):
    token = hub.add_user("alice")
    m = BucketMachine(tmp_path / "m", hub, token, bucket=None)
    done = m.run("bucket", "connect", "--bucket", "alice/notes-here", "--json")
    assert done.returncode == 4 and json.loads(done.stdout)["error"] == "not-found", done.stderr
    assert "ensure --save" not in done.stderr
    (line,) = re.findall(r"this machine's store with `([^`]+)`", done.stderr)
    argv = shlex.split(line)
    assert argv[-5:] == ["bucket", "create", "--bucket", "alice/notes-here", "--save"]
    made = m.run(*argv[-5:])  # the command as printed, by this machine's helper
    assert made.returncode == 0, made.stderr
    assert hub.buckets["alice/notes-here"].private


def test_a_failed_account_check_names_no_made_up_bucket(hub, tmp_path):
    m = BucketMachine(tmp_path / "m", hub, "hf_revoked_123", bucket=None)
    done = m.run("bucket", "create")
    assert done.returncode == 5 and "hf://buckets/(account check)" not in done.stderr
    assert "account check" in done.stderr


def test_the_common_options_say_their_defaults_in_help(laptop):
    save_help, search_help = (" ".join(laptop.run(cmd, "--help")[1].split()) for cmd in ("save", "search"))
    assert "(default: 10)" in search_help and "default: the project of the current directory" in search_help
    assert "first non-blank line" in save_help and "default: none" in save_help


def test_mcp_help_offers_no_json():
    done = subprocess.run([sys.executable, "-m", "agentmem", "mcp", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "--json" not in done.stdout


def test_listing_recent_notes_says_how_many_more_exist(laptop):
    for i in range(3):
        laptop.run("save", "--title", f"note {i}", "--text", f"finding {i}", cwd=laptop.checkout, check_status=0)
    status, out, _ = laptop.json("search", "", "--limit", "2", cwd=laptop.checkout)
    assert status == 0 and len(out["results"]) == 2 and out["more"] == 1
    _, text, _ = laptop.run("search", "", "--limit", "2", cwd=laptop.checkout)
    assert "1 more note(s) in project app" in text
    _, words, _ = laptop.json("search", "finding", cwd=laptop.checkout)
    assert "more" not in words


def test_an_unknown_project_names_a_map_command_that_would_be_accepted(laptop, tmp_path):
    status, _, err = laptop.run("search", "x", "--project", "nope", cwd=laptop.checkout)
    assert status == 3 and "--project app" in err
    line = err.split("map a directory of it first: ")[1].split(" (DIRECTORY")[0]
    other = tmp_path / "nope-checkout"
    other.mkdir()
    argv = [other if word == "DIRECTORY" else word for word in shlex.split(line)]
    done = subprocess.run(argv, env=laptop.env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert laptop.run("search", "x", "--project", "nope", cwd=laptop.checkout)[0] == 0
