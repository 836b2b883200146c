"""Editing a user's file in place (`set`, the wizard's save) without losing anything.

- A symlink is edited at its target: the link stays a link, the file it names changes.
- The file keeps its mode and owner (a 0600 spec stays 0600); the replacement is written
  beside the target and renamed over it (atomic: a reader sees the old or the new file).
- Two npa editors of one file take turns: `editing()` holds an flock on the target from
  before the read until after the write, so concurrent `set`s both land, one after the other.
- Anyone else (an editor, a script) is caught by comparing: right before the rename, the
  file on disk must still hold exactly the bytes that were read; if not, nothing is written
  and `FileChanged` says so (exit 2).

The flock is taken on the target file itself (no lock file next to the user's spec). An
atomic rename gives the path a new inode, so after the lock is granted the path is checked to
still name the locked inode; if not, the new file is locked instead.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from npa_sop_tui.errors import UsageError

LOCK_WAIT = 15.0  # seconds another npa editor may hold the file before we give up


class FileChanged(UsageError):
    """The file changed on disk between reading and writing; nothing was written."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path}: not written: the file changed on disk since it was read "
            "(another editor or command saved it)",
            hint="run the command again: it reads the file as it is now",
        )


class FileBusy(UsageError):
    """Another npa process keeps the file locked for editing."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path}: another npa command has been editing this file for {LOCK_WAIT:.0f} s",
            hint="wait for it to finish, then run the command again",
        )


def edit_target(path: str | os.PathLike[str]) -> Path:
    """The file an edit of `path` changes: a symlink's final target, else `path` itself."""
    return Path(os.path.realpath(path))


class CannotEdit(UsageError):
    """The path cannot be opened as a file to edit (a socket, a symlink loop, a name too
    long, no permission …); nothing was read or written."""

    def __init__(self, path: Path, error: OSError) -> None:
        super().__init__(
            f"{path}: cannot open it to edit: {error.strerror or error}",
            hint=_EDIT_HINTS.get(error.errno or 0, "pass the path of a spec file you can read"),
        )


_EDIT_HINTS = {
    errno.ENXIO: "it is a socket or a device, not a file: pass the path of a spec file",
    errno.ELOOP: "it is a symlink that leads back to itself: fix the link, or pass the file",
    errno.ENAMETOOLONG: "the name is longer than the filesystem allows: check the path",
    errno.EACCES: "you may not read it: check its permissions",
}


def _lock_current(target: Path, deadline: float) -> int | None:
    """An open descriptor of the file now at `target`, flocked; None when it does not exist;
    `CannotEdit` when it cannot be opened as a file."""
    while True:
        try:
            fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise CannotEdit(target, exc) from None
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise FileBusy(target) from None
                    time.sleep(0.02)
            try:
                same = os.stat(target).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # replaced while we waited: lock the file that is there now


@contextlib.contextmanager
def editing(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold the edit lock of `path`'s target for the block (read, change, write in it);
    yields the target. A missing file is not locked (there is nothing to lose)."""
    target = edit_target(path)
    fd = _lock_current(target, time.monotonic() + LOCK_WAIT)
    try:
        yield target
    finally:
        if fd is not None:
            os.close(fd)  # drops the flock


def replace_checked(path: str | os.PathLike[str], data: bytes, *, expected: bytes | None) -> Path:
    """Replace the target of `path` with `data`, keeping its mode and owner; when `expected`
    is given, the file must still hold exactly those bytes (else `FileChanged`, nothing
    written). Returns the target written."""
    from npa_sop_tui.home.bounded_read import Unreadable, read_regular_bytes
    from npa_sop_tui.home.fsutil import atomic_write_bytes

    target = edit_target(path)
    try:
        info: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        info = None

    def unchanged() -> None:
        if expected is None:
            return
        try:
            now = read_regular_bytes(target, limit=len(expected) + 1)
        except Unreadable:
            raise FileChanged(target) from None
        if now != expected:
            raise FileChanged(target)

    mode = 0o644 if info is None else info.st_mode & 0o7777
    owner = None if info is None else (info.st_uid, info.st_gid)
    try:
        atomic_write_bytes(target, data, mode=mode, owner=owner, before_replace=unchanged)
    except OSError as exc:  # a read-only folder, a full quota …: the old file is intact
        raise UsageError(
            f"{target}: not written: {exc.strerror}",
            hint="check that its folder is writable for you; the file is unchanged",
        ) from None
    return target
