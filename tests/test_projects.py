"""Project resolution: the longest configured ancestor, on directory boundaries, never a guess."""

from __future__ import annotations

import os

import pytest

from agentmem import config
from agentmem.errors import InvalidInput, NotConfigured


def cfg_with(tmp_path, mapping: dict) -> config.Config:
    return config.Config(tmp_path / "config.toml", {"store": {"kind": "folder", "location": str(tmp_path / "s")},
                                                    "projects": mapping})


def test_subdirectories_resolve_to_the_nearest_configured_ancestor(tmp_path):
    # INV explicit-project
    outer, inner = tmp_path / "w", tmp_path / "w" / "libs" / "core"
    (inner / "src").mkdir(parents=True)
    cfg = cfg_with(tmp_path, {str(outer): "mono", str(inner): "core"})
    assert cfg.resolve_project(inner / "src") == "core"
    assert cfg.resolve_project(outer / "libs") == "mono"
    assert cfg.resolve_project(outer) == "mono"


def test_a_sibling_with_a_longer_name_is_not_inside_the_mapped_directory(tmp_path):
    # INV explicit-project: /w/app does not match /w/application
    (tmp_path / "w" / "app").mkdir(parents=True)
    (tmp_path / "w" / "application").mkdir()
    cfg = cfg_with(tmp_path, {str(tmp_path / "w" / "app"): "app"})
    with pytest.raises(NotConfigured) as exc:
        cfg.resolve_project(tmp_path / "w" / "application")
    assert "agentmem map" in exc.value.one_line()


def test_unmapped_directory_refuses_with_a_setup_hint(tmp_path):
    cfg = cfg_with(tmp_path, {})
    with pytest.raises(NotConfigured):
        cfg.resolve_project(tmp_path)


def test_a_symlinked_checkout_resolves_to_the_same_project(tmp_path):
    real = tmp_path / "src" / "app"
    real.mkdir(parents=True)
    link = tmp_path / "link-to-app"
    os.symlink(real, link)
    cfg = cfg_with(tmp_path, {str(real): "app"})
    assert cfg.resolve_project(link / ".") == "app"
    cfg2 = cfg_with(tmp_path, {str(link): "app"})  # mapped through the link, entered through the real path
    assert cfg2.resolve_project(real) == "app"


def test_explicit_project_must_be_configured(tmp_path):
    (tmp_path / "a").mkdir()
    cfg = cfg_with(tmp_path, {str(tmp_path / "a"): "alpha"})
    assert cfg.resolve_project(tmp_path, explicit="alpha") == "alpha"
    with pytest.raises(NotConfigured):
        cfg.resolve_project(tmp_path, explicit="beta")
    with pytest.raises(InvalidInput):
        cfg.resolve_project(tmp_path, explicit="../etc")


def test_map_keeps_the_users_comments_and_canonicalises_the_directory(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('# my machine\nagent = "me"  # who I am\n\n[store]\nkind = "folder"\n'
                                      f'location = "{tmp_path / "s"}"\n')
    work = tmp_path / "work" / "app"
    work.mkdir(parents=True)
    config.add_mapping(home, work / ".." / "app", "app")
    text = (home / "config.toml").read_text()
    assert "# my machine" in text and "# who I am" in text
    assert config.load(home).projects == {str(work.resolve()): "app"}


def test_malformed_config_is_reported_by_name_and_never_rewritten(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    original = b'agent = "me"\n[store\nkind = folder\n'
    (home / "config.toml").write_bytes(original)
    with pytest.raises(InvalidInput) as exc:
        config.load(home)
    assert "config.toml" in exc.value.one_line()
    with pytest.raises(InvalidInput):
        config.add_mapping(home, tmp_path, "app")
    assert (home / "config.toml").read_bytes() == original


def test_project_names_are_checked(tmp_path):
    for bad in ["", "A", "a/b", "..", "a b", "x" * 65]:
        with pytest.raises(InvalidInput):
            config.check_project_name(bad)


def test_an_edit_to_config_toml_is_seen_at_once_despite_the_parsed_copy(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('agent = "first"\n')
    config.load(home).keep_parsed_copy()
    assert (home / ".config-parsed.json").exists()
    assert config.load(home).data["agent"] == "first"  # served from the copy
    (home / "config.toml").write_text('agent = "second"\n')
    assert config.load(home).data["agent"] == "second"
    (home / ".config-parsed.json").write_text("{not json")
    assert config.load(home).data["agent"] == "second"  # a damaged copy is ignored
