"""Assemble the public Space's files: the Copier template, the helper package, bootstrap.md, the page.

    python space/build.py OUT --space-id OWNER/NAME --revision v0.1.0

OUT then holds a repository root that serves both `copier copy <space git URL> --vcs-ref REV`
(copier.yml + template/) and `pip install git+<space git URL>@REV` (pyproject.toml + agentmem/).
An existing OUT keeps only its `.git`, so repeated builds into a Space clone are clean.
Publishing is described in docs/space.md.
"""

from __future__ import annotations

import argparse
import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COPIED = ["copier.yml", "template", "agentmem", "pyproject.toml", "bootstrap.md", "LICENSE"]
FILLED = {"README.md": "README.md", "index.html": "index.html"}  # space/<name> -> OUT/<name>
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".tmp-*")


def build(out: Path, space_id: str, revision: str, root: Path | None = None) -> list[str]:
    """Assemble the Space in `out` from the checkout `root` (default: this one); every listed file must be there."""
    root = ROOT if root is None else root
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*", space_id):
        raise SystemExit(f"--space-id must be OWNER/NAME, not {space_id!r}")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.+-]*", revision):
        raise SystemExit(f"--revision must be a tag name such as v0.1.0, not {revision!r}")
    missing = [name for name in COPIED if not (root / name).exists()]
    missing += [f"space/{name}" for name in FILLED if not (root / "space" / name).is_file()]
    if missing:  # a Space without its LICENSE or template is not a release: stop before touching OUT
        raise SystemExit(f"cannot build the Space: {', '.join(missing)} missing from {root}")
    out.mkdir(parents=True, exist_ok=True)
    for entry in out.iterdir():
        if entry.name == ".git":
            continue
        shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    for name in COPIED:
        src = root / name
        if src.is_dir():
            shutil.copytree(src, out / name, ignore=IGNORE)
        else:
            shutil.copy2(src, out / name)
    for src_name, dst_name in FILLED.items():
        text = (root / "space" / src_name).read_text(encoding="utf-8")
        text = text.replace("@SPACE_ID@", space_id).replace("@REVISION@", revision)
        (out / dst_name).write_text(text, encoding="utf-8")
    return sorted(p.name for p in out.iterdir() if p.name != ".git")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Assemble the agentmem Space into a folder.")
    parser.add_argument("out", type=Path)
    parser.add_argument("--space-id", required=True, help="OWNER/NAME of the Space")
    parser.add_argument("--revision", required=True, help="the tag this build will be published as")
    args = parser.parse_args(argv)
    names = build(args.out, args.space_id, args.revision)
    print(f"assembled {', '.join(names)} in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
