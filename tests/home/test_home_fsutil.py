"""fsutil: private folders, atomic writes that survive a full disk, temp-file sweeping."""

from __future__ import annotations

import os
import stat
import subprocess
import time
from pathlib import Path

import pytest

from npa_sop_tui.home import fsutil
from npa_sop_tui.home.fsutil import DiskFull, atomic_write_text, ensure_dir, sweep_temp_files

from testkit.disks import fill


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_folders_under_the_home_are_created_0700(npa_home: Path, tmp_path: Path) -> None:
    os.umask(0o022)
    deep = ensure_dir(npa_home / "soperator" / "demo" / "operations")
    for folder in (npa_home / "soperator", npa_home / "soperator" / "demo", deep):
        assert _mode(folder) == 0o700, folder
    outside = ensure_dir(tmp_path / "elsewhere" / "x")
    assert _mode(outside) == 0o755  # not ours to tighten


def test_existing_folders_keep_their_modes_and_new_ones_are_0700(npa_home: Path) -> None:
    """npa changes the mode of nothing it did not create: an existing folder under the home
    (the user's own, or another tool's) keeps its mode; the folders npa makes are 0700."""
    old = npa_home / "soperator" / "old"
    (old / ".terraform" / "providers").mkdir(parents=True)
    for folder in (npa_home, old.parent, old, old / ".terraform", old / ".terraform" / "providers"):
        folder.chmod(0o755)
    atomic_write_text(old / "operations" / "a.ndjson", "{}", mode=0o600)
    for folder in (npa_home, old.parent, old, old / ".terraform", old / ".terraform" / "providers"):
        assert _mode(folder) == 0o755, folder
    assert _mode(old / "operations") == 0o700  # made just now
    assert _mode(old / "operations" / "a.ndjson") == 0o600


def test_temp_files_of_gone_writers_are_swept(tmp_path: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    gone = tmp_path / f".inventory.json.{dead.pid}-abc123_x.tmp"
    live = tmp_path / f".inventory.json.{os.getpid()}-abc123_y.tmp"
    legacy_old = tmp_path / ".spec.yaml.k2j4h5g6.tmp"
    legacy_new = tmp_path / ".spec.yaml.a1b2c3d4.tmp"
    unrelated = tmp_path / ".hidden.tmp"
    for path in (gone, live, legacy_old, legacy_new, unrelated):
        path.write_text("x")
    os.utime(legacy_old, (time.time() - 7200, time.time() - 7200))
    removed = sweep_temp_files(tmp_path)
    assert set(removed) == {gone, legacy_old}
    assert live.exists() and legacy_new.exists() and unrelated.exists()


def test_a_failed_write_names_its_temp_file_and_removes_it(tmp_path: Path) -> None:
    folder = ensure_dir(tmp_path / "w")
    target = folder / "inventory.json"
    atomic_write_text(target, "old")

    class Boom(BaseException):
        pass

    real_replace = os.replace

    def failing_replace(src: str, dst: str) -> None:
        assert Path(src).name.startswith(f".inventory.json.{os.getpid()}-")
        raise Boom

    os.replace = failing_replace  # type: ignore[assignment]
    try:
        with pytest.raises(Boom):
            atomic_write_text(target, "new")
    finally:
        os.replace = real_replace
    assert target.read_text() == "old"
    assert list(folder.iterdir()) == [target]  # the temp file went with the failure


def test_disk_full_keeps_the_old_file_and_names_the_space(tiny_disk: Path) -> None:
    target = tiny_disk / "inventory.json"
    atomic_write_text(target, "previous")
    fill(tiny_disk)
    with pytest.raises(DiskFull) as caught:
        atomic_write_text(target, "x" * 100_000)
    assert target.read_text() == "previous"
    text = caught.value.render()
    assert f"cannot write {target}" in text and "0 B free" in text
    assert "needs at least 101.7 KiB" in text and "run the same command again" in text
    assert not [p for p in tiny_disk.iterdir() if p.suffix == ".tmp"]


def test_the_reserve_is_given_up_for_a_write_that_matters(tiny_disk: Path) -> None:
    reserve = fsutil.ensure_reserve(tiny_disk / ".npa-run")
    assert reserve is not None and reserve.stat().st_size == fsutil.RESERVE_BYTES
    assert _mode(reserve) == 0o600
    fill(tiny_disk)
    target = tiny_disk / "inventory.json"
    atomic_write_text(target, "recorded despite a full disk")
    assert target.read_text() == "recorded despite a full disk"
    assert not reserve.exists()
    assert fsutil.ensure_reserve(tiny_disk / ".npa-run") is None  # no room to take it back


def test_the_disk_full_message_measures_the_disk_the_write_lands_on(
    tiny_disk: Path, tmp_path: Path
) -> None:
    """A write replaces the path in its own folder: a link there to a file on another disk
    (or a file mounted from one) does not move it, so the free space and the mount named
    are those of the folder's disk, not of what the link points to."""
    elsewhere = tmp_path / "big-disk-file"
    elsewhere.write_text("on the test's disk")
    link = tiny_disk / "inventory.json"
    link.symlink_to(elsewhere)
    fill(tiny_disk)
    full = DiskFull(link, needed=4096)
    assert full.free == 0 and fsutil.free_bytes(link) == 0
    assert f"(0 B free on {tiny_disk};" in full.render()
    missing = tiny_disk / "new" / "deeper" / "state.json"  # folders not made yet
    assert fsutil.free_bytes(missing) == 0
