"""The assembled Space, committed and tagged in a git repo, is a working template source and package."""

from __future__ import annotations

import subprocess
import sys
import zipfile

import pytest

from space.build import COPIED, build
from tests.template_kit import REPO, git, make_machine


@pytest.fixture
def space_repo(tmp_path):
    repo = tmp_path / "space"
    names = build(repo, "owner/agentmem", "v0.1.0")
    assert {"README.md", "index.html", "bootstrap.md", "copier.yml", "template", "agentmem", "pyproject.toml",
            "LICENSE"} <= set(names)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "agentmem v0.1.0")
    git(repo, "tag", "v0.1.0")
    return repo


def test_the_space_card_and_page_name_the_pinned_revision(space_repo):
    card = (space_repo / "README.md").read_text()
    assert card.startswith("---\ntitle: agentmem\n") and "\nsdk: static\n" in card and "`v0.1.0`" in card
    page = (space_repo / "index.html").read_text()
    assert "@" + "SPACE_ID@" not in page and "--vcs-ref v0.1.0" in page
    assert "huggingface.co/spaces/owner/agentmem/blob/v0.1.0/bootstrap.md" in page


@pytest.mark.slow  # a copier copy
def test_a_full_copier_copy_from_the_tagged_space_sets_up_a_machine(space_repo, tmp_path):
    m = make_machine(tmp_path, "fresh")
    project = m.user / "src" / "webapp"
    project.mkdir(parents=True)
    proc = m.copy(space_repo, ref="v0.1.0", cwd=project, data={"bucket": "~/agent-memory"})
    assert "Setup verified" in proc.stdout
    assert (m.user / "agent-memory" / "projects" / "webapp" / "notes").is_dir()
    assert "_commit: v0.1.0" in (m.folder / ".copier-answers.yml").read_text()


@pytest.mark.slow  # pip fetches the build backend (setuptools) from the package index
def test_pip_builds_the_helper_from_the_tagged_space(space_repo, tmp_path):
    # What `pip install git+<space URL>@v0.1.0` does first: clone the tag and build a wheel.
    out = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "-w", str(out), f"git+file://{space_repo}@v0.1.0"], check=True, capture_output=True)
    [wheel] = out.glob("agentmem-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "agentmem/cli/main.py" in names and "agentmem/setup/runner.py" in names and "agentmem/machine/helper_venv.py" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "agentmem = agentmem.launch:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_the_space_carries_the_license_the_card_and_pyproject_name(space_repo):
    assert (space_repo / "LICENSE").read_bytes() == (REPO / "LICENSE").read_bytes()
    assert "Apache License" in (space_repo / "LICENSE").read_text()


@pytest.mark.parametrize("missing", ["LICENSE", "bootstrap.md", "space/index.html"])
def test_a_listed_file_missing_from_the_checkout_stops_the_build_and_leaves_out_as_it_was(tmp_path, monkeypatch,
                                                                                          missing):
    import shutil

    import space.build

    root = tmp_path / "checkout"
    root.mkdir()
    for name in [*COPIED, "space"]:
        (shutil.copytree if (REPO / name).is_dir() else shutil.copy2)(REPO / name, root / name)
    (root / missing).unlink()
    out = tmp_path / "out"
    out.mkdir()
    (out / "previous-build.txt").write_text("kept")
    monkeypatch.setattr(space.build, "ROOT", root)
    with pytest.raises(SystemExit, match=f"{missing} missing"):
        build(out, "owner/agentmem", "v0.1.0")
    assert [p.name for p in out.iterdir()] == ["previous-build.txt"]
