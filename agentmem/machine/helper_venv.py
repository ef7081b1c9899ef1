"""Install the helper from a template checkout into `<machine folder>/.venv` (Copier's first task).

Run as a script with the standard library only (`python -I helper_venv.py HOME SOURCE`),
before any agentmem is installed. It makes the helper that setup, the skill and the
hooks call come from the same template revision Copier is rendering:

- a venv without pip, made by the interpreter running Copier (about 0.1 s);
- this revision's `agentmem` package copied into it, replacing any older copy whole;
- a `.pth` file that sets `AGENTMEM_HOME` to this machine folder unless the
  environment sets it, and, when Copier's own environment holds every runtime
  dependency (as when agentmem was pip-installed with its copier dependency), puts
  that environment's site-packages after the venv's so nothing is downloaded;
- `.venv/bin/agentmem`, a launcher script: the helper's absolute command, which starts
  Python without `site` for speed (see `agentmem/launch.py`).

Otherwise it bootstraps pip in the venv and installs the pinned runtime dependencies
from `pyproject.toml` there (needs the package index). If a linked Copier environment
is later removed, `copier update` (or rerunning this script) rebuilds the venv.

When the rendered config.toml turns the MCP server on (`[mcp] enabled`, the Copier
answer `mcp`), the `mcp` extra's pinned packages are installed into the venv the same
way, unless the exact pinned versions are already importable there.
"""

from __future__ import annotations

import os
import shlex
import shutil
import site
import subprocess
import sys
import tomllib
from pathlib import Path

IMPORTS = {"huggingface_hub": "huggingface_hub", "hf-xet": "hf_xet", "PyYAML": "yaml", "tomlkit": "tomlkit"}


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def launcher_path(venv: Path) -> Path:
    return venv / ("Scripts/agentmem.cmd" if os.name == "nt" else "bin/agentmem")


def _run(*cmd, capture=False) -> str:
    done = subprocess.run([str(c) for c in cmd], check=True, text=True, capture_output=capture)
    return done.stdout.strip() if capture else ""


def _base_paths() -> list[str]:
    paths = list(site.getsitepackages())
    if site.ENABLE_USER_SITE and os.path.isdir(site.getusersitepackages()):
        paths.append(site.getusersitepackages())
    return [p for p in paths if os.path.isdir(p)]


def _swap_in(src: Path, dest: Path) -> None:
    fresh, old = dest.with_name(f".tmp-{dest.name}-new"), dest.with_name(f".tmp-{dest.name}-old")
    for leftover in (fresh, old):
        shutil.rmtree(leftover, ignore_errors=True)
    shutil.copytree(src, fresh, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".tmp-*"))
    if dest.exists():
        os.replace(dest, old)
    os.replace(fresh, dest)
    shutil.rmtree(old, ignore_errors=True)


def _missing(python: Path) -> list[str]:
    probe = "import importlib.util as u, sys; print(' '.join(n for n in sys.argv[1:] if u.find_spec(n) is None))"
    out = _run(python, "-c", probe, *IMPORTS.values(), capture=True)
    return [dist for dist, mod in IMPORTS.items() if mod in out.split()]


def _pinned(source: Path, dists: list[str]) -> list[str]:
    deps = tomllib.loads((source / "pyproject.toml").read_text("utf-8"))["project"]["dependencies"]
    wanted = {d.lower().replace("_", "-") for d in dists}
    return [d for d in deps if d.split("=")[0].split(">")[0].split("<")[0].strip().lower().replace("_", "-") in wanted]


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


def _lacks(python: Path, pins: list[str]) -> bool:
    """True unless every `name==version` in `pins` is installed at exactly that version for `python`."""
    probe = ("import sys; from importlib import metadata as m\n"
             "def ok(p):\n    n, _, v = p.partition('==')\n    try: return m.version(n.strip()) == v.strip()\n"
             "    except m.PackageNotFoundError: return False\n"
             "print('ok' if all(ok(p) for p in sys.argv[1:]) else 'missing')")
    return _run(python, "-c", probe, *pins, capture=True) != "ok"


def _pip_install(python: Path, pins: list[str]) -> None:
    if _run(python, "-c", "import importlib.util as u; print(u.find_spec('pip') is not None)", capture=True) != "True":
        _run(python, "-m", "ensurepip", "--upgrade")
    _run(python, "-m", "pip", "install", "--quiet", *pins)


def install(machine: Path, source: Path) -> list[str]:
    """Create or refresh the helper venv; return the helper's absolute command."""
    machine, source = machine.resolve(), source.resolve()
    if not (source / "agentmem" / "__init__.py").is_file():
        raise SystemExit(f"agentmem: no agentmem package in the template at {source}")
    venv = machine / ".venv"
    python = venv_python(venv)
    if not python.exists():
        _run(sys.executable, "-m", "venv", "--without-pip", venv)
    purelib = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", capture=True))
    home_line = f"import os; os.environ.setdefault('AGENTMEM_HOME', {str(machine)!r})"
    pth = purelib / "agentmem-machine.pth"
    pth.write_text("\n".join([*_base_paths(), home_line]) + "\n", encoding="utf-8")
    _swap_in(source / "agentmem", purelib / "agentmem")
    # Bytecode now, once: the helper starts on every agent turn, and where PYTHONDONTWRITEBYTECODE
    # is set (or the folder is read-only) Python would otherwise recompile every module each time
    # (measured 2026-11-30: `agentmem search` 48 ms without, about 30 ms with).
    _run(python, "-m", "compileall", "-q", purelib / "agentmem")
    if _missing(python):
        # Copier's environment lacks some (e.g. a throwaway `uvx copier`): do not lean on it
        # at all, since it may vanish; install every runtime dependency into the venv.
        pth.write_text(home_line + "\n", encoding="utf-8")
        _run(python, "-m", "ensurepip", "--upgrade")
        _run(python, "-m", "pip", "install", "--quiet", *_pinned(source, list(IMPORTS)))
    for extra in _extras_wanted(machine):
        pins = _extra_pins(source, extra)
        if _lacks(python, pins):
            _pip_install(python, pins)
    launcher = launcher_path(venv)
    if os.name == "nt":
        launcher.write_text(f'@"{python}" -P -m agentmem %*\r\n', encoding="utf-8")
    else:
        # A shell launcher, not a shebang to python: paths with spaces or over 127 bytes break shebangs.
        # -S: `site` runs only if a command needs more than this package (see agentmem/launch.py), so
        # the machine folder is set here rather than by the .pth file. -P: never import an
        # `agentmem` folder from the current directory instead of this one.
        start = (f"import os, sys; sys.path.insert(0, {str(purelib)!r}); "
                 f"os.environ.setdefault('AGENTMEM_HOME', {str(machine)!r}); "
                 "from agentmem.launch import main; raise SystemExit(main())")
        launcher.write_text(f'#!/bin/sh\nexec {shlex.quote(str(python))} -S -P -c {shlex.quote(start)} "$@"\n',
                            encoding="utf-8")
        launcher.chmod(0o755)
    return [str(launcher)]


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: python -I helper_venv.py MACHINE_FOLDER TEMPLATE_SOURCE")
    print(" ".join(install(Path(sys.argv[1]), Path(sys.argv[2]))))
