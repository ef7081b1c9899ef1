"""Bytecode for the checkout, whatever PYTHONDONTWRITEBYTECODE says (it is set on the 2-core boxes).

The suite starts the real CLI in many thousand child processes, each importing `agentmem` from this
checkout (PYTHONPATH). Without `__pycache__` each compiled every module it imported again (about
50 ms of a 90 ms call) until a child run with a clean environment happened to write that module's
bytecode. So the package (and bench/, which tests/test_bench_scripts.py runs) is byte-compiled once
here, in the first process (xdist's controller, before its workers start); later processes find it
current and only stat it. The same goes for pytest's own rewritten test modules, which it writes only
when writing bytecode is allowed: during collection it is (5 of the 6.3 CPU-s of every worker's
collection without the cache), and after it the setting is put back, so nothing a test imports from
its own folders leaves a `__pycache__` in them. Bytecode is a cache Python checks against each
source's mtime and size: no test sees other code because of it.
"""

import compileall
import sys
from pathlib import Path

pytest_plugins = ["tests.fixtures_core", "tests.fixtures_hub", "tests.fixtures_clis", "tests.fixtures_machines"]

_REPO = Path(__file__).resolve().parent.parent
_DONT_WRITE_BYTECODE = sys.dont_write_bytecode
sys.dont_write_bytecode = False  # until pytest_collection_finish: the test modules' rewritten bytecode
for _folder in ("agentmem", "bench"):
    compileall.compile_dir(_REPO / _folder, quiet=1)


def pytest_collection_finish(session):
    sys.dont_write_bytecode = _DONT_WRITE_BYTECODE
