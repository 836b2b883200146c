"""The npa home's files: how every folder and file under it is created, opened and locked.

The rules, in one place (`fsutil.atomic_write_*` applies them to every replacement):

- Folders are 0700 and files 0600 (an executable keeps its owner's x bit only): state,
  logs, keys and caches are nobody else's business. Existing folders are tightened to 0700
  the first time a process writes under the home.
- No symlink inside the home is followed when npa writes: a folder on the way that is a
  symlink, or a file opened for writing, appending, truncating or locking that is one, is
  refused with `HomeSymlink` (a planted `.lock` → `~/.bashrc` would otherwise be truncated).
  Files are opened with `O_NOFOLLOW`; the home folder itself may be a symlink (the user's
  own choice of where it lives).
- A home npa cannot write to (a read-only mount, a folder of another user) is one
  `HomeReadOnly` error saying what to do (exit 2); commands that only read still work.

Nothing else in npa creates, replaces or opens for writing a path under the home: a test
(tests/test_home_files.py) scans the sources for direct writes.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home import paths

SECRET_MODE = 0o600
PRIVATE_DIR_MODE = 0o700
# Not descended into when tightening an existing home: their own tools manage what is inside,
# and nothing in them is reachable once they are 0700.
_NOT_OURS = frozenset({".git", ".terraform", "tf-mirror"})
_READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)


class HomeSymlink(UsageError):
    """A symlink inside the npa home where npa would write."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path} is a symlink inside the npa home; npa does not write through symlinks there",
            hint=f"remove the link (`rm {path}`); npa creates what it needs, privately",
        )
        self.path = path


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


def refuse_symlinks(path: Path | str) -> None:
    """`HomeSymlink` when a component of `path` below the home is a symlink."""
    home = _home()
    path = Path(path).absolute()
    if home is None or home not in path.parents:
        return
    for part in reversed([p for p in (path, *path.parents) if home in p.parents]):
        try:
            info = part.lstat()
        except FileNotFoundError:
            return  # nothing below a missing folder exists either
        except OSError:
            return  # unreadable: the write that follows says why
        if stat.S_ISLNK(info.st_mode):
            raise HomeSymlink(part)


_tightened: set[Path] = set()


def ensure_dir(path: Path | str) -> Path:
    """`mkdir -p path`; under the npa home every folder is made (or tightened to) 0700, and
    a symlink on the way is refused."""
    path = Path(path).absolute()
    home = _home()
    if home is None or (path != home and home not in path.parents):
        path.mkdir(parents=True, exist_ok=True)
        return path
    refuse_symlinks(path)
    if home not in _tightened and home.is_dir():
        tighten_tree(home)
        _tightened.add(home)
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
            continue
        except FileNotFoundError:
            if folder != home:
                raise
            home.mkdir(mode=PRIVATE_DIR_MODE, parents=True)  # parents are the user's own
        except OSError as exc:
            problem = read_only(exc, folder)
            if problem is None:
                raise
            raise problem from None
        folder.chmod(PRIVATE_DIR_MODE)  # mkdir's mode is filtered by the umask
    _tightened.add(home)
    return path


def _tighten(path: Path) -> None:
    with contextlib.suppress(OSError):
        info = path.lstat()
        if (
            stat.S_ISDIR(info.st_mode)
            and info.st_uid == os.getuid()
            and stat.S_IMODE(info.st_mode) & 0o077
        ):
            path.chmod(stat.S_IMODE(info.st_mode) & PRIVATE_DIR_MODE | PRIVATE_DIR_MODE)


def tighten_tree(root: Path | str) -> None:
    """Make `root` and the folders below it 0700 (symlinks and tool-managed folders aside)."""
    root = Path(root)
    _tighten(root)
    for folder, dirs, _files in os.walk(root):
        for name in dirs:
            _tighten(Path(folder) / name)
        dirs[:] = [d for d in dirs if d not in _NOT_OURS]  # tightened, not descended into


def make_link(link: Path | str, target: Path | str) -> None:
    """A symlink at `link` to the folder `target` (how Terraform's plugin cache hands out
    providers): its folder is made first (0700 under the home), a symlink on the way is
    `HomeSymlink`, and an existing file at `link` is left alone (FileExistsError)."""
    link = Path(link)
    ensure_dir(link.parent)
    try:
        link.symlink_to(target, target_is_directory=True)
    except OSError as exc:
        problem = read_only(exc, link) if not isinstance(exc, FileExistsError) else None
        if problem is None:
            raise
        raise problem from None


def open_private(path: Path | str, flags: int, mode: int = SECRET_MODE) -> int:
    """`os.open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode)` for a file npa writes, appends
    to, truncates or locks: its folder is made first (0700), a symlink at `path` or on the
    way is `HomeSymlink`, a home that cannot be written is `HomeReadOnly`. A file created
    here is `mode` (0600) whatever the umask; an existing one of ours is tightened to it."""
    path = Path(path)
    writing = flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND)
    if writing:
        ensure_dir(path.parent)
    else:
        refuse_symlinks(path.parent)
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, private_mode(path, mode))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise HomeSymlink(path) from None
        problem = read_only(exc, path) if writing else None
        if problem is None:
            raise
        raise problem from None
    if writing and under_home(path):
        with contextlib.suppress(OSError):
            info = os.fstat(fd)
            if info.st_uid == os.geteuid() and stat.S_IMODE(info.st_mode) & 0o077:
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
            or stat.S_IMODE(info.st_mode) & 0o022
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
