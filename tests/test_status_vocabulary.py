"""One status vocabulary (agentmem/status.py): every check doctor reports and every step setup reports takes
its status from `Status`, and each front end spells it by the one rule (a step: the word; a check: its first
four letters), so the documented JSON words stay as they were."""

from __future__ import annotations

import ast
import json
import stat

import pytest

from agentmem import config, errors
from agentmem.machine import doctor
from agentmem.setup import runner, wiring
from agentmem.status import CHANGED, CHECK_STATUSES, CHECK_WORDS, FAILED, OK, WARNING, Status, check_word
from tests.fixtures_core import REPO
from tests.test_doctor_wiring import HELPER, _machine
from tests.test_runtimes_update import template_repo  # noqa: F401 - the module's template fixture

# The modules that build a report of checks or steps, and the runtimes' steps they hand to setup.
REPORTING = ["agentmem/machine/doctor.py", "agentmem/setup/wiring.py", "agentmem/setup/runner.py",
             "agentmem/machine/setup_report.py", "agentmem/setup/verification.py", "agentmem/cli/doctor.py",
             *sorted(str(p.relative_to(REPO)) for p in (REPO / "agentmem" / "runtimes").glob("*.py"))]
WORDS = {s.value for s in Status} | set(CHECK_WORDS)


def _bare_statuses(path: str) -> list[str]:
    """Where a module writes a status as a bare string: a Check's or a step's status argument, a `status=`
    keyword, a `.status` compared with a word, a returned (status, detail) pair or mapping value."""
    tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
    found = []

    def word(node: ast.AST | None) -> bool:
        return isinstance(node, ast.Constant) and node.value in WORDS

    for node in ast.walk(tree):
        hits: list[ast.AST | None] = []
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name in ("Check", "Step", "add", "_check") and len(node.args) > 1:
                hits.append(node.args[1])
            hits += [k.value for k in node.keywords if k.arg == "status"]
        elif isinstance(node, ast.Compare) and any(isinstance(side, ast.Attribute) and side.attr == "status"
                                                   for side in [node.left, *node.comparators]):
            hits += [node.left, *node.comparators]
        elif isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple):
            hits += node.value.elts
        elif isinstance(node, ast.Dict) and any(isinstance(k, ast.Constant) and k.value in ("installed", "updated")
                                                for k in node.keys):
            hits += node.values  # a mapping of an operation's outcome to a step's status
        for hit in hits:
            if isinstance(hit, ast.IfExp):
                hit = hit.body if word(hit.body) else hit.orelse
            if word(hit):
                found.append(f"{path}:{hit.lineno}: {hit.value!r}")
    return found


def test_no_report_writes_a_status_as_a_bare_word_each_comes_from_the_one_vocabulary():
    assert [hit for path in REPORTING for hit in _bare_statuses(path)] == []


def test_a_check_is_spelt_by_its_first_four_letters_and_a_step_by_its_word():
    assert {s: check_word(s) for s in CHECK_STATUSES} == {OK: "ok", WARNING: "warn", FAILED: "fail"}
    assert [s.value for s in Status] == ["ok", "changed", "skipped", "pending", "warning", "failed"]
    with pytest.raises(ValueError):
        check_word(Status.CHANGED)  # a check is never changed: doctor reports, it does not act
    with pytest.raises(ValueError):
        doctor.Check("x", "warn", "a word outside the vocabulary")
    with pytest.raises(ValueError):
        runner.SetupReport("/m").add("x", "warn")


def test_a_real_setup_and_doctor_report_every_status_from_the_vocabulary(template_repo, tmp_path, monkeypatch):
    user, folder = _machine(template_repo, tmp_path, monkeypatch, ["codex", "claude"])
    agents = user / ".codex" / "AGENTS.md"
    agents.write_text("the user's own rules, made read-only\n")
    agents.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)  # setup cannot write it: a warning step
    (user / ".claude" / "CLAUDE.md").write_text("# mine only\n")  # its block gone: setup puts it back (changed)
    report = runner.run_setup(folder, helper_command=HELPER)
    assert all(isinstance(s.status, Status) for s in report.steps), report.text()
    assert {OK, CHANGED, WARNING} <= {s.status for s in report.steps}, report.text()
    steps = json.loads(json.dumps(report.to_dict()))["steps"]
    assert [s["status"] for s in steps] == [s.status.value for s in report.steps]
    assert f"check instructions codex: {WARNING.value} - " in report.text()

    cfg = config.load(folder)
    checks = doctor.run(str(folder), cfg, runtime_checks=wiring.checks(str(folder), cfg))
    assert all(isinstance(c.status, Status) and c.status in CHECK_STATUSES for c in checks)
    assert {c.status for c in checks} >= {OK, FAILED}, [(c.name, c.status) for c in checks]
    assert [c.to_json()["status"] for c in checks] == [c.status.value[:4] for c in checks]
    assert {c.to_json()["status"] for c in checks} <= {"ok", "warn", "fail"}


def test_a_config_warning_in_doctor_keeps_its_class_for_a_caller_to_match(template_repo, tmp_path, monkeypatch):
    user, folder = _machine(template_repo, tmp_path, monkeypatch, ["codex"])
    cfg_path = folder / "config.toml"
    config.load(folder).keep_parsed_copy()  # the last working copy, which doctor runs on meanwhile
    text = cfg_path.read_text()
    cfg_path.write_text(text + "\n<<<<<<< ours\nagent = \"a\"\n=======\nagent = \"b\"\n>>>>>>> theirs\n")
    cfg = config.load(folder)
    (warned,) = [c for c in doctor.run(str(folder), cfg) if c.name == "config" and c.status == WARNING]
    assert isinstance(warned.detail, errors.StaleConfig) and warned.to_json()["status"] == "warn"
