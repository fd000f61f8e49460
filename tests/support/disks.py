"""Real file systems that fail: a tmpfs mounted over a directory (`mount`, `unmount`: needs root, else the test
is skipped) and a fresh ext4 file system on a loop device (`loop_disk`, a fixture registered by tests/conftest.py;
it fails instead of skipping where FAIRDICE_REQUIRE_LOOP is set)."""

from __future__ import annotations

import fcntl
import os
import shutil
import struct
import subprocess
import time
from pathlib import Path

import pytest


EXT4_IOC_SHUTDOWN = 0x8004587D  # _IOR('X', 125, __u32)
EXT4_GOING_FLAGS_NOLOGFLUSH = 2  # as a disk that stops: nothing more is written, not even the journal


def requirement_missing(reason: str):
    """Skip, or fail where FAIRDICE_REQUIRE_LOOP is set (CI runs as root on a machine with loop devices)."""
    if os.environ.get("FAIRDICE_REQUIRE_LOOP"):
        pytest.fail(f"{reason}, and FAIRDICE_REQUIRE_LOOP is set")
    pytest.skip(reason)


def run(*command, check=True) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=check)


class LoopDisk:
    """An ext4 file system (errors=remount-ro) on a loop device over a file, mounted at `mount_point`."""

    def __init__(self, image: Path, mount_point: Path):
        self.image, self.mount_point = image, mount_point
        self.device = run("losetup", "--find", "--show", str(image)).stdout.strip()
        self.mounted = False

    def mount(self) -> None:
        run("mount", "-t", "ext4", "-o", "errors=remount-ro", self.device, str(self.mount_point))
        self.mounted = True

    def fail(self, how: str) -> None:
        """`remount-ro`: the error ext4 reacts to by refusing every write from then on (as when it finds its
        metadata damaged); `shutdown`: the file system stops, every I/O failing (as a disk that died)."""
        if how == "remount-ro":
            trigger = Path("/sys/fs/ext4") / Path(self.device).name / "trigger_fs_error"
            if not trigger.exists():
                requirement_missing(f"this kernel has no {trigger}")
            trigger.write_text("1\n")
        else:
            fd = os.open(self.mount_point, os.O_RDONLY)
            try:
                fcntl.ioctl(fd, EXT4_IOC_SHUTDOWN, struct.pack("I", EXT4_GOING_FLAGS_NOLOGFLUSH))
            finally:
                os.close(fd)

    def repair(self, within: float = 30.0) -> None:
        """What an operator does: unmount (which works only once nothing holds a file open there), check the
        file system, mount it again."""
        deadline = time.monotonic() + within
        while (done := run("umount", str(self.mount_point), check=False)).returncode:
            assert time.monotonic() < deadline, f"cannot unmount: {done.stderr.strip()}"
            time.sleep(0.1)
        self.mounted = False
        checked = run("e2fsck", "-f", "-y", self.device, check=False)
        assert checked.returncode in (0, 1), checked.stdout + checked.stderr  # (1: errors corrected)
        self.mount()

    def close(self) -> None:
        if self.mounted:
            run("umount", "-l", str(self.mount_point), check=False)
        run("losetup", "-d", self.device, check=False)


@pytest.fixture
def loop_disk(tmp_path):
    """A fresh 96 MiB ext4 file system on a loop device, mounted (needs root and loop devices)."""
    if os.geteuid() != 0:
        requirement_missing("a loop device needs root")
    missing = [tool for tool in ("losetup", "mkfs.ext4", "e2fsck", "mount", "umount") if not shutil.which(tool)]
    if missing:
        requirement_missing(f"{', '.join(missing)} not installed")
    image, mount_point = tmp_path / "disk.img", tmp_path / "mnt"
    mount_point.mkdir()
    with open(image, "wb") as file:
        file.truncate(96 << 20)
    run("mkfs.ext4", "-q", "-F", str(image))
    try:
        disk = LoopDisk(image, mount_point)
    except subprocess.CalledProcessError as exc:
        requirement_missing(f"no loop device ({exc.stderr.strip()})")
    try:
        disk.mount()
        yield disk
    finally:
        disk.close()


def mount(*args) -> None:
    done = subprocess.run(["mount", *args], capture_output=True, text=True)
    if done.returncode:
        pytest.skip(f"cannot mount here ({done.stderr.strip()}): needs root")


def unmount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], check=True, capture_output=True)
