"""The runtime contract is typed and closed: each runtime module states one `SPEC` (runtimes/spec.py),
the registry is the one list of CLIs (the template's choices, the help texts naming CLIs and the tests'
list are checked against it here), and every optional capability is checked by its callers, so a sixth
CLI with no hooks and no skill folder is one module (tests/runtime_aider.py) and its tests."""

from __future__ import annotations

import argparse
import sys

import pytest
import yaml

from agentmem.runtimes import registry
from agentmem.runtimes.spec import DefaultMode, Reflection, Spec
from agentmem.status import Status
from tests.fixtures_core import REPO

SPEC_MEMBERS = ("name", "title", "runtime", "default_mode", "reminder_shape", "reflection", "no_reflection",
                "approval")


def _and(items: list[str]) -> str:
    return " and ".join(items) if len(items) < 3 else ", ".join(items[:-1]) + " and " + items[-1]


def _titles(reflecting: bool) -> list[str]:
    return [registry.spec(n).title for n in registry.NAMES if (registry.spec(n).reflection is not None) == reflecting]


def _copier() -> dict:
    return yaml.safe_load((REPO / "copier.yml").read_text(encoding="utf-8"))


def test_the_templates_runtime_choices_are_the_registry_in_its_order_with_each_clis_title():
    question = _copier()["runtimes"]
    assert list(question["choices"].items()) == [(registry.spec(n).title, n) for n in registry.NAMES]
    assert f"Choose at least one runtime: {', '.join(registry.NAMES)}." in question["validator"]
    assert set(question["default"]) <= set(registry.NAMES)


def test_every_help_text_that_names_the_clis_names_the_registered_ones():
    reflecting, others = _titles(True), _titles(False)
    # copier.yml's `reflect` question: the CLIs whose stop hook continues, and the others
    text = " ".join(_copier()["reflect"]["help"].split())
    assert f"In {_and(reflecting)} (their stop hooks can ask to continue); not in {_and(others)}." in text
    # `agentmem hooks --reflect` and `--runtime`
    from agentmem.cli.hooks import add_hooks

    parser = argparse.ArgumentParser()
    add_hooks(parser)
    helps = {a.dest: " ".join((a.help or "").split()) for a in parser._actions}
    assert f"({', '.join(reflecting)}; not {_and(others)})" in helps["reflect"]
    assert helps["runtime"].startswith("one of " + ", ".join(registry.NAMES) + " ")


def test_the_tests_list_of_real_clis_is_the_registry():
    from tests import fixtures_clis

    assert fixtures_clis.ALL_CLIS == registry.NAMES
    assert set(fixtures_clis.PINNED) == set(registry.NAMES)


@pytest.mark.parametrize("name", registry.NAMES)
def test_each_module_states_every_member_of_its_spec_and_the_spec_cannot_be_changed(name):
    import importlib

    module = importlib.import_module(f"agentmem.runtimes.{name}")
    spec = module.SPEC
    assert isinstance(spec, Spec) and spec is registry.spec(name) and spec.name == name
    assert Spec.__slots__ == SPEC_MEMBERS and all(hasattr(spec, m) for m in SPEC_MEMBERS)
    assert isinstance(spec.default_mode, DefaultMode) and spec.title
    assert (spec.reflection is None) == bool(spec.no_reflection)
    assert registry.runtime(name, {"HOME": "/h"}).name == name
    with pytest.raises(AttributeError, match="frozen"):
        spec.reflection = None
    assert not hasattr(module, "RUNTIME")  # the class is registered through SPEC alone


def test_a_spec_refuses_a_reflection_without_hooks_and_a_missing_reason_for_none():
    mode = DefaultMode(command="x", saves=True, searches=True, trusted_saves=True, trusted_searches=True,
                       otherwise="nothing")
    with pytest.raises(ValueError, match="either a reflection or why"):
        Spec(name="x", title="X", runtime=object, default_mode=mode, reminder_shape=None, reflection=None)
    with pytest.raises(ValueError, match="needs hooks"):
        Spec(name="x", title="X", runtime=object, default_mode=mode, reminder_shape=None,
             reflection=Reflection(how="Stop", continue_shape=dict))


# -- a sixth CLI with no hooks, no skills, no MCP ------------------------------------------------

HELPER = ["/opt/agentmem/bin/agentmem"]


@pytest.fixture
def aider(monkeypatch):
    """tests/runtime_aider.py registered as the sixth runtime, as registry.py would list it."""
    from tests import runtime_aider

    specs = registry._specs()
    monkeypatch.setattr(registry, "NAMES", (*registry.NAMES, "aider"))
    monkeypatch.setattr(registry, "_specs", lambda: {**specs, "aider": runtime_aider.SPEC})
    monkeypatch.setitem(sys.modules, "agentmem.runtimes.aider", runtime_aider)  # what `hook --runtime` imports
    return runtime_aider


def test_the_interface_tests_every_runtime_passes_hold_for_the_sixth_cli_too(aider, tmp_path):
    from tests import test_runtime_modules as every_runtime

    every_runtime.test_a_runtime_keeps_its_files_under_the_home_it_is_given("aider")
    every_runtime.test_a_reminder_is_printed_in_a_form_that_carries_the_text_whole("aider")
    every_runtime.test_every_part_of_a_runtime_goes_in_and_comes_out_leaving_the_users_files_byte_equal(
        "aider", tmp_path)
    assert registry.reflection(["codex", "aider"], on=True, hooked={"codex", "aider"}) == {
        "codex": "on", "aider": aider.SPEC.no_reflection}


@pytest.mark.slow  # a copier copy
def test_a_sixth_cli_with_no_hooks_or_skills_is_set_up_checked_and_withdrawn_by_the_same_code(
        aider, template_repo, tmp_path, monkeypatch, capsys):
    from agentmem import config
    from agentmem.cli.hooks import run_hooks
    from agentmem.hooks import dispatch
    from agentmem.machine import doctor, settings
    from agentmem.setup import runner, wiring
    from agentmem.skills import catalog
    from tests.test_runtimes_update import _enable
    from tests.test_runtimes_update import _machine as copied

    user, folder = copied(template_repo, tmp_path, monkeypatch, ["codex"])  # hooks and MCP on
    _enable(folder, ["codex", "aider"])
    settings.record_reflect(folder, True)
    monkeypatch.setenv("AGENTMEM_HOME", str(folder))

    report = runner.run_setup(folder, helper_command=HELPER)
    assert report.outcome == "confirmed", report.text()
    steps = {s.name: s for s in report.steps if s.name.endswith(" aider")}
    assert set(steps) == {"instructions aider", "permissions aider", "reflect aider"}, report.text()
    assert steps["reflect aider"].status == "skipped" and steps["reflect aider"].detail == aider.SPEC.no_reflection
    assert not [s for s in steps.values() if s.status in ("warning", "failed")], report.text()
    assert "hooks codex" in {s.name for s in report.steps}  # the others are set up as before
    conventions = user / ".aider" / "CONVENTIONS.md"
    assert "agentmem" in conventions.read_text()

    cfg = config.load(folder)
    checks = wiring.checks(str(folder), cfg)
    assert {c.name: c.status for c in checks if c.name.endswith(" aider")} == {"instructions aider": "ok"}
    # The helper check is left out: HELPER is a placeholder path here (tests/test_setup_doc.py checks a real one).
    failed = [(c.name, c.detail) for c in doctor.run(str(folder), cfg, runtime_checks=checks)
              if c.status == Status.FAILED and c.name != "helper"]
    assert failed == []
    assert catalog.installed_revisions("review", [aider.Aider({"HOME": str(user)})]) == []

    status = run_hooks(argparse.Namespace(action="status", runtime=None, reflect=None, codex=None))
    assert [h["runtime"] for h in status.data["hooks"]] == ["codex"]
    install = run_hooks(argparse.Namespace(action="install", runtime=["aider"], reflect=None, codex=None))
    assert install.exit_code == 0 and install.data["changes"] == [] and install.data["recorded"] is None
    assert "aider: runs no hooks of ours, nothing to install" in install.text

    capsys.readouterr()
    for argv in (["reminder", "--runtime", "aider"], ["stop", "--runtime", "aider"],
                 ["approve", "--runtime", "aider"]):
        assert dispatch.run_hook(argv) == 0
        out, err = capsys.readouterr()
        assert (out, err) == ("", ""), argv

    _enable(folder, ["codex"])  # taken out again: the block goes, nothing else was there
    report = runner.run_setup(folder, helper_command=HELPER)
    assert report.outcome == "confirmed", report.text()
    steps = {s.name: s for s in report.steps if s.name.endswith(" aider")}
    assert {n: s.status for n, s in steps.items()} == {"instructions aider": "changed"}, report.text()
    assert "agentmem" not in (conventions.read_text() if conventions.exists() else "")


@pytest.fixture(scope="module")
def template_repo(tmp_path_factory):
    from tests.template_kit import make_template_repo

    return make_template_repo(tmp_path_factory.mktemp("tpl"))
