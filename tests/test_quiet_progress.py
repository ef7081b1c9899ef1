"""Agents read stderr: a bucket save, a download and `bucket create`/`bucket verify` draw no progress bars
there unless stderr is a terminal (huggingface_hub draws hf_xet's upload bars on any stderr).
Real huggingface_hub and hf_xet against the loopback Hub, with HF_HUB_DISABLE_PROGRESS_BARS unset."""

from __future__ import annotations

import os
import subprocess

from tests.fixtures_hub import BucketMachine

NOBODY_CHOSE = {"HF_HUB_DISABLE_PROGRESS_BARS": None}  # as a user's environment has it


def drawn(text: str) -> list[str]:
    """Signs of a progress bar in `text`: terminal codes, tqdm's bar and its labels."""
    signs = ["\x1b[", "%|", "Processing Files", "New Data Upload", "Downloading", "Validating"]
    return [sign for sign in signs if sign in text]


def test_a_bucket_save_a_download_and_bucket_commands_write_no_progress_bars_to_a_pipe(hub, alice, alice_bucket,
                                                                                        tmp_path):
    writer = BucketMachine(tmp_path / "a", hub, alice)
    reader = BucketMachine(tmp_path / "b", hub, alice)
    saved = writer.run("save", "--title", "quiet", stdin="Saved without drawing on stderr.\n", env_change=NOBODY_CHOSE)
    assert saved.returncode == 0, saved.stderr
    found = reader.run("search", "quiet", "--json", env_change=NOBODY_CHOSE)  # downloads the note
    assert found.returncode == 0 and '"quiet"' in found.stdout, found.stderr
    created = writer.run("bucket", "create", "--bucket", "alice/second", env_change=NOBODY_CHOSE)
    verified = writer.run("bucket", "verify", env_change=NOBODY_CHOSE)
    assert created.returncode == 0 and verified.returncode == 0, (created.stderr, verified.stderr)
    for done in (saved, found, created, verified):
        assert drawn(done.stderr) == [] and done.stderr == "", done.stderr[:300]


def test_on_a_terminal_the_bars_are_still_drawn(hub, alice, alice_bucket, tmp_path):
    # the control: what the pipe is spared is really drawn, and only where a person watches
    writer = BucketMachine(tmp_path / "a", hub, alice)
    main, side = os.openpty()
    try:
        saved = writer.run("save", "--title", "watched", stdin="Saved while someone watches.\n",
                           env_change=NOBODY_CHOSE, stderr=side)
        os.close(side)
        side = -1
        shown = b""
        while True:
            try:
                piece = os.read(main, 65536)
            except OSError:  # EIO: the terminal's other side is closed and drained
                break
            if not piece:
                break
            shown += piece
    finally:
        os.close(main)
        if side >= 0:
            os.close(side)
    assert saved.returncode == 0
    assert "Processing Files" in drawn(shown.decode("utf-8", "replace"))


def test_a_user_who_asked_for_the_bars_gets_them(hub, alice, alice_bucket, tmp_path):
    writer = BucketMachine(tmp_path / "a", hub, alice)
    saved = writer.run("save", "--title", "asked", stdin="The user wants bars.\n",
                       env_change={"HF_HUB_DISABLE_PROGRESS_BARS": "0"}, stderr=subprocess.PIPE)
    assert saved.returncode == 0 and "Processing Files" in drawn(saved.stderr)
