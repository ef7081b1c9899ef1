"""Every command the helper prints for a person or an agent runs exactly as printed.

Both real CLIs ran the bare `agentmem ...` the helper used to print and got exit 127:
`agentmem` is not on PATH. Here a machine is set up by the real template in a home whose
path holds a space, PATH holds neither agentmem nor copier, and each printed command is
handed to a shell as printed.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

from tests.template_kit import make_machine, make_template_repo

HELPER = r"(?:'[^']*/\.venv/bin/agentmem'|/\S*/\.venv/bin/agentmem)"


def _sh(m, line, cwd):
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=m.env, capture_output=True, text=True, timeout=300)


def _helper(m, *args, cwd, input=""):
    return subprocess.run([str(m.helper), *args], input=input, cwd=cwd, env=m.env, capture_output=True, text=True,
                          timeout=120)


def _one(pattern, text):
    found = re.findall(pattern, text)
    assert len(found) == 1, (pattern, text[-2000:])
    assert re.match(HELPER, found[0]), found[0]  # the absolute helper, quoted where it must be
    return found[0]


def test_every_printed_command_runs_as_printed(tmp_path):
    # INV printed-commands-run
    template = make_template_repo(tmp_path)
    m = make_machine(tmp_path, "the laptop")  # a space in every path the helper prints
    m.env["PATH"] = "/usr/bin:/bin"
    project, other, store = m.user / "src" / "app", m.user / "src" / "other", tmp_path / "store"
    project.mkdir(parents=True)
    other.mkdir()
    copied = m.copy(template, ref="v1.0.0", cwd=project, data={"bucket": str(store), "hooks": "true"})
    out = copied.stdout + copied.stderr
    runs = {}  # printed command -> its exit status

    def run(line, cwd=project, expect=0):
        done = _sh(m, line, cwd)
        runs[line] = done.returncode
        assert done.returncode == expect, (line, done.returncode, done.stdout[-1500:], done.stderr[-1500:])
        return done

    run(_one(r"Rerun `([^`]+)` at any time", out))  # Copier's message after the copy
    trust = _one(r"run `([^`]+ hooks trust)`", out)  # setup's hooks step (Codex trust)
    assert _sh(m, trust, project).returncode not in (126, 127)  # runs; no Codex here to ask

    # A save while the store is unreachable: pending, with its retry command (text and JSON).
    shutil.move(store, tmp_path / "store-away")
    store.write_text("not a folder")
    saved = _helper(m, "save", "--title", "Printed", "-", cwd=project, input="a note printed commands retry")
    assert saved.returncode == 10, saved.stderr
    retry = _one(r"retry with: (.+)", saved.stdout)
    as_json = _helper(m, "save", "--title", "Second", "--json", cwd=project, input="second note")
    retry_json = json.loads(as_json.stdout)["retry"]
    listed = m.run("pending", cwd=project).stdout
    retries = re.findall(r"retry: (.+)", listed)
    assert retry in retries and retry_json in retries
    reminder = _helper(m, "hook", "reminder", "--runtime", "codex", "--event", "prompt", cwd=project).stdout
    run(_one(r"`([^`]+)` lists them", reminder))
    (m.folder / "hook-stop-state.json").write_text(json.dumps({"hung_at": time.time()}))
    stop = _helper(m, "hook", "stop", "--runtime", "claude", cwd=project, input="{}").stderr
    stop_retry = _one(r"`([^`]+)` retries one now", stop)
    run(_one(r"`([^`]+)` lists them all", stop))
    missing = m.run("save", "--retry", "20261201T000000000Z-aaaaaaaa", cwd=project)
    run(_one(r"\(see `([^`]+)`\)", missing.stderr))

    store.unlink()
    shutil.move(tmp_path / "store-away", store)
    for line in {retry, retry_json, stop_retry}:
        run(line)  # the store is back: each retry confirms its note

    searched = m.run("search", "Printed", cwd=project).stdout
    run(_one(r"Read one with: (.+)", searched))

    unmapped = m.run("search", "Printed", cwd=other)
    assert unmapped.returncode == 3 and unmapped.stderr.count("\n") == 1
    mapping = _one(r"map it with: (.+?) \(PROJECT:", unmapped.stderr)
    run(mapping.replace(" PROJECT", " other"), cwd=other)  # the owner names the project
    run(f"{mapping.split(' map ')[0]} search Printed", cwd=other)
    assert runs and 127 not in runs.values()


# Where the helper's source names itself in backticks without printing a command to run: the
# header of OpenCode's plugin file (a comment in a file we own) and the config table of docs/cli.md.
_NOT_PRINTED = ("(`agentmem hooks install` writes it, `agentmem hooks remove` deletes it)",
                "(`agentmem hooks install|remove` write it)", "register `agentmem mcp` with the runtimes")


def _strings(tree):
    """Every string literal of a module except docstrings, with f-strings' literal parts joined."""
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            yield "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node.value


def test_no_message_in_the_source_names_the_bare_agentmem_command():
    # INV printed-commands-run: the static half. A hint naming `agentmem setup` printed exit-127
    # advice (2026-12-01: the missing-store, foreign-marker and unmapped-key hints did); each
    # printed command is an errors.Command, written by shell.line from the absolute helper instead.
    package = Path(__file__).resolve().parent.parent / "agentmem"
    bare = re.compile(r"`agentmem [a-z]")
    found = []
    for path in sorted(package.rglob("*.py")):
        for text in _strings(ast.parse(path.read_text(encoding="utf-8"))):
            if bare.search(text) and not any(ok in text for ok in _NOT_PRINTED):
                found.append(f"{path.relative_to(package)}: {text[:100]!r}")
    assert not found, found
