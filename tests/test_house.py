"""The house rules a reader relies on: invariants proven, modules listed, small, and light to import."""

from __future__ import annotations

import argparse
import ast
import io
import re
import tokenize

from tests.fixtures_core import REPO

PACKAGE = REPO / "agentmem"


def _modules():
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_invariant_is_cited_by_at_least_one_test():
    names = re.findall(r"^- \*\*([a-z0-9-]+)\*\*:", (REPO / "docs" / "INVARIANTS.md").read_text(), re.M)
    assert len(names) >= 10
    tests = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "tests").glob("*.py"))
    uncited = [n for n in names if not re.search(rf"INV {re.escape(n)}\b", tests)]
    assert uncited == [], f"invariants no test cites: {uncited}"


def test_every_invariant_a_test_or_module_cites_is_named_in_the_invariants_document():
    # A citation of a name the document no longer holds (renamed, merged, mistyped) proves nothing a reader can find.
    names = set(re.findall(r"^- \*\*([a-z0-9-]+)\*\*:", (REPO / "docs" / "INVARIANTS.md").read_text(), re.M))
    sources = sorted((REPO / "tests").glob("*.py")) + _modules()
    cited = {(str(p.relative_to(REPO)), n) for p in sources
             for n in re.findall(r"\bINV ([a-z][a-z0-9-]*[a-z0-9])", p.read_text(encoding="utf-8"))}
    assert sorted((path, n) for path, n in cited if n not in names) == []


def test_every_module_appears_in_the_architecture_document():
    text = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    missing = [str(p.relative_to(PACKAGE)) for p in _modules()
               if p.name != "__init__.py" and f"`{p.relative_to(PACKAGE)}`" not in text]
    assert missing == [], f"modules missing from docs/ARCHITECTURE.md: {missing}"


def test_no_module_is_longer_than_one_sitting():
    long = [(str(p.relative_to(REPO)), n) for p in _modules() if (n := len(p.read_text().splitlines())) > 500]
    assert long == []


def test_package_init_files_are_empty_so_importing_a_subpackage_costs_nothing():
    assert [str(p) for p in PACKAGE.rglob("__init__.py") if p.read_text().strip()] == []


def test_the_package_imports_itself_by_absolute_name_only():
    # A relative import changes meaning when a module moves between subpackages (search/encoder.py's
    # `from .errors import` did, and became a ModuleNotFoundError).
    relative = [f"{p.relative_to(REPO)}:{i}" for p in _modules()
                for i, line in enumerate(p.read_text().splitlines(), 1) if re.match(r"\s*from \.", line)]
    assert relative == []


# -- comments keep the why; dated figures live in docs/benchmarks.md ---------------------------------

_DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b(?!T\d)")  # a timestamp (`2026-12-01T09:00Z`) is data
_FIGURE = re.compile(r"\d(?:\.\d+)?\s?(?:ms|µs|us|s|min|[KMG]i?B|%|x)(?!\w)")
# Provenance, not a measurement: which CLI or library version a behaviour was checked against, and when.
_CHECKED = re.compile(r"\(?checked(?: with [^()\n]*?)?(?:,| on)? \(?20\d\d-\d\d-\d\d\)?", re.I)
# A string that starts a statement is a docstring (or stands where one would).
_STATEMENT_START = (tokenize.ENCODING, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)


def _comment_passages(path):
    """Each comment block (own-line comments on consecutive lines, or one trailing comment) and each
    docstring paragraph of a Python file, as one line of text."""
    passages, block, last_row, previous = [], [], -2, tokenize.NEWLINE
    for tok in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        own_line = tok.type == tokenize.COMMENT and tok.line.lstrip().startswith("#")
        if block and tok.type != tokenize.NL and not (own_line and tok.start[0] == last_row + 1):
            passages.append(" ".join(block))
            block = []
        if own_line:
            block.append(tok.string.lstrip("#").strip())
            last_row = tok.start[0]
        elif tok.type == tokenize.COMMENT:
            passages.append(tok.string.lstrip("#").strip())
        elif tok.type == tokenize.STRING and previous in _STATEMENT_START:
            text = tok.string.lstrip("rRbBuUfF").strip("\"'")
            passages.extend(" ".join(p.split()) for p in re.split(r"\n\s*\n", text))
        if tok.type not in (tokenize.COMMENT, tokenize.NL):
            previous = tok.type
    return passages + ([" ".join(block)] if block else [])


def _dated_figures(paths, root=REPO):
    found = []
    for path in paths:
        for passage in _comment_passages(path):
            plain = _CHECKED.sub("", passage)
            if _DATE.search(plain) and _FIGURE.search(plain):
                found.append(f"{path.relative_to(root)}: {passage[:120]}")
    return found


def _python_sources():
    return _modules() + sorted(p for folder in ("bench", "tests") for p in (REPO / folder).rglob("*.py")
                               if "__pycache__" not in p.parts)


def test_code_comments_carry_no_dated_measurements():
    # A figure beside its date ages where it stands: docs/benchmarks.md ("Figures once kept in code
    # comments") keeps it, and the comment keeps the reason.
    assert _dated_figures(_python_sources()) == []


def test_the_dated_measurement_check_tells_a_measurement_from_provenance_and_data(tmp_path):
    sample = tmp_path / "pkg" / "sample.py"
    sample.parent.mkdir()
    sample.write_text(
        '"""Checked with Codex 0.171.0 (2026-12-01); the limit is 20 s.\n\nMeasured 2026-11-30: 4.6 ms."""\n'
        "LIMIT = 20.0  # its hooks may run 20 s (checked with Claude Code 2.1.332, 2026-12-01)\n"
        "STAMP = '2026-12-01: 5 ms'  # a string the code uses is data\n"
        "# Seconds. A save takes about\n# 0.6 s (2026-11-30).\n"
        "WHEN = 1  # written as 2026-12-01T09:00:00Z, 3 ms\n",
        encoding="utf-8")
    found = _dated_figures([sample], tmp_path)
    assert found == ["pkg/sample.py: Measured 2026-11-30: 4.6 ms.",
                     "pkg/sample.py: Seconds. A save takes about 0.6 s (2026-11-30)."]


# -- library code names no flag of ours: an option is data (errors.Option), spelt by the front end ----------

# The front ends (and what documents them) spell flags; the hook entry parses its own arguments.
_FRONT_ENDS = ("cli/", "mcp/", "render.py", "shell.py", "hooks/dispatch.py")
# Where a flag in a string is the point: the exit-status table docs/cli.md shows, and the OpenCode plugin's
# source, which runs the hook command (a command line in a file we write, not a message).
_FLAG_ALLOWED = {("errors.py", "--replace"), ("runtimes/opencode.py", "--runtime")}


def _our_flags() -> set[str]:
    from agentmem.cli import main

    found: set[str] = set()

    def walk(parser: argparse.ArgumentParser) -> None:
        for action in parser._actions:
            found.update(o for o in action.option_strings if o.startswith("--"))
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    walk(sub)

    walk(main.build_parser())
    return found - {"--help", "--version"}


def _flags_in_strings(path, flags: set[str]) -> list[tuple[int, str, str]]:
    """(line, flag, text) of each string literal in `path` that names a flag inside words; a literal that
    is the flag alone is an argument of a Command (data), and docstrings are documentation."""
    pattern = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, sorted(flags, key=len, reverse=True)))
                         + r")(?![\w-])")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or id(node) in docstrings:
            continue
        if re.fullmatch(r"--[\w-]+(=.*)?", node.value, re.S):
            continue
        found += [(node.lineno, flag, node.value) for flag in pattern.findall(node.value)]
    return found


def test_library_code_names_no_flag_of_ours_in_a_string():
    # A flag baked into library words is one the MCP server cannot offer and the CLI cannot spell its own way:
    # library code names an option as data (errors.Option), and the front ends spell it (issue Y, item 1).
    flags = _our_flags()
    assert {"--redact", "--project", "--reason", "--refresh", "--mode"} <= flags
    named = [f"{rel}:{line}: {flag} in {text[:80]!r}" for p in _modules()
             if not (rel := str(p.relative_to(PACKAGE))).startswith(_FRONT_ENDS)
             for line, flag, text in _flags_in_strings(p, flags) if (rel, flag) not in _FLAG_ALLOWED]
    assert named == [], "library strings naming a flag of ours:\n" + "\n".join(named)


def test_the_flag_check_tells_words_naming_a_flag_from_a_command_argument(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        '"""Docs may say --redact."""\n'
        'STEP = Command("search", "--mode", "ranked", "--project=app")\n'
        'HINT = f"or search with --mode ranked in {project}"\n'
        'OTHER = "pass --redaction-level, not ours"\n', encoding="utf-8")
    assert [(line, flag) for line, flag, _ in _flags_in_strings(sample, {"--mode", "--redact", "--project"})] \
        == [(3, "--mode")]
