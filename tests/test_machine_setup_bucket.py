"""Machines set up on a bucket store: real copier, real huggingface_hub and hf_xet, the loopback Hub."""

from __future__ import annotations

import json
import tomllib

import pytest

from tests.template_kit import git, make_machine, make_template_repo


@pytest.fixture
def template_repo(tmp_path):
    return make_template_repo(tmp_path)


def _on_hub(machine, hub, token=None):
    machine.env.update(HF_ENDPOINT=hub.url, HF_HOME=str(machine.user / ".hf"), HF_HUB_DISABLE_PROGRESS_BARS="1")
    if token:
        machine.env["HF_TOKEN"] = token
    return machine


def _project(machine, name="app"):
    path = machine.user / "src" / name
    path.mkdir(parents=True)
    return path


@pytest.mark.slow  # two copier runs through the Hub stand-in
def test_a_first_machine_creates_the_bucket_and_a_second_connects_without_creating_another(template_repo, hub, tmp_path):
    # INV setup-rerun
    token = hub.add_user("alice")
    first = _on_hub(make_machine(tmp_path, "laptop"), hub, token)
    a = _project(first)
    proc = first.copy(template_repo, ref="v1.0.0", cwd=a, data={"bucket": "hf"})
    assert "store: changed - created private bucket alice/agent-memory" in proc.stdout, proc.stdout
    assert "Setup verified" in proc.stdout
    assert list(hub.buckets) == ["alice/agent-memory"] and hub.buckets["alice/agent-memory"].private
    cfg = tomllib.loads((first.folder / "config.toml").read_text())
    assert cfg["store"] == {"kind": "bucket", "location": "alice/agent-memory"}
    assert git(first.folder, "status", "--porcelain") == ""
    # INV no-credentials: the token appears in no output and no file of the machine folder or runtimes.
    assert token not in proc.stdout + proc.stderr
    written = [first.folder, first.user / ".codex", first.user / ".agents"]
    assert not [p for root in written for p in root.rglob("*") if p.is_file() and token.encode() in p.read_bytes()]

    hub.clear_log()
    second = _on_hub(make_machine(tmp_path, "desktop"), hub, token)
    b = _project(second, "app-checkout")
    proc = second.copy(template_repo, ref="v1.0.0", cwd=b,
                       data={"bucket": "alice/agent-memory", "projects": json.dumps({str(b): "app"})})
    assert "store: ok - connected to private bucket alice/agent-memory" in proc.stdout
    assert "Setup verified" in proc.stdout
    assert hub.requests("create") == [] and list(hub.buckets) == ["alice/agent-memory"]
    found = json.loads(second.run("search", "Memory setup verification", "--json", cwd=b).stdout)["results"]
    assert len(found) == 2  # the first machine's note too, read through the bucket


@pytest.mark.slow  # a copier copy through the Hub stand-in
def test_a_public_bucket_stops_setup_and_stays_public(template_repo, hub, tmp_path):
    token = hub.add_user("alice")
    hub.add_bucket("alice/open", private=False)
    m = _on_hub(make_machine(tmp_path, "laptop"), hub, token)
    project = _project(m)
    proc = m.copy(template_repo, ref="v1.0.0", cwd=project, data={"bucket": "alice/open"}, args=["--no-cleanup"],
                  check=False)
    assert proc.returncode != 0 and "Setup FAILED" in proc.stdout  # a failed setup fails the copy
    rerun = m.run("setup")
    assert rerun.returncode == 9 and "store: failed" in rerun.stdout
    assert hub.buckets["alice/open"].private is False and list(hub.buckets) == ["alice/open"]
    assert not (m.user / ".codex").exists()  # nothing installed on top of an unusable store


@pytest.mark.slow  # a copier copy through the Hub stand-in
def test_without_credentials_setup_explains_the_login_and_never_asks_for_a_token(template_repo, hub, tmp_path):
    hub.add_user("alice")
    m = _on_hub(make_machine(tmp_path, "laptop"), hub)
    project = _project(m)
    proc = m.copy(template_repo, ref="v1.0.0", cwd=project, data={"bucket": "hf"}, args=["--no-cleanup"], check=False)
    assert proc.returncode != 0 and "auth: failed" in proc.stdout and "Setup FAILED" in proc.stdout
    assert "hf auth login" in proc.stdout and hub.buckets == {}
    assert m.run("setup").returncode == 5
