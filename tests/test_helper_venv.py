"""The helper venv that Copier's first task makes from the template's own package."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from agentmem.machine import helper_venv
from tests.template_kit import REPO


def _source(tmp_path):
    src = tmp_path / "template"
    shutil.copytree(REPO / "agentmem", src / "agentmem", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(REPO / "pyproject.toml", src / "pyproject.toml")
    return src


def test_pinned_versions_come_from_pyproject():
    assert helper_venv._pinned(REPO, ["huggingface_hub", "hf-xet", "PyYAML", "tomlkit"]) == [
        "huggingface_hub==2.4.0", "hf-xet==1.8.0", "PyYAML==6.0.4", "tomlkit==0.15.2"]


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


@pytest.mark.slow  # pip installs the pinned dependencies from the package index: about 9 s (2026-11-30)
def test_without_the_dependencies_beside_copier_the_venv_gets_its_own_pinned_copies(tmp_path):
    bare = tmp_path / "bare-copier-env"  # stands in for a throwaway `uvx copier` environment
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    src, home = _source(tmp_path), tmp_path / "machine"
    home.mkdir()
    subprocess.run([str(bare / "bin" / "python"), "-I", str(REPO / "agentmem" / "machine" / "helper_venv.py"), str(home), str(src)],
                   check=True, capture_output=True)
    python = helper_venv.venv_python(home / ".venv")
    pth = next((home / ".venv").rglob("agentmem-machine.pth")).read_text()
    assert pth.splitlines() == [f"import os; os.environ.setdefault('AGENTMEM_HOME', {str(home.resolve())!r})"]
    probe = "import huggingface_hub, hf_xet, tomlkit, yaml; print(huggingface_hub.__version__, tomlkit.__version__)"
    out = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, check=True, cwd=tmp_path).stdout
    assert out.split() == ["2.4.0", "0.15.2"]


def test_the_installed_package_is_byte_compiled_so_no_start_recompiles_it(tmp_path):
    # Where PYTHONDONTWRITEBYTECODE is set, nothing else would ever write the bytecode.
    src, home = _source(tmp_path), tmp_path / "machine"
    home.mkdir()
    helper_venv.install(home, src)
    python = helper_venv.venv_python(home / ".venv")
    probe = "import importlib.util as u, agentmem.cli.main as c, os; print(os.path.exists(u.cache_from_source(c.__file__)))"
    out = subprocess.run([str(python), "-P", "-c", probe], capture_output=True, text=True, check=True, cwd=tmp_path,
                         env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"}).stdout.strip()
    assert out == "True"


def test_the_launcher_starts_without_site_and_runs_it_when_a_dependency_is_first_needed(tmp_path):
    # The launcher skips `site` for speed (agentmem/launch.py). A search-path import must not
    # load it; a standard-library probe that fails (ntpath asking for `nt`) must not either;
    # the first third-party import (tomlkit, beside Copier) must load it and succeed.
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
