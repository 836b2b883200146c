"""Reading a file a user named (a spec, a fleet, a workflow, the config) without trusting it.

A path on the command line can name anything: `/dev/zero` never ends, `/dev/urandom` is not
text, a FIFO blocks `open()` until someone writes to it, and a 50 MB file is not a spec. So:

- the file is opened with `O_NONBLOCK` (a FIFO or a device opens at once instead of
  waiting) and `fstat`-ed on that descriptor (no race with a swap of the path), and anything
  but a regular file is refused before a byte is read;
- at most `limit + 1` bytes are read, whatever the size the file claims (a file that grows
  while it is read is caught too), and a larger file is refused.

`Unreadable.reason` is the sentence each front door shows (with its own file:line framing).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import TextIO

_CHUNK = 64 * 1024


class Unreadable(Exception):
    """The file cannot be read as text within the limit; `reason` says why, for a user."""

    def __init__(self, reason: str, *, hint: str | None = None, missing: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.hint = hint
        self.missing = missing


def kind_of(mode: int) -> str:
    """What a file that is not a regular one is, for a message ("a named pipe (FIFO)")."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def limit_text(limit: int) -> str:
    """1048576 → "1 MiB" (the wording of every size message)."""
    if limit % (1024 * 1024) == 0:
        return f"{limit // (1024 * 1024)} MiB"
    if limit % 1024 == 0:
        return f"{limit // 1024} KiB"
    return f"{limit} bytes"


def read_regular_bytes(
    path: str | os.PathLike[str],
    *,
    limit: int,
    what: str = "file",
    subject: str | None = None,
    own: bool = False,
) -> bytes:
    """The bytes of the regular file at `path` (symlinks followed), at most `limit` of them.

    Raises `Unreadable` for a missing file, a folder, a device, a FIFO, a socket, a file
    larger than `limit` and any OS error, each with a sentence saying which. `what` names
    the file ("spec file"), `subject` its content in the size message ("spec"). With `own`,
    a file of another user, or one that others may write, is refused too: what it says
    would steer npa (a config's `terraform_bin` runs as the user).
    """
    path = Path(path)
    subject = subject or what
    try:
        # A folder opens read-only too (never EISDIR): the fstat below names it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise Unreadable(
            f"{what} not found (looked for {path.absolute()})",
            hint="check the path; relative paths start from the current folder",
            missing=True,
        ) from None
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket, or a FIFO nobody could ever write to
            raise Unreadable(f"is a special file, not a {what}") from None
        raise Unreadable(f"cannot read {what}: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            folder = stat.S_ISDIR(info.st_mode)
            raise Unreadable(
                f"is {kind_of(info.st_mode)}, not a {what}",
                hint=None if folder else f"pass the path of a regular {what}",
            )
        if own:
            _refuse_foreign(info, what, path)
        if info.st_size > limit:
            raise Unreadable(f"{subject} is larger than {limit_text(limit)}", hint=_TOO_BIG_HINT)
        # A regular file never blocks; the flag only mattered for the open above.
        os.set_blocking(fd, True)
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # grew after fstat (or lied about its size)
                raise Unreadable(
                    f"{subject} is larger than {limit_text(limit)}", hint=_TOO_BIG_HINT
                )
        return b"".join(chunks)
    except OSError as exc:
        raise Unreadable(f"cannot read {what}: {exc.strerror}") from None
    finally:
        os.close(fd)


_TOO_BIG_HINT = "is this the right file?"


def not_only_yours(info: os.stat_result) -> str | None:
    """Why a file or folder with this status is not the user's alone to write, else None:
    another owner, or write permission for others, or for a group with anyone else in it
    (a group of the user's own, as a `umask 002` system makes, is the user alone)."""
    me = os.geteuid()
    mode = stat.S_IMODE(info.st_mode)
    if info.st_uid != me:
        return f"belongs to uid {info.st_uid}, not to you (uid {me})"
    if mode & 0o002 or (mode & 0o020 and not _own_group(info.st_gid)):
        return f"is writable by others (mode {mode:o})"
    return None


def _own_group(gid: int) -> bool:
    """Whether group `gid` is the user's own: their primary group, with no other member."""
    import grp
    import pwd

    if gid != os.getegid():
        return False
    try:
        members = set(grp.getgrgid(gid).gr_mem)
        name = pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return False
    return members <= {name}


def _refuse_foreign(info: os.stat_result, what: str, path: Path) -> None:
    why = not_only_yours(info)
    if why is None:
        return
    me = os.geteuid()
    raise Unreadable(
        f"the {what} {why}; npa uses only a {what} that nobody else can write (what it "
        "names runs as you)",
        hint=f"if it is yours: `chown {me} {path}` and `chmod go-w {path}`; otherwise copy "
        "what you need into a file of your own",
    )


def open_regular(path: str | os.PathLike[str]) -> TextIO:
    """`open(path, encoding="utf-8")` for a file read line by line (a log that may be
    large): a FIFO, device or folder is refused at once, as an `OSError` naming what it is,
    instead of blocking or never ending."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, f"{kind_of(info.st_mode)}, not a regular file", str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, encoding="utf-8", errors="replace")
    except BaseException:
        os.close(fd)
        raise


def read_regular_text(
    path: str | os.PathLike[str],
    *,
    limit: int,
    what: str = "file",
    subject: str | None = None,
    own: bool = False,
) -> str:
    """`read_regular_bytes` decoded as UTF-8 (`Unreadable` naming the first bad byte)."""
    raw = read_regular_bytes(path, limit=limit, what=what, subject=subject, own=own)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unreadable(f"{subject or what} is not UTF-8 text (byte {exc.start})") from None
