"""The npa home's files: how every folder and file under it is created, opened and locked.

The rules, in one place (`fsutil.atomic_write_*` applies them to every replacement):

- Folders npa creates are 0700 and files 0600 (an executable keeps its owner's x bit only):
  state, logs, keys and caches are nobody else's business. npa never changes the mode of a
  folder it did not create: `NPA_HOME` may point at a folder that holds other things (a
  `.git`, a shared sticky folder), and those keep their modes.
- The home, and every folder npa writes in below it, must be the user's own and writable by
  nobody else (`HomeNotYours`): another account that can write there could swap a file
  between npa's check and its write, and root must not write into another user's home.
- No link inside the home is followed when npa writes: a folder on the way that is a
  symlink, or a file opened for writing, appending, truncating or locking that is one, is
  refused with `HomeSymlink` (a planted `.lock` → `~/.bashrc` would otherwise be truncated);
  a file with a second hard link is refused with `HomeHardLink` (writing it would write the
  file outside the home that shares its inode). Files are opened with `O_NOFOLLOW`; the home
  folder itself may be a symlink (the user's own choice of where it lives).
- Only regular files are opened: a FIFO or a device planted where npa keeps a file is
  refused at once, never waited on.
- A home npa cannot write to (a read-only mount) is one `HomeReadOnly` error saying what to
  do (exit 2); commands that only read still work.

Nothing else in npa creates, replaces or opens for writing a path under the home: a test
(tests/home/test_home_files.py) scans the sources for direct writes.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home import paths
from npa_sop_tui.home.bounded_read import kind_of, not_only_yours

SECRET_MODE = 0o600
PRIVATE_DIR_MODE = 0o700
_WRITABLE_BY_OTHERS = 0o022  # group or other may write: they could swap what npa writes
_READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)
_WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


class HomeRefused(UsageError):
    """Something inside the npa home npa will not write through (a link, a file or folder
    of another user, a FIFO where a file belongs)."""

    def __init__(self, path: Path, message: str, hint: str) -> None:
        super().__init__(message, hint=hint)
        self.path = path

    def json_extra(self) -> dict[str, object]:
        return {"path": str(self.path)}


class HomeSymlink(HomeRefused):
    """A symlink inside the npa home where npa would write."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            path,
            f"{path} is a symlink inside the npa home; npa does not write through symlinks there",
            f"remove the link (`rm {path}`); npa creates what it needs, privately",
        )


class HomeHardLink(HomeRefused):
    """A file inside the npa home that shares its inode with another path."""

    def __init__(self, path: Path, links: int) -> None:
        super().__init__(
            path,
            f"{path} has {links} hard links; npa does not write a file inside the npa home "
            "that another path shares (the other path could be anywhere)",
            f"remove it (`rm {path}`); npa creates a file of its own there",
        )


class HomeNotYours(HomeRefused):
    """The home, or a folder or file npa would write in it, is another user's or writable
    by others."""

    def __init__(self, path: Path, why: str) -> None:
        home = _home()
        is_home = home is not None and Path(path).absolute() == home
        what = f"the npa home {path}" if is_home else f"{path} (inside the npa home)"
        super().__init__(
            path,
            f"{what} {why}; npa writes only into folders and files of its own user that "
            "nobody else can write",
            f"run npa as the owner, or `chmod go-w {path}` if it is yours, or point "
            f"{paths.NPA_HOME_ENV} at a folder of your own",
        )


class HomeNotRegular(HomeRefused):
    """A FIFO, socket or device where npa keeps a regular file."""

    def __init__(self, path: Path, kind: str) -> None:
        super().__init__(
            path,
            f"{path} is {kind}, not a file; npa does not open it",
            f"remove it (`rm {path}`); npa creates the file it needs",
        )


class HomeReadOnly(UsageError):
    """npa must write under its home and cannot."""

    def __init__(self, path: Path, reason: str) -> None:
        home = _home() or path
        super().__init__(
            f"the npa home {home} is not writable ({reason}: {path})",
            hint=f"make {home} writable for you, or point {paths.NPA_HOME_ENV} at a writable "
            "folder; commands that only read (list, status, validate) work as they are",
        )
        self.path = path

    def json_extra(self) -> dict[str, object]:
        return {"path": str(self.path)}


def _home() -> Path | None:
    try:
        return paths.npa_home().absolute()
    except Exception:  # a broken NPA_HOME is reported by whoever uses it
        return None


def under_home(path: Path | str) -> bool:
    """True if `path` is the npa home or inside it (lexically, as written)."""
    home = _home()
    path = Path(path).absolute()
    return home is not None and (path == home or home in path.parents)


def private_mode(path: Path | str, mode: int) -> int:
    """`mode` for a file at `path`: group and other bits dropped under the home."""
    return mode & PRIVATE_DIR_MODE if under_home(path) else mode


def read_only(exc: OSError, path: Path | str) -> HomeReadOnly | None:
    """The `HomeReadOnly` an OSError on a home path means, else None."""
    if exc.errno in _READ_ONLY and under_home(path):
        return HomeReadOnly(Path(path), exc.strerror or "not writable")
    return None


def refuse_symlinks(path: Path | str, *, owned: bool = False) -> None:
    """`HomeSymlink` when a component of `path` below the home is a symlink; with `owned`,
    also `HomeNotYours` when the home or an existing folder on the way (below the home) is
    another user's or writable by others (checked before npa writes there)."""
    home = _home()
    path = Path(path).absolute()
    if home is None or (path != home and home not in path.parents):
        return
    if owned:
        try:
            why = not_only_yours(home.stat())  # the home itself may be a symlink: followed
        except OSError:
            why = None  # missing: npa creates it; unreadable: the write says why
        if why:
            raise HomeNotYours(home, why)
    for part in reversed([p for p in (path, *path.parents) if home in p.parents]):
        try:
            info = part.lstat()
        except FileNotFoundError:
            return  # nothing below a missing folder exists either
        except OSError:
            return  # unreadable: the write that follows says why
        if stat.S_ISLNK(info.st_mode):
            raise HomeSymlink(part)
        why = not_only_yours(info) if owned and stat.S_ISDIR(info.st_mode) else None
        if why:
            raise HomeNotYours(part, why)


def ensure_dir(path: Path | str) -> Path:
    """`mkdir -p path`; under the npa home every folder npa creates is 0700, a symlink on the
    way is refused, and the home and the folders on the way must be the user's own and
    writable by nobody else. Existing folders keep their modes."""
    path = Path(path).absolute()
    home = _home()
    if home is None or (path != home and home not in path.parents):
        path.mkdir(parents=True, exist_ok=True)
        return path
    refuse_symlinks(path, owned=True)
    missing = [p for p in (path, *path.parents) if p == home or home in p.parents]
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:
            if not folder.is_dir():
                raise UsageError(
                    f"{folder} is a file where npa keeps a folder",
                    hint="move the file away; npa recreates the folder",
                ) from None
            continue  # not created here: its mode is not npa's to change
        except FileNotFoundError:
            if folder != home:
                raise
            home.mkdir(mode=PRIVATE_DIR_MODE, parents=True)  # parents are the user's own
        except OSError as exc:
            problem = read_only(exc, folder)
            if problem is None:
                raise
            raise problem from None
        folder.chmod(PRIVATE_DIR_MODE)  # created just now; mkdir's mode went through the umask
    return path


def make_link(link: Path | str, target: Path | str) -> None:
    """A symlink at `link` to the folder `target` (how Terraform's plugin cache hands out
    providers): its folder is made first (0700 under the home), a symlink on the way is
    `HomeSymlink`, and an existing file at `link` is left alone (FileExistsError)."""
    link = Path(link)
    ensure_dir(link.parent)
    try:
        link.symlink_to(target, target_is_directory=True)
    except OSError as exc:
        problem = read_only(exc, link)  # an existing file (EEXIST) is never a read-only home
        if problem is None:
            raise
        raise problem from None


def check_writable_file(path: Path, info: os.stat_result) -> None:
    """Refuse writing the existing file `path` (its `lstat`/`fstat`) unless it is a regular
    file of the user's with no other hard link (`HomeNotRegular`, `HomeHardLink`,
    `HomeNotYours`); links are refused wherever the file is, ownership only under the home."""
    if stat.S_ISLNK(info.st_mode):
        raise HomeSymlink(path)
    if not stat.S_ISREG(info.st_mode):
        raise HomeNotRegular(path, kind_of(info.st_mode))
    if info.st_nlink > 1:
        raise HomeHardLink(path, info.st_nlink)
    if under_home(path) and info.st_uid != os.geteuid():
        raise HomeNotYours(path, f"belongs to uid {info.st_uid}, not to you")


def open_private(path: Path | str, flags: int, mode: int = SECRET_MODE) -> int:
    """`os.open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode)` for a file npa writes, appends
    to, truncates or locks: its folder is made first (0700), a symlink at `path` or on the
    way is `HomeSymlink`, a hard-linked file `HomeHardLink`, a FIFO or device
    `HomeNotRegular` (opened without waiting, never read or written), a file or folder of
    another user `HomeNotYours`, a home that cannot be written `HomeReadOnly`. A file
    created here is `mode` (0600) whatever the umask; an existing one at npa's name is
    tightened to it. `O_TRUNC` happens only after these checks."""
    path = Path(path)
    writing = flags & _WRITING
    if writing:
        ensure_dir(path.parent)
    else:
        refuse_symlinks(path.parent)
    truncate = flags & os.O_TRUNC
    flags = (flags & ~os.O_TRUNC) | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        fd = os.open(path, flags, private_mode(path, mode))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise HomeSymlink(path) from None
        if exc.errno == errno.ENXIO:  # a socket, or a FIFO opened for writing
            raise HomeNotRegular(path, "a special file") from None
        problem = read_only(exc, path) if writing else None
        if problem is None:
            raise
        raise problem from None
    try:
        info = os.fstat(fd)
        if writing:
            check_writable_file(path, info)
        elif not stat.S_ISREG(info.st_mode):
            raise HomeNotRegular(path, kind_of(info.st_mode))
        os.set_blocking(fd, True)
        if truncate:
            os.ftruncate(fd, 0)
    except BaseException:
        os.close(fd)
        raise
    if writing and under_home(path) and stat.S_IMODE(info.st_mode) & 0o077:
        with contextlib.suppress(OSError):
            os.fchmod(fd, stat.S_IMODE(info.st_mode) & PRIVATE_DIR_MODE)
    return fd


def read_trusted(path: Path | str, *, limit: int) -> bytes | None:
    """The bytes of a file npa wrote for itself (a cache), or None unless nobody else could
    have written it: a regular file (no symlink, on the way or at the end) owned by the user
    and writable by nobody else, in a folder of the user's that only the user can enter, at
    most `limit` bytes."""
    path = Path(path)
    try:
        refuse_symlinks(path.parent)
        folder = path.parent.lstat()
        if (
            not stat.S_ISDIR(folder.st_mode)
            or folder.st_uid != os.geteuid()
            or stat.S_IMODE(folder.st_mode) & 0o077
        ):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, UsageError):
        return None
    try:
        info = os.fstat(fd)
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_uid != os.geteuid()
            or stat.S_IMODE(info.st_mode) & _WRITABLE_BY_OTHERS
            or info.st_size > limit
        ):
            return None
        data = os.read(fd, limit + 1)
        return data if len(data) <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


# --- the sandbox's home ----------------------------------------------------------------------


def enter_sandbox_home() -> Path:
    """Make the sandbox home this process's npa home (idempotent); returns it."""
    home = ensure_dir(paths.sandbox_home())  # 0700, like every folder under the npa home
    os.environ[paths.NPA_HOME_ENV] = str(home)
    os.environ[paths.SANDBOX_HOME_ENV] = str(home)
    return home


class SandboxHomeEntered:
    """The sandbox home as this process's npa home until `leave()` (or the end of a `with`
    block); the previous one after. A plain object, not a generator: an environment that is
    never closed must not restore an old home whenever it happens to be garbage-collected."""

    def __init__(self) -> None:
        self._saved = {
            var: os.environ.get(var) for var in (paths.NPA_HOME_ENV, paths.SANDBOX_HOME_ENV)
        }
        self.home = enter_sandbox_home()
        self._left = False

    def leave(self) -> None:
        if self._left:
            return
        self._left = True
        for var, value in self._saved.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value

    def __enter__(self) -> Path:
        return self.home

    def __exit__(self, *exc: object) -> None:
        self.leave()
