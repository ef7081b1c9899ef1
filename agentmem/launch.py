"""Start the helper: what `python -m agentmem` and the installed launcher run.

Agents call the helper on every turn, so its start is kept short. The launcher
that setup installs (`machine/helper_venv.py`) starts Python with `-S`: no `site`
processing at start-up and no `runpy`, a few ms of every search (figures:
docs/benchmarks.md, "Figures behind choices in the code"). Most commands (search, read, save on a
folder store, hooks) need only the standard library and this package, which
the launcher puts on `sys.path` itself. The first import that finds nothing
there (huggingface_hub, tomlkit, copier, numpy) runs `site.main()`, the very
set-up `-S` skipped, and is looked up again, so every command sees the same
modules it would have seen with `site`.

The launcher passes its own absolute path to `main`, which records it
(`paths.started_by`): every printed command names it (`agentmem/shell.py`).
"""

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the start stays short
if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType


class SiteOnDemand:
    """A last-resort import finder: on its first miss, run the skipped `site` set-up and retry."""

    @classmethod
    def find_spec(cls, name: str, path: "Sequence[str] | None" = None,
                  target: "ModuleType | None" = None) -> "ModuleSpec | None":
        if name.partition(".")[0] in sys.stdlib_module_names:
            return None  # e.g. ntpath probing for `nt`: site adds nothing to the standard library
        if cls in sys.meta_path:
            sys.meta_path.remove(cls)
        import site

        site.main()
        for finder in list(sys.meta_path):  # finders a .pth file added are asked too
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find else None
            if spec is not None:
                return spec
        return None


def main(argv: list[str] | None = None, launcher: str | None = None) -> int:
    """The one entry point: the console script, `python -m agentmem` and the launcher all call this.

    `launcher`: the installed launcher's absolute path, which it passes itself.
    """
    argv = sys.argv[1:] if argv is None else argv
    if launcher:
        from agentmem import paths

        paths.started_by(launcher)
    if sys.flags.no_site and SiteOnDemand not in sys.meta_path:
        sys.meta_path.append(SiteOnDemand)
    if argv[:1] == ["hook"]:  # a runtime's hook: skip the full CLI's imports (see hooks/dispatch.py)
        from agentmem.hooks.dispatch import run_hook

        return run_hook(argv[1:])
    from agentmem.cli.main import run

    return run(argv)
