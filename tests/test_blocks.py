"""The managed instruction block: user bytes kept, idempotent, malformed markers refused."""

from __future__ import annotations

import pytest

from agentmem.errors import InvalidInput
from agentmem.machine import blocks

BODY = "Use the agent-memory skill.\nSearch before relying on memory."


def read_block(path):
    """The body of our block in the file at `path` (through a link), or None if there is none."""
    target = path.resolve()
    current = target.read_text() if target.exists() else None
    span = blocks.find_block(current, where=str(path)) if current is not None else None
    if span is None:
        return None
    return current[span[0]:span[1]].split("\n", 1)[1].rsplit(blocks.END, 1)[0].rstrip("\n")


def test_missing_file_is_created_with_only_the_block(tmp_path):
    target = tmp_path / "deep" / "AGENTS.md"
    assert blocks.apply_block(target, BODY) is True
    assert target.read_text() == f"{blocks.BEGIN}\n{BODY}\n{blocks.END}\n"


@pytest.mark.parametrize(
    "user_text",
    ["# Mine\n\nKeep this.\n", "no trailing newline", "crlf line\r\nsecond\r\n", "  \n\n\ttabs  \n\n"],
)
def test_user_text_before_the_block_is_kept_byte_for_byte(tmp_path, user_text):
    # INV outside-untouched
    target = tmp_path / "AGENTS.md"
    target.write_bytes(user_text.encode())
    blocks.apply_block(target, BODY)
    data = target.read_bytes().decode()
    assert data.startswith(user_text)
    assert read_block(target) == BODY


def test_applying_twice_changes_nothing_the_second_time(tmp_path):
    # INV idempotent-apply
    target = tmp_path / "CLAUDE.md"
    target.write_text("mine\n")
    assert blocks.apply_block(target, BODY) is True
    first = target.read_bytes()
    mtime = target.stat().st_mtime_ns
    assert blocks.apply_block(target, BODY) is False
    assert target.read_bytes() == first and target.stat().st_mtime_ns == mtime


def test_a_new_body_replaces_only_the_text_between_the_markers(tmp_path):
    # INV outside-untouched
    target = tmp_path / "AGENTS.md"
    before, after = "# top\nuser line\n", "\n## after\nmore user text\n"
    target.write_text(f"{before}{blocks.BEGIN}\nold body\n{blocks.END}\n{after}")
    assert blocks.apply_block(target, "new body") is True
    assert target.read_text() == f"{before}{blocks.BEGIN}\nnew body\n{blocks.END}\n{after}"


def test_apply_then_remove_restores_the_users_file_exactly(tmp_path):
    # INV outside-untouched
    target = tmp_path / "AGENTS.md"
    original = b"# Rules\n\nBe brief.\n"
    target.write_bytes(original)
    blocks.apply_block(target, BODY)
    assert blocks.remove_block(target) is True
    assert target.read_bytes() == original
    assert blocks.remove_block(target) is False


def test_removing_from_a_missing_file_creates_nothing(tmp_path):
    assert blocks.remove_block(tmp_path / "AGENTS.md") is False
    assert not (tmp_path / "AGENTS.md").exists()


@pytest.mark.parametrize(
    "text",
    [
        f"x\n{blocks.BEGIN}\nbody\n",
        f"x\n{blocks.END}\n",
        f"{blocks.BEGIN}\na\n{blocks.END}\n{blocks.BEGIN}\nb\n{blocks.END}\n",
        f"{blocks.END}\n{blocks.BEGIN}\n",
    ],
    ids=["begin-without-end", "end-without-begin", "duplicated", "reversed"],
)
def test_malformed_markers_are_refused_and_the_file_is_untouched(tmp_path, text):
    # INV outside-untouched
    target = tmp_path / "AGENTS.md"
    target.write_text(text)
    with pytest.raises(InvalidInput, match="nothing was changed"):
        blocks.apply_block(target, BODY)
    with pytest.raises(InvalidInput):
        blocks.remove_block(target)
    assert target.read_text() == text


def test_a_marker_mentioned_inside_a_line_is_not_taken_for_ours(tmp_path):
    target = tmp_path / "AGENTS.md"
    text = f"The marker `{blocks.BEGIN}` is managed by agentmem.\n"
    target.write_text(text)
    blocks.apply_block(target, BODY)
    assert target.read_text().startswith(text)
    assert read_block(target) == BODY


def test_a_symlinked_instruction_file_stays_a_symlink(tmp_path):
    real = tmp_path / "dotfiles" / "AGENTS.md"
    real.parent.mkdir()
    real.write_text("mine\n")
    link = tmp_path / "AGENTS.md"
    link.symlink_to(real)
    blocks.apply_block(link, BODY)
    assert link.is_symlink()
    assert real.read_text().startswith("mine\n") and read_block(real) == BODY


def test_file_mode_is_kept(tmp_path):
    target = tmp_path / "AGENTS.md"
    target.write_text("mine\n")
    target.chmod(0o600)
    blocks.apply_block(target, BODY)
    assert target.stat().st_mode & 0o777 == 0o600


FENCED = [
    pytest.param("```\n{begin}\nexample\n{end}\n```\n", id="backtick-fence"),
    pytest.param("~~~markdown\n{begin}\nexample\n{end}\n~~~\n", id="tilde-fence-with-info"),
    pytest.param("  ````\n{begin}\n```\n{end}\n````\n", id="longer-fence-not-closed-by-a-shorter-one"),
    pytest.param("Some text:\n\n    {begin}\n    example\n    {end}\n", id="indented-code-block"),
    pytest.param("- item\n\n\t{begin}\n\t{end}\n", id="tab-indented"),
]


@pytest.mark.parametrize("user_text", FENCED)
def test_markers_inside_the_users_code_block_are_kept_as_the_users_text(tmp_path, user_text):
    # INV outside-untouched: an example of our markers in the user's code is not our block
    target = tmp_path / "AGENTS.md"
    text = "# How agentmem marks its block\n\n" + user_text.format(begin=blocks.BEGIN, end=blocks.END)
    target.write_text(text)
    assert read_block(target) is None
    assert blocks.apply_block(target, BODY) is True
    assert target.read_text().startswith(text)
    assert read_block(target) == BODY
    assert blocks.apply_block(target, BODY) is False  # INV idempotent-apply
    assert blocks.remove_block(target) is True
    assert target.read_text() == text


def test_our_block_after_the_users_code_example_is_found_and_replaced(tmp_path):
    target = tmp_path / "CLAUDE.md"
    example = f"```\n{blocks.BEGIN}\nexample\n{blocks.END}\n```\n"
    target.write_text(f"{example}\n{blocks.BEGIN}\nold body\n{blocks.END}\n")
    assert blocks.apply_block(target, "new body") is True
    assert target.read_text() == f"{example}\n{blocks.BEGIN}\nnew body\n{blocks.END}\n"


def test_a_file_ending_inside_an_unclosed_code_fence_is_refused_and_left_untouched(tmp_path):
    # Appended there, the block would be part of the user's code, and found again by nothing.
    target = tmp_path / "AGENTS.md"
    text = "# Notes\n\n```python\nprint('never closed')\n"
    target.write_text(text)
    with pytest.raises(InvalidInput, match="unclosed code fence.*line 3"):
        blocks.apply_block(target, BODY)
    assert target.read_text() == text


def test_a_dangling_symlinked_instruction_file_is_refused_and_nothing_is_created(tmp_path):
    # INV user-files: the link's target would be created wherever it points
    outside = tmp_path / "outside" / "deep" / "AGENTS.md"
    link = tmp_path / "home" / "AGENTS.md"
    link.parent.mkdir()
    link.symlink_to(outside)
    with pytest.raises(InvalidInput, match="symbolic link.*does not exist"):
        blocks.apply_block(link, BODY)
    assert not (tmp_path / "outside").exists() and link.is_symlink()


def test_an_instruction_file_below_a_dangling_symlinked_folder_is_refused(tmp_path):
    # INV user-files
    codex_home = tmp_path / "home" / ".codex"
    codex_home.parent.mkdir()
    codex_home.symlink_to(tmp_path / "dotfiles" / "codex")
    with pytest.raises(InvalidInput, match="symbolic link"):
        blocks.apply_block(codex_home / "AGENTS.md", BODY)
    assert not (tmp_path / "dotfiles").exists()


def test_a_read_only_instruction_file_is_left_alone_with_a_notice(tmp_path):
    # INV user-files: the user's 0444 means "do not edit", even for root
    from agentmem.errors import NoAccess

    target = tmp_path / "AGENTS.md"
    target.write_text("mine\n")
    target.chmod(0o444)
    with pytest.raises(NoAccess, match="read-only"):
        blocks.apply_block(target, BODY)
    assert target.read_text() == "mine\n" and target.stat().st_mode & 0o777 == 0o444


def test_a_read_only_file_that_already_holds_the_block_is_not_an_error(tmp_path):
    target = tmp_path / "AGENTS.md"
    blocks.apply_block(target, BODY)
    target.chmod(0o444)
    assert blocks.apply_block(target, BODY) is False
