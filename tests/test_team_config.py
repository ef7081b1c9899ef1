"""config.toml's `[team]` and `author` (issue X, item 1): a team store beside the member's own, and a
config scoped to either, so every library call works on the team's store unchanged."""

from __future__ import annotations

import pytest

from agentmem import config
from agentmem.errors import InvalidInput, NotConfigured
from agentmem.store.base import StoreDescription


def _cfg(tmp_path, **data):
    base = {"store": {"kind": "folder", "location": str(tmp_path / "own")}}
    return config.Config(str(tmp_path / "config.toml"), base | data)


def test_a_machine_without_a_team_has_only_its_personal_scope(tmp_path):
    cfg = _cfg(tmp_path)
    assert cfg.team is None and cfg.scopes() == ["personal"] and cfg.scope == "personal"
    with pytest.raises(NotConfigured, match="no team store configured") as info:
        cfg.scoped("team")
    assert info.value.hint is not None  # the way to add one, as data


def test_a_team_scoped_config_names_the_team_store_and_keeps_everything_else(tmp_path):
    cfg = _cfg(tmp_path, team={"kind": "bucket", "location": "acme/team-memory"}, agent="codex@a",
               projects={"/w/app": "app"}, author="ada")
    team = cfg.scoped("team")
    assert cfg.scopes() == ["personal", "team"]
    assert team.store == StoreDescription("bucket", "acme/team-memory") and team.scope == "team"
    assert cfg.store == StoreDescription("folder", str(tmp_path / "own")) and cfg.scope == "personal"
    assert (team.agent, team.projects, team.author) == ("codex@a", {"/w/app": "app"}, "ada")
    assert team.scoped("team") is team and cfg.scoped("personal") is cfg
    assert team.store.key != cfg.store.key  # its own cache folder on this machine


@pytest.mark.parametrize("team, message", [
    ({"kind": "bucket"}, r"\[team\] needs kind"),
    ({"kind": "folder", "location": "rel/dir"}, r"absolute path \(\[team\]\)"),
    ("acme/team-memory", r"\[team\] must be a table"),
])
def test_a_malformed_team_table_is_one_clear_error(tmp_path, team, message):
    with pytest.raises(InvalidInput, match=message):
        _ = _cfg(tmp_path, team=team).team


def test_the_team_store_may_not_be_the_members_own(tmp_path):
    cfg = _cfg(tmp_path, team={"kind": "folder", "location": str(tmp_path / "own")})
    with pytest.raises(InvalidInput, match="same store"):
        _ = cfg.team


def test_an_author_with_spaces_is_refused(tmp_path):
    assert _cfg(tmp_path).author == ""
    with pytest.raises(InvalidInput, match="invalid author"):
        _ = _cfg(tmp_path, author="Ada Lovelace").author
