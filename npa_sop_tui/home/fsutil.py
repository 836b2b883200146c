"""Files npa writes: atomic, private, and safe when the disk fills up.

- Writes are atomic (temp file + rename): a failed write leaves the previous file intact.
  Temp files are named `.<name>.<pid>-<random>.tmp`; `sweep_temp_files` removes those whose
  writer is gone (a kill between create and rename leaves one behind).
- Under the npa home the rules of `home_files` hold: folders 0700, files 0600, no symlink
  followed (a symlinked folder on the way is refused; the rename replaces a link at the
  path itself, never its target), a read-only home is one clear `HomeReadOnly`.
- A full disk gives one `DiskFull` error naming the path and the space needed. Each
  installation keeps a small reserve file (`.npa-run/reserve`) that is given up at the first
  "no space left" so the last writes that matter (Terraform's state, the inventory record)
  still fit; it is re-created on the next run.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from npa_sop_tui.errors import OperationError, UsageError
from npa_sop_tui.home.files import (
    PRIVATE_DIR_MODE,
    SECRET_MODE,
    ensure_dir,
    private_mode,
    read_only,
)

__all__ = ["PRIVATE_DIR_MODE", "SECRET_MODE", "ensure_dir"]  # re-exported

RESERVE_NAME = "reserve"
RESERVE_BYTES = 2 * 1024 * 1024
_TEMP_WITH_PID = re.compile(r"^\..+\.(\d+)-[A-Za-z0-9_]+\.tmp$")
_TEMP_LEGACY = re.compile(r"^\..+\.[A-Za-z0-9_]{8}\.tmp$")  # before the pid was in the name
LEGACY_TEMP_AGE = 600.0  # seconds: older legacy temp files are abandoned


def _human(n: int | None) -> str:
    if n is None:
        return "unknown"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


class DiskFull(OperationError):
    """No space left where npa (or Terraform) had to write."""

    def __init__(self, path: Path | str, *, needed: int | None, free: int | None = None) -> None:
        path = Path(path)
        free = free_bytes(path) if free is None else free
        need = f"at least {_human(needed)}" if needed else "some space"
        super().__init__(
            f"disk full: cannot write {path} ({_human(free)} free on {_mount_of(path)}; "
            f"needs {need})",
            hint=f"free {need} on that disk (or move NPA_HOME), then run the same command "
            "again; the files written before are intact",
        )
        self.path = path
        self.needed = needed
        self.free = free

    def json_extra(self) -> dict[str, object]:
        return {"path": str(self.path), "needed_bytes": self.needed, "free_bytes": self.free}


def is_disk_full(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


def _holding_folder(path: Path) -> Path:
    """The folder a write of `path` lands in: `path` itself when it is a folder, else the
    nearest existing folder above it. Not the path's own target: a file there may be a
    link to another disk, or a mount of one, while the new file is made beside it."""
    path = Path(os.path.abspath(path))
    if path.is_dir() and not path.is_symlink():
        return path
    folder = path.parent
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    return folder


def free_bytes(path: Path | str) -> int | None:
    """Free bytes on the disk a write of `path` lands on (None when it cannot be told)."""
    try:
        return shutil.disk_usage(_holding_folder(Path(path))).free
    except OSError:
        return None


def _mount_of(path: Path) -> str:
    """Where the disk a write of `path` lands on is mounted (the mount named in messages)."""
    probe = _holding_folder(path).resolve()
    with contextlib.suppress(OSError):
        while not os.path.ismount(probe) and probe != probe.parent:
            probe = probe.parent
    return str(probe)


# ---------------------------------------------------------------------------------------------
# Atomic writes


def atomic_write_bytes(
    path: Path,
    data: bytes,
    *,
    mode: int = 0o644,
    owner: tuple[int, int] | None = None,
    before_replace: Callable[[], None] | None = None,
) -> None:
    """Write `data` to `path` via a temp file in the same folder and an atomic rename.

    The temp file is created with `mode` from the start, so a secret is never readable by
    others, not even for a moment; `owner` (uid, gid) is given to it before the rename (a
    `UsageError` when that is not allowed, nothing written). `before_replace` runs right
    before the rename and may raise to keep the old file. No space: the reserve on that disk
    is given up once and the write retried; then `DiskFull`, the previous file untouched.
    """
    path = Path(path)
    ensure_dir(path.parent)
    mode = private_mode(path, mode)
    for attempt in (1, 2):
        try:
            _write_once(path, data, mode, owner, before_replace)
            return
        except OSError as exc:
            if not is_disk_full(exc):
                problem = read_only(exc, path)
                if problem is None:
                    raise
                raise problem from None
            if attempt == 1 and release_reserve(path.parent):
                continue
            raise DiskFull(path, needed=len(data) + 4096) from None


def _write_once(
    path: Path,
    data: bytes,
    mode: int,
    owner: tuple[int, int] | None = None,
    before_replace: Callable[[], None] | None = None,
) -> None:
    fd, tmp = tempfile.mkstemp(
        prefix=f".{path.name}.{os.getpid()}-", suffix=".tmp", dir=path.parent
    )
    try:
        with os.fdopen(fd, "wb") as handle:
            if owner is not None and owner != (os.geteuid(), os.fstat(fd).st_gid):
                try:
                    os.fchown(fd, *owner)
                except PermissionError:
                    raise UsageError(
                        f"{path}: not written: it belongs to uid {owner[0]} gid {owner[1]}, "
                        "and a replacement could not keep that owner",
                        hint="edit it as its owner (or copy it and edit the copy)",
                    ) from None
            os.fchmod(fd, mode)  # after chown, which clears set-id bits
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if before_replace is not None:
            before_replace()
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str, *, mode: int = 0o644) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


# ---------------------------------------------------------------------------------------------
# Copies (a recipe into an installation folder, the stand-in recipe into the home)


def copy_file(source: Path, dest: Path) -> None:
    """`source`'s bytes at `dest` by an atomic replace: a symlink or hard link at `dest` is
    replaced, never written through, and under the home the copy is private (0600, or 0700
    for an executable) whatever the source's mode."""
    source, dest = Path(source), Path(dest)
    if dest.is_dir() and not dest.is_symlink():
        raise UsageError(
            f"{dest} is a folder where the recipe has a file",
            hint=f"remove it (`rm -r {dest}`); npa copies the recipe's file there",
        )
    atomic_write_bytes(dest, source.read_bytes(), mode=stat.S_IMODE(source.stat().st_mode))


def copy_tree(source: Path, dest: Path) -> None:
    """`cp -r source/. dest` through `copy_file` and `ensure_dir` (folders npa creates under
    the home are 0700; a symlinked folder on the way under the home is refused)."""
    source, dest = Path(source), Path(dest)
    ensure_dir(dest)
    for folder, dirs, files in os.walk(source, followlinks=True):  # as `cp -r` reads
        here = dest / Path(folder).relative_to(source)
        for name in sorted(dirs):
            ensure_dir(here / name)
        for name in sorted(files):
            copy_file(Path(folder) / name, here / name)


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _abandoned(entry: os.DirEntry[str], now: float) -> bool:
    """A temp file of an atomic write whose writer is gone (or, unnamed, long silent)."""
    if not entry.is_file(follow_symlinks=False):
        return False
    match = _TEMP_WITH_PID.match(entry.name)
    if match:
        return not _pid_alive(int(match.group(1)))
    if _TEMP_LEGACY.match(entry.name):
        return now - entry.stat(follow_symlinks=False).st_mtime >= LEGACY_TEMP_AGE
    return False


def sweep_temp_files(folder: Path | str) -> list[Path]:
    """Remove temp files of atomic writes whose writer is gone; returns what was removed."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        try:
            if _abandoned(entry, now):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            continue
    return removed


# ---------------------------------------------------------------------------------------------
# The disk reserve


_reserves: dict[int, Path] = {}  # st_dev -> reserve file on that device


def ensure_reserve(folder: Path) -> Path | None:
    """Keep `RESERVE_BYTES` allocated in `folder/reserve`; None when the disk is too full
    to spare it (the caller then has no reserve, nothing else changes)."""
    path = Path(folder) / RESERVE_NAME
    try:
        ensure_dir(folder)
        if path.is_file() and path.stat().st_size >= RESERVE_BYTES:
            _reserves[path.stat().st_dev] = path
            return path
        free = free_bytes(folder)
        if free is None or free < 4 * RESERVE_BYTES:
            return None
        fd, tmp = tempfile.mkstemp(
            prefix=f".{RESERVE_NAME}.{os.getpid()}-", suffix=".tmp", dir=folder
        )
        try:
            os.fchmod(fd, SECRET_MODE)
            try:
                os.posix_fallocate(fd, 0, RESERVE_BYTES)
            except OSError as exc:
                if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
                    raise
                os.write(fd, b"\0" * RESERVE_BYTES)  # no fallocate here: write it out
            os.close(fd)
            fd = -1
            os.replace(tmp, path)
        except BaseException:
            if fd >= 0:
                os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        _reserves[path.stat().st_dev] = path
        return path
    except OSError:
        return None


def release_reserve(near: Path | str) -> bool:
    """Give up the reserve on the disk holding `near`; True if space was freed."""
    try:
        dev = _holding_folder(Path(near)).stat().st_dev
    except OSError:
        return False
    path = _reserves.pop(dev, None)
    if path is None:
        return False
    try:
        path.unlink()
    except FileNotFoundError:
        return False  # the supervisor gave it up already: no new space from us
    except OSError:
        return False
    return True
