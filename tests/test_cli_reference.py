"""docs/cli.md is generated from the parsers and the shape tables, and never drifts from them."""

from __future__ import annotations

from agentmem.cli import reference
from tests.fixtures_core import REPO


def test_docs_cli_md_is_what_the_generator_renders_now():
    rendered = reference.render()
    current = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert current == rendered, "docs/cli.md is stale: run `python -m agentmem.cli.reference > docs/cli.md`"


def test_the_reference_lists_every_command_exit_status_and_config_key():
    text = reference.render()
    for name in reference.main.COMMANDS:
        assert f"### `agentmem {name}`" in text
    for code in reference.errors.EXIT_MEANINGS:
        assert f"| {code} |" in text
    assert "| [network] | `timeout` | `20` |" in text


def test_the_readme_links_the_reference_instead_of_copying_its_tables():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "docs/cli.md" in readme
    assert "| 11 | the store answered with an error" not in readme  # the exit table lives in docs/cli.md only
