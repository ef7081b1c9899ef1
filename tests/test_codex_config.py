"""Managed entries in Codex's config.toml: added beside the user's settings, removed exactly."""

from __future__ import annotations

import pytest

from agentmem.errors import InvalidInput
from agentmem.machine import codex_config

USER = """# my codex settings
model = "o4"   # keep this comment

[sandbox_workspace_write]
writable_roots = ["/home/me/scratch"]

[mcp_servers.other]
command = "other-server"
"""


@pytest.fixture
def files(tmp_path):
    machine = tmp_path / "machine"
    machine.mkdir()
    config = tmp_path / "codex" / "config.toml"
    config.parent.mkdir()
    return machine, config


def test_a_managed_table_is_added_and_removed_leaving_the_users_file_byte_for_byte(files):
    # INV outside-untouched
    machine, config = files
    config.write_text(USER)
    change = codex_config.set_table(machine, config, "mcp_servers.agentmem", {"command": "/abs/agentmem", "args": ["mcp"]})
    assert change.changed
    assert codex_config.read_table(config, "mcp_servers.agentmem") == {"command": "/abs/agentmem", "args": ["mcp"]}
    assert codex_config.read_table(config, "mcp_servers.other") == {"command": "other-server"}
    assert "# keep this comment" in config.read_text()
    assert not codex_config.set_table(machine, config, "mcp_servers.agentmem",
                                      {"command": "/abs/agentmem", "args": ["mcp"]}).changed
    assert codex_config.remove_table(machine, config, "mcp_servers.agentmem").changed
    assert config.read_text() == USER
    assert not (machine / codex_config.STATE_FILE).exists()


def test_list_items_are_added_beside_the_users_and_only_ours_are_removed(files):
    # INV outside-untouched
    machine, config = files
    config.write_text(USER)
    codex_config.add_list_items(machine, config, "sandbox_workspace_write.writable_roots", ["/m", "/home/me/scratch"])
    text = config.read_text()
    assert '"/home/me/scratch"' in text and '"/m"' in text
    codex_config.remove_list_items(machine, config, "sandbox_workspace_write.writable_roots")
    assert config.read_text() == USER  # the user's own item, already there before, stays


def test_tables_agentmem_created_go_again_when_empty(files):
    machine, config = files
    codex_config.set_table(machine, config, "mcp_servers.agentmem", {"command": "/abs/agentmem"})
    codex_config.add_list_items(machine, config, "sandbox_workspace_write.writable_roots", ["/m"])
    codex_config.remove_table(machine, config, "mcp_servers.agentmem")
    codex_config.remove_list_items(machine, config, "sandbox_workspace_write.writable_roots")
    assert config.read_text().strip() == ""


def test_a_table_of_the_users_with_our_name_is_not_removed_unless_we_set_it(files):
    machine, config = files
    config.write_text('[mcp_servers.agentmem]\ncommand = "mine"\n')
    assert not codex_config.remove_table(machine, config, "mcp_servers.agentmem").changed
    assert config.read_text() == '[mcp_servers.agentmem]\ncommand = "mine"\n'


def test_a_malformed_config_is_refused_and_left_as_it_was(files):
    machine, config = files
    config.write_text("model = \n[broken\n")
    with pytest.raises(InvalidInput, match="not valid TOML"):
        codex_config.set_table(machine, config, "mcp_servers.agentmem", {"command": "x"})
    assert config.read_text() == "model = \n[broken\n"


def test_a_symlinked_config_is_written_in_its_target(files, tmp_path):
    machine, config = files
    target = tmp_path / "dotfiles" / "codex.toml"
    target.parent.mkdir()
    target.write_text(USER)
    config.symlink_to(target)
    codex_config.set_table(machine, config, "mcp_servers.agentmem", {"command": "/abs/agentmem"})
    assert config.is_symlink()
    assert "mcp_servers.agentmem" in target.read_text()
