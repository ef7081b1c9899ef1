"""End to end with all five real agent CLIs on two machines set up by the Copier template.

Codex 0.171.0, Claude Code 2.1.332, Gemini CLI 0.61.0, OpenCode 1.18.33 and Copilot CLI
1.0.102 (pins in scripts/install-clis), each run offline against the recording model
stand-in, in its default permission mode: no bypass flag, no `--yolo`. Codex runs
with `-s workspace-write` (its sandbox for real work; `codex exec` alone is read-only,
see the read-only test) and Copilot, which no setting pre-approves, with the two
narrow flags the skill names for `copilot -p`.

Machines A and B share one folder store. Both enable all five runtimes with hooks
on; each home holds the user's own settings for every CLI, planted before setup
and compared byte for byte after our hooks and permissions are taken out (the last
test). Each CLI run is one short scripted turn, bounded by fixtures_clis.CLI_TIMEOUT.
"""

from __future__ import annotations

import json
import re
import subprocess
import time

import pytest

from agentmem.hooks import actions
from agentmem.runtimes import gemini
from agentmem.uploads import pending
from tests.e2e_setup import helper_from_context, setup_machine
from tests.fixtures_clis import ALL_CLIS, make_machine, require_cli, runtime_params
from tests.modelstub import ModelStub, Shell, Text
from tests.template_kit import make_template_repo

pytestmark = pytest.mark.slow

BLOCK_LINE = "Use the `agent-memory` skill for prior context"
CLAUDE_MD_MARKER = "CLAUDE_MD_USER_RULE: tabs, never spaces."

# The user's own settings, written before setup in the layout each CLI writes (two-space JSON).
CODEX_CONFIG = """# my codex settings
model = "fake-model"
model_provider = "fake"

[sandbox_workspace_write]
# this home is not under /tmp on a real machine: keep /tmp and $TMPDIR out of the writable roots
exclude_slash_tmp = true
exclude_tmpdir_env_var = true

[model_providers.fake]
name = "Fake"
base_url = "http://127.0.0.1:1/v1"
wire_api = "responses"
env_key = "FAKE_API_KEY"
"""
USER_FILES = {
    ".codex/config.toml": CODEX_CONFIG,
    ".codex/hooks.json": {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}},
    ".claude/settings.json": {"theme": "dark", "permissions": {"allow": ["Bash(ls:*)"]},
                              "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}},
    ".claude/CLAUDE.md": f"# My rules\n{CLAUDE_MD_MARKER}\n",
    ".gemini/settings.json": {"security": {"auth": {"selectedType": "gemini-api-key"}},
                              "privacy": {"usageStatisticsEnabled": False}, "ui": {"theme": "Default"},
                              "hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "true"}]}]}},
    ".copilot/hooks/mine.json": {"version": 1, "hooks": {"sessionEnd": [{"type": "command", "bash": "true"}]}},
    ".config/opencode/plugins/mine.js": "export const MinePlugin = async () => ({});\n",
}


def _text(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, indent=2) + "\n"


def _plant(m) -> None:
    for rel, value in USER_FILES.items():
        path = m.home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_text(value))


def _helper(m, *args, input=None, cwd=None):
    proc = subprocess.run([*m.helper, *args], cwd=cwd or m.checkout, env=m.env(), input=input,
                          capture_output=True, text=True, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Machines A and B, all five runtimes, hooks on, one shared folder store."""
    for name in ALL_CLIS:
        require_cli(name)
    base = tmp_path_factory.mktemp("five")
    template = make_template_repo(base / "template")
    store = base / "drive" / "store"
    machines = {}
    for name, checkout_rel in (("A", "src/app"), ("B", "work/app-clone")):
        m = make_machine(base, name)
        m.checkout = m.home / checkout_rel
        m.checkout.mkdir(parents=True)
        _plant(m)
        start = time.monotonic()
        m.helper = setup_machine(m, template=template, store=store, projects={m.checkout: "app"},
                                 runtimes=ALL_CLIS, hooks=True)
        print(f"copier setup of {name}: {time.monotonic() - start:.1f} s")
        status, out, err = _helper(m, "hooks", "trust", "--codex", str(require_cli("codex")))
        assert status == 0, (out, err)  # Codex runs a user hook only once trusted (no bypass flag here)
        machines[name] = m
    machines["store"] = store
    return machines


def run_cli(m, runtime, script, prompt="hello", **kw):
    """One CLI turn against a fresh stand-in, in the CLI's default permission mode."""
    stub = ModelStub(script=list(script)).start()
    try:
        if runtime == "codex":
            stub_run = _codex_workspace_write(m, stub, prompt, **kw)
        elif runtime == "copilot" and kw.pop("approve", True):
            stub_run = m.copilot(stub, prompt, cwd=m.checkout,
                                 allow=[f"shell({' '.join(m.helper)}:*)", f"--add-dir={m.helper[0].rsplit('/', 1)[0]}"])
        else:
            stub_run = getattr(m, runtime)(stub, prompt, cwd=m.checkout)
    finally:
        stub.stop()
    print(f"{runtime} run: {stub_run.seconds:.1f} s, {len(stub.requests)} request(s)")
    assert stub_run.returncode == 0, (stub_run.stdout[-2000:], stub_run.stderr[-2000:])
    return stub


def _codex_workspace_write(m, stub, prompt, sandbox="workspace-write"):
    m.point_codex_at(stub)
    argv = [str(require_cli("codex")), "exec", "--skip-git-repo-check"]
    if sandbox:
        argv += ["-s", sandbox]
    return m._run(argv + [prompt], m.env(stub), m.checkout)


def _pending_note(world, m, title):
    """A note left pending on `m` by a save while the store's drive was unmounted."""
    drive = world["store"].parent
    away = drive.rename(drive.with_name("drive-unmounted"))
    try:
        status, out, err = _helper(m, "save", "--title", title, "-", input=f"{title}: the zebra cache is warm.\n")
    finally:
        away.rename(drive)
    assert status == 10, (out, err)
    entry = next(e for e in pending.list_entries(m.agentmem_home) if e.path.endswith(".md"))
    return entry, pending.load(m.agentmem_home, entry.id)[1]


@pytest.mark.parametrize("runtime", runtime_params())
def test_each_cli_sees_the_block_the_skill_once_and_the_reminder_and_its_stop_hook_uploads(world, runtime):
    m = world["A"]
    entry, data = _pending_note(world, m, f"Unsent from {runtime}")
    pinned = f"Pinned for {runtime}: always run the linter before committing."
    status, out, err = _helper(m, "save", "--title", f"pin {runtime}", "--text", pinned, "--json")
    assert status == 0, (out, err)
    assert _helper(m, "pin", json.loads(out)["id"])[0] == 0

    stub = run_cli(m, runtime, [Text("ok")])

    first = stub.requests[0]
    block = first.texts_containing(BLOCK_LINE)
    assert block, "the managed block did not reach the model"
    assert helper_from_context(first.texts()) == " ".join(m.helper)
    assert first.skill_listings("agent-memory") == 1, "the agent-memory skill must be listed exactly once"
    reminder = first.texts_containing(actions.GUIDANCE)
    assert reminder, "the session-start reminder did not reach the model"
    assert first.texts_containing("memory note is saved on this machine but not yet confirmed")
    # The pinned note reaches the model in the same reminder, framed as recalled data.
    with_pin = first.texts_containing(pinned)
    assert with_pin, "the pinned note did not reach the model"
    # (Gemini CLI 0.61.0 hands hook context over HTML-escaped: its markers read &lt;&lt;&lt;BEGIN ...)
    assert "Pinned memory of project app" in with_pin[0][1] and "BEGIN RECALLED MEMORY" in with_pin[0][1]
    if runtime == "opencode":  # OpenCode's own AGENTS.md now exists: the user's CLAUDE.md must still reach it
        assert first.texts_containing(CLAUDE_MD_MARKER)
    # The stop hook (OpenCode: the plugin on session.idle) uploaded the pending note, same bytes.
    assert (world["store"] / entry.path).read_bytes() == data  # INV same-bytes-retry
    assert [e.id for e in pending.list_entries(m.agentmem_home)] == []


def _save_step(title, body, runtime):
    def step(request):
        helper = helper_from_context(request.texts())
        if runtime == "gemini":  # Gemini CLI asks about a heredoc even for an allowed command: --text
            return Shell(f"{helper} save --kind checkpoint --title '{title}' --text '{body}'")
        return Shell(f"{helper} save --kind checkpoint --title '{title}' - <<'EOF'\n{body}\nEOF")
    return step


def _search_step(request):
    # A plain search: every search asks the store what changed first (INV read-your-writes), so B,
    # set up and searched before A's saves, finds them with no --refresh.
    return Shell(f"{helper_from_context(request.texts())} search 'zebra handoff' --limit 20")


def test_a_checkpoint_saved_by_any_cli_on_machine_a_is_found_by_every_cli_on_machine_b(world):
    """One memory across five CLIs, each in its default permission mode."""
    saved = {}
    for writer in ALL_CLIS:
        title = f"Zebra handoff from {writer}"
        body = f"Goal: zebra handoff via {writer}.\nDone: verified.\nNext: read it on machine B."
        stub = run_cli(world["A"], writer, [_save_step(title, body, writer), Text("Checkpoint saved.")],
                       prompt="Save a checkpoint of the zebra handoff.")
        [output] = stub.requests[-1].tool_outputs()
        assert "saved " in output and "to shared memory" in output, (writer, output)
        saved[writer] = re.search(r"saved (\S+) to shared memory", output).group(1)

    for reader in ALL_CLIS:
        stub = run_cli(world["B"], reader, [_search_step, Text("Found them.")], prompt="What about the zebra handoff?")
        [found] = stub.requests[-1].tool_outputs()
        for writer, note_id in saved.items():
            assert note_id in found and f"Zebra handoff from {writer}" in found, (reader, writer, found)
        assert "in project app" in found


def test_codex_exec_in_its_read_only_sandbox_fails_a_save_loudly_and_keeps_nothing_half_saved(world):
    """`codex exec` alone runs commands read-only; no setting makes a folder writable there."""
    # INV loud-unwritable
    m = world["A"]
    before = {e.id for e in pending.list_entries(m.agentmem_home)}
    title, body = "Read-only zebra", "Goal: show the read-only failure."
    stub = ModelStub(script=[_save_step(title, body, "codex"), Text("could not save")]).start()
    try:
        run = _codex_workspace_write(m, stub, "Save a checkpoint.", sandbox=None)
    finally:
        stub.stop()
    assert run.returncode == 0, run.stderr[-2000:]
    [output] = stub.requests[-1].tool_outputs()
    assert "Process exited with code 6" in output, output  # errors.EXIT_NO_ACCESS, not a silent success
    assert "cannot write the agentmem machine folder" in output and "nothing was saved" in output
    assert "to shared memory" not in output
    assert "--sandbox workspace-write" in output  # the fix, on the same line
    assert {e.id for e in pending.list_entries(m.agentmem_home)} == before  # INV nothing-lost: not silently
    assert title not in "".join(p.read_text() for p in world["store"].rglob("*.md"))


def test_codex_exec_in_its_read_only_sandbox_still_finds_a_note_it_never_cached_and_says_nothing_was_cached(world):
    """Reading memory needs no write: in `codex exec`'s read-only sandbox a search reads what changed from the
    store into memory and finds it (current: not stale), saying nothing was cached and how to fix that, and a
    read of a new note's ID gets it."""
    # INV loud-unwritable
    a, b = world["A"], world["B"]
    status, out, err = _helper(b, "save", "--title", "Zebra seen before", "-", input="Zebra: cached on A.\n")
    assert status == 0, (out, err)
    status, out, err = _helper(a, "search", "zebra")  # A's cache is current...
    assert status == 0 and "Zebra seen before" in out, (out, err)
    status, out, err = _helper(b, "save", "--title", "Giraffe from B", "--json", "-",
                               input="Giraffe: the read-only sandbox still reads.\n")
    assert status == 0, (out, err)
    new_id = json.loads(out)["id"]  # ...and B has just saved a note that A has not seen

    def search_step(request):
        return Shell(f"{helper_from_context(request.texts())} search zebra --limit 20")

    def giraffe_step(request):
        return Shell(f"{helper_from_context(request.texts())} search giraffe --limit 20")

    def read_step(request):
        return Shell(f"{helper_from_context(request.texts())} read {new_id}")

    stub = ModelStub(script=[search_step, giraffe_step, read_step, Text("done")]).start()
    try:
        run = _codex_workspace_write(a, stub, "Look it up.", sandbox=None)
    finally:
        stub.stop()
    assert run.returncode == 0, run.stderr[-2000:]
    searched, giraffe, read = stub.requests[-1].tool_outputs()
    assert "Process exited with code 0" in giraffe and new_id in giraffe and "may be stale" not in giraffe, giraffe
    assert "Process exited with code 0" in searched, searched
    assert "may be stale" not in searched, searched  # the store answered
    assert "warning: nothing was cached: cannot write the cache" in searched  # what it could not do, and why
    assert "--sandbox workspace-write" in searched  # the fix, on the same line
    assert "Zebra seen before" in searched, searched  # what the cache holds is still found
    assert "Giraffe from B" not in searched  # (a zebra search)
    assert "without the index" not in searched, searched
    assert "Process exited with code 0" in read and "Giraffe: the read-only sandbox still reads." in read, read
    status, out, err = _helper(a, "search", "giraffe", "--json")  # outside the sandbox the next search catches up
    found = json.loads(out)
    assert status == 0 and not found["stale"] and [r["id"] for r in found["results"]] == [new_id], (out, err)


def test_copilot_prompt_mode_without_the_allow_flags_refuses_the_helper_and_nothing_is_reported_saved(world):
    m = world["A"]
    stub = run_cli(m, "copilot", [_save_step("Denied zebra", "Goal: none.", "copilot"), Text("denied")],
                   approve=False)
    [output] = stub.requests[-1].tool_outputs()
    assert "Permission denied" in output and "saved" not in output
    assert "Denied zebra" not in "".join(p.read_text() for p in world["store"].rglob("*.md"))


def test_with_hooks_and_permissions_removed_nothing_of_ours_runs_and_the_users_files_are_byte_equal(world):
    # INV outside-untouched
    m = world["B"]
    status, out, err = _helper(m, "hooks", "remove")
    assert status == 0, (out, err)
    # Leave only OpenCode enabled: setup takes back Codex's writable roots, Claude's rule, Gemini's policy,
    # and the others' instruction blocks.
    # (and hooks off in config.toml too, or setup would put them back).
    config = m.agentmem_home / "config.toml"
    text = re.sub(r"^enabled = \[.*\]$", 'enabled = ["opencode"]', config.read_text(), count=1, flags=re.M)
    config.write_text(text.replace("[hooks]\nenabled = true", "[hooks]\nenabled = false"))
    status, out, err = _helper(m, "setup")
    assert status == 0, (out, err)
    assert "permissions codex: changed" in out and "permissions claude: changed" in out, out

    for rel, value in USER_FILES.items():
        now = (m.home / rel).read_text()
        if rel == ".codex/config.toml":  # the fixture points Codex at each run's stand-in port, and
            now = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:1", now)  # Codex appended its hook trust records
            now = now.split("\n\n[hooks.state]", 1)[0] + ("\n" if "[hooks.state]" in now else "")
        assert now == _text(value), rel
    assert not (m.home / ".copilot/hooks/agentmem.json").exists()
    assert not (m.home / ".config/opencode/plugins/agentmem.js").exists()
    assert not (m.home / ".gemini/policies" / gemini.POLICY_FILE).exists()

    entry, _ = _pending_note(world, m, "Stays pending")
    for runtime in ("gemini", "opencode"):
        stub = run_cli(m, runtime, [Text("ok")])
        assert not any(r.texts_containing(actions.GUIDANCE) for r in stub.requests + stub.side_requests)
        # The block stays in an enabled runtime (memory works without hooks) and went with a disabled one.
        assert bool(stub.requests[0].texts_containing(BLOCK_LINE)) == (runtime == "opencode"), runtime
    stub = run_cli(m, "copilot", [Text("ok")], approve=False)
    assert not any(r.texts_containing(actions.GUIDANCE) for r in stub.requests)
    assert entry.id in [e.id for e in pending.list_entries(m.agentmem_home)]  # no stop hook of ours ran
