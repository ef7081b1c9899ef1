"""Which store setup chose, and who can reach it."""

from __future__ import annotations

from agentmem.machine.reach import filesystem_type, store_reach
from agentmem.store.base import StoreDescription

MOUNTS = """\
/dev/sda1 / ext4 rw,relatime 0 0
tmpfs /tmp tmpfs rw 0 0
fileserver:/export/team /mnt/team nfs4 rw,vers=4.2 0 0
//nas/share /mnt/nas\\040drive cifs rw 0 0
me@box:/srv /home/me/remote fuse.sshfs rw 0 0
"""


def _mounts(tmp_path):
    path = tmp_path / "mounts"
    path.write_text(MOUNTS)
    return str(path)


def test_the_longest_mount_point_names_the_file_system_even_for_a_folder_not_created_yet(tmp_path):
    mounts = _mounts(tmp_path)
    assert filesystem_type("/mnt/team/agent-memory/not-yet", mounts) == "nfs4"
    assert filesystem_type("/mnt/nas drive/memory", mounts) == "cifs"  # \040 in the table is a space
    assert filesystem_type("/mnt/teamwork", mounts) == "ext4"  # directory boundaries, not prefixes
    assert filesystem_type("/tmp/x", str(tmp_path / "no-such-table")) is None


def test_a_folder_on_a_network_file_system_is_reachable_by_machines_that_mount_it(tmp_path):
    mounts = _mounts(tmp_path)
    for where, fs in (("/mnt/team/memory", "nfs4"), ("/home/me/remote/memory", "fuse.sshfs")):
        reach = store_reach(StoreDescription("folder", where), mounts)
        assert reach["reach"] == "network-folder" and f"({fs}): machines that mount it reach" in reach["summary"]


def test_a_folder_on_a_local_disk_or_in_memory_is_reachable_by_this_machine_only(tmp_path):
    mounts = _mounts(tmp_path)
    local = store_reach(StoreDescription("folder", "/home/me/agent-memory"), mounts)
    assert local["reach"] == "this-machine" and "only this machine reaches these notes" in local["summary"]
    assert "unless the folder is shared or synced" in local["summary"]
    memory = store_reach(StoreDescription("folder", "/tmp/agent-memory"), mounts)
    assert memory["reach"] == "this-machine" and "emptied at every restart" in memory["summary"]


def test_a_bucket_is_reachable_by_every_machine_logged_in_with_access():
    reach = store_reach(StoreDescription("bucket", "alice/agent-memory"))
    assert reach == {"kind": "bucket", "location": "alice/agent-memory", "reach": "bucket",
                     "summary": reach["summary"]}
    assert "private Hugging Face bucket alice/agent-memory" in reach["summary"]
