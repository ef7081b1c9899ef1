"""Every command's --json output has the documented shape, on success and on failure.

The shapes are written once, in agentmem/cli/reference.py (docs/cli.md is generated from them):
each object carries `status` with a documented value, every key it holds is documented, and
every key documented as always present is there. A failure is the one error envelope, with
the exit status of its error kind.
"""

from __future__ import annotations

import json
import shutil

import pytest

from agentmem import errors
from agentmem.cli import main, reference
from tests.fixtures_core import REPO
from tests.fixtures_hub import BucketMachine, alice, alice_bucket, hub  # noqa: F401 - fixtures

KINDS = {cls.kind: cls.exit_code for cls in reference._error_classes()}


def check_shape(command: str, status: int, out: str, expect_status: int = errors.EXIT_OK) -> dict:
    data = json.loads(out)
    assert status == expect_status, (command, status, data)
    statuses, keys = reference.JSON_SHAPES[command]
    assert data["status"] in [s.strip() for s in statuses.replace(";", "|").replace("(", "|").replace(")", "|")
                              .replace(",", "|").split("|")], (command, data["status"])
    documented = {k.rstrip("?") for k in keys} | reference.COMMON_KEYS
    assert set(data) <= documented, (command, set(data) - documented)
    assert {k for k in keys if not k.endswith("?")} <= set(data), command
    return data


def check_error(status: int, out: str, err: str, kind: str) -> None:
    data = json.loads(out)
    assert data == {"status": "error", "error": kind, "message": data["message"], "next": data["next"]}
    for step in data["next"]:  # docs/cli.md: each step {text, argv?, command?}
        assert set(step) <= set(reference.STEP_SHAPE) | {k.rstrip("?") for k in reference.STEP_SHAPE}, step
        assert step["text"] and ("command" in step) <= ("argv" in step)
    assert status == KINDS[kind]
    assert err.startswith("agentmem: ") and err.count("\n") == 1


@pytest.fixture
def desk(laptop, tmp_path):
    """The laptop with what copier renders beside config.toml, runtimes enabled and a helper recorded."""
    shutil.copytree(REPO / "template" / "agent-memory", laptop.home / "agent-memory")
    shutil.copy2(REPO / "template" / "instructions-block.md", laptop.home / "instructions-block.md")
    text = (laptop.home / "config.toml").read_text()
    laptop.write_config(text + '\n[runtimes]\nenabled = ["claude"]\n\n[helper]\ncommand = ["/opt/agentmem/bin/agentmem"]\n')
    return laptop


def test_the_shapes_cover_exactly_the_commands():
    assert set(reference.JSON_SHAPES) == set(main.COMMANDS)


def test_memory_commands_have_their_documented_shapes(desk):
    m, cwd = desk, desk.checkout
    saved = check_shape("save", *m.run("save", "--json", "--title", "Cache key", input="lockfile hash", cwd=cwd)[:2])
    assert saved["status"] == "saved"
    check_shape("pending", *m.run("pending", "--json", cwd=cwd)[:2])
    found = check_shape("search", *m.run("search", "lockfile", "--json", cwd=cwd)[:2])
    assert [r["id"] for r in found["results"]] == [saved["id"]]
    check_shape("read", *m.run("read", saved["id"], "--json", cwd=cwd)[:2])
    synced = check_shape("sync", *m.run("sync", "--json", cwd=cwd)[:2])
    assert synced["notes"] == 1 and not synced["stale"]
    assert check_shape("audit", *m.run("audit", "--json", cwd=cwd)[:2])["status"] == "clean"
    check_shape("where", *m.run("where", "--json", cwd=cwd)[:2])
    shown = check_shape("view", *m.run("view", "--json", cwd=cwd)[:2])
    assert shown["notes"] == 1 and shown["projects"] == ["app"]
    other = cwd.parent / "other"
    other.mkdir()
    check_shape("map", *m.run("map", str(other), "other", "--json", cwd=cwd)[:2])
    check_shape("unmap", *m.run("unmap", str(other), "--json", cwd=cwd)[:2])
    check_shape("doctor", *m.run("doctor", "--json", cwd=cwd)[:2], errors.EXIT_ATTENTION)  # claude enabled, never set up
    check_shape("export", *m.run("export", str(cwd.parent / "exported"), "--json", cwd=cwd)[:2])
    check_shape("import", *m.run("import", "--from", "agentmem", str(cwd.parent / "exported"), "--json", cwd=cwd)[:2])


def test_hygiene_commands_have_their_documented_shapes(desk):
    m, cwd = desk, desk.checkout
    saved = check_shape("save", *m.run("save", "--json", "--review-by", "2020-01-01", input="old finding", cwd=cwd)[:2])
    other = check_shape("save", *m.run("save", "--json", input="another finding", cwd=cwd)[:2])
    pinned = check_shape("pin", *m.run("pin", other["id"], "--json", cwd=cwd)[:2])
    assert pinned["status"] == "saved" and pinned["record"]["kind"] == "pin"
    assert check_shape("pin", *m.run("pin", other["id"], "--json", cwd=cwd)[:2])["status"] == "unchanged"
    check_shape("unpin", *m.run("unpin", other["id"], "--json", cwd=cwd)[:2])
    check_shape("retract", *m.run("retract", saved["id"], "--reason", "no longer true", "--json", cwd=cwd)[:2])
    queue = check_shape("review", *m.run("review", "--json", cwd=cwd)[:2])
    assert [i["kind"] for i in queue["items"]] == ["retracted"]
    found = check_shape("search", *m.run("search", "finding", "--include-retracted", "--json", cwd=cwd)[:2])
    assert {r["id"] for r in found["results"]} == {saved["id"], other["id"]}
    check_shape("read", *m.run("read", saved["id"], "--json", cwd=cwd)[:2])
    purged = check_shape("purge", *m.run("purge", other["id"], "--yes", "--json", cwd=cwd)[:2])
    assert purged["status"] == "purged" and purged["deleted_from_store"] is True


def test_a_pending_save_has_its_documented_shape(machines, tmp_path):
    checkout = tmp_path / "app"
    checkout.mkdir()
    m = machines("offline", {checkout: "app"})
    m.write_config((m.home / "config.toml").read_text().replace(str(tmp_path / "shared-store"),
                                                                str(tmp_path / "unmounted" / "store")))
    status, out, _ = m.run("save", "--json", input="kept locally", cwd=checkout)
    data = check_shape("save", status, out, errors.EXIT_PENDING)
    assert data["status"] == "pending" and data["retry"] and data["reason"]["error"] == "offline"


def test_machine_and_hook_commands_have_their_documented_shapes(desk):
    m, cwd = desk, desk.checkout
    setup = check_shape("setup", *m.run("setup", "--json", cwd=cwd)[:2])
    assert setup["status"] == "confirmed"
    check_shape("bucket", *m.run("bucket", "verify", "--json", cwd=cwd)[:2])
    for action in ("install", "status", "remove"):
        check_shape("hooks", *m.run("hooks", action, "--json", cwd=cwd)[:2])


def test_skill_commands_have_their_documented_shapes(desk, tmp_path):
    m, cwd = desk, desk.checkout
    src = tmp_path / "skill-src" / "tidy"
    src.mkdir(parents=True)
    (src / "SKILL.md").write_text("---\nname: tidy\ndescription: Tidy things up.\n---\n\nDo it.\n")
    published = check_shape("publish-skill", *m.run("publish-skill", str(src), "--json", cwd=cwd)[:2])
    revision = published["revision"]
    check_shape("skills", *m.run("skills", "--json", cwd=cwd)[:2])
    check_shape("read-skill", *m.run("read-skill", "tidy", revision, "--json", cwd=cwd)[:2])
    check_shape("install-skill", *m.run("install-skill", "tidy", revision, "--json", cwd=cwd)[:2])


def test_bucket_provisioning_has_its_documented_shape(hub, alice, alice_bucket, tmp_path):  # noqa: F811
    machine = BucketMachine(tmp_path / "desk", hub, alice)
    done = machine.run("bucket", "connect", "--json")
    data = check_shape("bucket", done.returncode, done.stdout)
    assert data["action"] == "connected"


# (argv, the error kind) of one failure per command, run in an unmapped directory where that is the failure.
FAILURES = [
    (["save"], "not-configured"),
    (["save", "--retry", "20261130T000000000Z-aaaaaaaa"], "not-found"),
    (["pending", "--bogus"], "invalid-input"),
    (["search", "x"], "not-configured"),
    (["search", "x", "--limit", "0", "--project", "app"], "invalid-input"),
    (["read", "20261130T000000000Z-aaaaaaaa", "--project", "app"], "not-found"),
    (["sync", "--project", "nope"], "not-configured"),
    (["retract", "20261130T000000000Z-aaaaaaaa", "--project", "app", "--reason", "wrong"], "not-found"),
    (["pin", "20261130T000000000Z-aaaaaaaa", "--project", "app"], "not-found"),
    (["unpin", "20261130T000000000Z-aaaaaaaa", "--project", "app"], "not-found"),
    (["review"], "not-configured"),
    (["purge", "20261130T000000000Z-aaaaaaaa", "--project", "app"], "invalid-input"),  # no terminal, no --yes
    (["promote", "20261130T000000000Z-aaaaaaaa", "--project", "app"], "not-configured"),  # no team store
    (["map", "/nonexistent/folder", "p"], "invalid-input"),
    (["unmap", "/nonexistent/folder"], "not-found"),
    (["export"], "invalid-input"),
    (["doctor", "--bogus"], "invalid-input"),
    (["import", "--from", "cline"], "not-configured"),
    (["where"], "not-configured"),
    (["view", "--project", "nowhere"], "not-configured"),
    (["setup", "--bogus"], "invalid-input"),
    (["bucket", "connect"], "invalid-input"),
    (["publish-skill"], "invalid-input"),
    (["skills", "--bogus"], "invalid-input"),
    (["read-skill", "tidy", "20261130T000000000Z-aaaaaaaa"], "not-found"),
    (["install-skill", "agent-memory", "20261130T000000000Z-aaaaaaaa"], "invalid-input"),
    (["hooks", "trust", "--codex", "/nonexistent/codex"], "error"),
    (["mcp"], "invalid-input"),
    (["audit"], "not-configured"),
    (["upgrade", "--data", "no-equals-sign"], "invalid-input"),  # --json: mcp speaks JSON-RPC, it has no JSON result of its own
]


@pytest.mark.parametrize("argv,kind", FAILURES, ids=[" ".join(a) for a, _ in FAILURES])
def test_a_failing_command_prints_the_one_error_envelope(desk, argv, kind):
    assert {a[0] for a, _ in FAILURES} == set(main.COMMANDS)  # one failure of each command
    status, out, err = desk.run(*argv, "--json", cwd=desk.user_home)
    check_error(status, out, err, kind)
