"""`home/files.py`, rule by rule (R4, R5 in docs/security.md; docs/home.md): what npa refuses
under its home and the words it says it with, the modes of what it creates and of what it
leaves alone, when a file is truncated, a read-only home, the caches it trusts, and entering
and leaving the sandbox's home. Real files, modes, links, FIFOs and mounts in `tmp_path`."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home.files import (
    HomeHardLink,
    HomeNotRegular,
    HomeNotYours,
    HomeReadOnly,
    HomeRefused,
    HomeSymlink,
    SandboxHomeEntered,
    check_writable_file,
    ensure_dir,
    make_link,
    open_private,
    read_only,
    read_trusted,
    refuse_symlinks,
)
from npa_sop_tui.home.fsutil import atomic_write_text

from testkit.disks import tmpfs
from testkit.hostile_files import untouched
from testkit.hostile_files import victim as outside_file

WRITE = os.O_WRONLY | os.O_CREAT | os.O_APPEND  # how npa opens its logs
LOCK = os.O_RDWR | os.O_CREAT  # how npa opens its lock files
OTHER_UID = 12345


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _written(path: Path, flags: int = WRITE, data: bytes = b"") -> None:
    """Open `path` the way npa does, write `data`, close."""
    fd = open_private(path, flags)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _says(refused: HomeRefused, path: Path, text: str) -> None:
    """A refusal names its path to a person (the message and what to do) and to a script
    (the JSON document's `path`, through `json_extra`)."""
    assert refused.render() == text
    assert refused.path == path
    assert refused.json_extra() == {"path": str(path)}


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The usual umask, so "the mode asked for" is what a file gets outside the home."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


# -- refusals: what npa will not write through, and what it says -------------------------------


def test_a_symlink_at_a_file_npa_writes_is_refused_with_what_to_do(
    npa_home: Path, tmp_path: Path
) -> None:
    victim = outside_file(tmp_path)
    link = npa_home / "known_hosts"
    link.symlink_to(victim)
    with pytest.raises(HomeSymlink) as caught:
        open_private(link, WRITE)
    _says(
        caught.value,
        link,
        f"{link} is a symlink inside the npa home; npa does not write through symlinks there\n"
        f"  hint: remove the link (`rm {link}`); npa creates what it needs, privately",
    )
    # the same words where a file is checked by its own status (an installation's state)
    with pytest.raises(HomeSymlink) as caught:
        check_writable_file(link, link.lstat())
    assert caught.value.path == link
    assert untouched(victim)


def test_a_file_with_a_second_hard_link_is_refused_and_the_other_file_untouched(
    npa_home: Path, tmp_path: Path
) -> None:
    """One other link is already one too many: the other path could be anywhere."""
    victim = outside_file(tmp_path)
    shared = npa_home / "state.json"
    os.link(victim, shared)
    with pytest.raises(HomeHardLink) as caught:
        open_private(shared, os.O_WRONLY | os.O_TRUNC)
    _says(
        caught.value,
        shared,
        f"{shared} has 2 hard links; npa does not write a file inside the npa home that "
        "another path shares (the other path could be anywhere)\n"
        f"  hint: remove it (`rm {shared}`); npa creates a file of its own there",
    )
    assert untouched(victim)  # not truncated, mode unchanged


def test_a_fifo_where_npa_writes_or_reads_a_file_is_refused_at_once(npa_home: Path) -> None:
    """Opened for writing, a FIFO without a reader cannot even be opened (a "special file");
    opened for reading, it is named for what it is. Neither waits."""
    fifo = npa_home / "logs" / "npa-debug.log"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    with pytest.raises(HomeNotRegular) as caught:
        open_private(fifo, WRITE)
    _says(
        caught.value,
        fifo,
        f"{fifo} is a special file, not a file; npa does not open it\n"
        f"  hint: remove it (`rm {fifo}`); npa creates the file it needs",
    )
    with pytest.raises(HomeNotRegular) as caught:
        open_private(fifo, os.O_RDONLY)
    _says(
        caught.value,
        fifo,
        f"{fifo} is a named pipe (FIFO), not a file; npa does not open it\n"
        f"  hint: remove it (`rm {fifo}`); npa creates the file it needs",
    )


def test_a_file_of_another_user_inside_the_home_is_refused(npa_home: Path) -> None:
    """Inside the home a file npa writes must be the user's own. Giving a file away needs
    root: run as anyone else, the check gets the status such a file has."""
    theirs = npa_home / "known_hosts"
    theirs.write_text("their keys\n")
    theirs.chmod(0o600)
    if os.geteuid() == 0:
        os.chown(theirs, OTHER_UID, OTHER_UID)
        info = theirs.lstat()
    else:
        mine = theirs.lstat()
        info = os.stat_result((*mine[:4], OTHER_UID, *mine[5:]))
    with pytest.raises(HomeNotYours) as caught:
        check_writable_file(theirs, info)
    _says(
        caught.value,
        theirs,
        f"{theirs} (inside the npa home) belongs to uid {OTHER_UID}, not to you; npa writes "
        "only into folders and files of its own user that nobody else can write\n"
        f"  hint: run npa as the owner, or `chmod go-w {theirs}` if it is yours, or point "
        "NPA_HOME at a folder of your own",
    )
    if os.geteuid() == 0:  # and through the door every write takes
        with pytest.raises(HomeNotYours, match="belongs to uid 12345, not to you"):
            open_private(theirs, WRITE)
        assert theirs.read_text() == "their keys\n"


def test_a_file_at_the_top_of_a_home_others_can_write_is_refused(npa_home: Path) -> None:
    """The home itself is checked even when the file lies right in it (`known_hosts`)."""
    npa_home.chmod(0o777)
    with pytest.raises(HomeNotYours) as caught:
        open_private(npa_home / "known_hosts", WRITE)
    assert caught.value.path == npa_home
    assert caught.value.render().startswith(
        f"the npa home {npa_home} is writable by others (mode 777); npa writes only into"
    )
    assert list(npa_home.iterdir()) == []


def test_reading_in_a_home_others_can_write_still_works(npa_home: Path) -> None:
    """Only writing needs a home of the user's alone: commands that read still read."""
    shared = npa_home / "shared"
    shared.mkdir()
    (shared / "inventory.json").write_text("{}")
    shared.chmod(0o777)
    npa_home.chmod(0o777)
    fd = open_private(shared / "inventory.json", os.O_RDONLY)
    try:
        assert os.read(fd, 10) == b"{}"
    finally:
        os.close(fd)


def test_the_symlink_check_concerns_only_paths_under_the_home(
    npa_home: Path, tmp_path: Path
) -> None:
    """Outside the home the user's links and folders are the user's business, whatever the
    home is like; under it, a link on the way is refused even without the owner check."""
    npa_home.chmod(0o777)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "link").symlink_to(elsewhere)
    refuse_symlinks(tmp_path / "link" / "x", owned=True)  # no error
    npa_home.chmod(0o700)
    (npa_home / "cache").symlink_to(elsewhere)
    with pytest.raises(HomeSymlink):
        refuse_symlinks(npa_home / "cache" / "x")


def test_a_file_where_npa_keeps_a_folder_is_named_with_what_to_do(npa_home: Path) -> None:
    (npa_home / "cache").write_text("not a folder")
    with pytest.raises(UsageError) as caught:
        ensure_dir(npa_home / "cache" / "specs")
    assert caught.value.render() == (
        f"{npa_home / 'cache'} is a file where npa keeps a folder\n"
        "  hint: move the file away; npa recreates the folder"
    )


def test_other_errors_are_not_dressed_as_a_read_only_home(npa_home: Path) -> None:
    """Only a refusal to write (read-only, no permission) is `HomeReadOnly`; a name too long
    or a missing file is the error it is."""
    with pytest.raises(OSError) as caught:
        ensure_dir(npa_home / ("x" * 300))
    assert caught.value.errno == errno.ENAMETOOLONG
    with pytest.raises(FileNotFoundError):
        open_private(npa_home / "missing.json", os.O_WRONLY)
    provider = npa_home / "providers" / "null"
    make_link(provider, npa_home)
    with pytest.raises(FileExistsError):  # an existing file at the link is left alone
        make_link(provider, npa_home / "other")
    assert provider.readlink() == npa_home


def test_a_write_error_means_a_read_only_home_only_for_a_refused_write_under_it(
    npa_home: Path, tmp_path: Path
) -> None:
    inside = npa_home / "soperator" / "x.json"
    refused = read_only(OSError(errno.EROFS, "Read-only file system"), inside)
    assert isinstance(refused, HomeReadOnly)
    assert refused.path == inside
    assert refused.json_extra() == {"path": str(inside)}
    assert refused.render() == (
        f"the npa home {npa_home} is not writable (Read-only file system: {inside})\n"
        f"  hint: make {npa_home} writable for you, or point NPA_HOME at a writable folder; "
        "commands that only read (list, status, validate) work as they are"
    )
    for code in (errno.EACCES, errno.EPERM):
        assert isinstance(read_only(OSError(code, "Permission denied"), inside), HomeReadOnly)
    no_reason = read_only(OSError(errno.EACCES, ""), inside)
    assert no_reason is not None and "(not writable: " in no_reason.message
    assert read_only(OSError(errno.ENOSPC, "No space left on device"), inside) is None
    assert read_only(OSError(errno.EROFS, "Read-only file system"), tmp_path / "x") is None


# -- a read-only home --------------------------------------------------------------------------


@pytest.fixture
def read_only_home(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """The npa home on a tmpfs of its own holding `kept/notes`, then mounted read-only (as
    root, or else in a user namespace: testkit/disks.py)."""
    with tmpfs(request, tmp_path / "ro-home", size="1m", mode="700") as home:
        monkeypatch.setenv("NPA_HOME", str(home))
        if os.geteuid() == 0:  # else this test runs again where it is root of its mounts
            (home / "kept").mkdir(mode=0o700)
            (home / "kept" / "notes").write_text("kept\n")
            subprocess.run(["mount", "-o", "remount,ro", str(home)], check=True)
        yield home


def test_a_read_only_home_is_one_clear_error_for_every_write_and_reads_still_work(
    read_only_home: Path, tmp_path: Path
) -> None:
    home = read_only_home
    new_folder, new_file, link = home / "cache", home / "kept" / "x.log", home / "kept" / "p"
    for write, path in (
        (lambda: ensure_dir(new_folder / "deeper"), new_folder),
        (lambda: open_private(new_file, WRITE), new_file),
        (lambda: make_link(link, tmp_path), link),
    ):
        with pytest.raises(HomeReadOnly) as caught:
            write()
        assert caught.value.path == path
        assert caught.value.message == (
            f"the npa home {home} is not writable (Read-only file system: {path})"
        )
    fd = open_private(home / "kept" / "notes", os.O_RDONLY)
    try:
        assert os.read(fd, 100) == b"kept\n"
    finally:
        os.close(fd)


# -- modes: private under the home, as asked elsewhere, and only npa's own ---------------------


def test_outside_the_home_files_get_the_mode_asked_and_keep_their_own(
    npa_home: Path, tmp_path: Path, umask_022: None
) -> None:
    """The rules of the home are for the home: a file npa writes elsewhere (a spec, a report)
    gets the mode asked for, and an existing one keeps its mode."""
    report = tmp_path / "reports" / "run.log"
    _written(report, WRITE, b"x")
    fd = open_private(tmp_path / "reports" / "asked.log", WRITE, 0o644)
    os.close(fd)
    assert _mode(tmp_path / "reports" / "asked.log") == 0o644
    report.chmod(0o644)
    _written(report, WRITE, b"y")
    assert _mode(report) == 0o644
    atomic_write_text(tmp_path / "spec.yaml", "a: 1\n", mode=0o644)
    assert _mode(tmp_path / "spec.yaml") == 0o644


def test_an_existing_file_at_npas_name_is_tightened_and_a_private_one_left_as_it_is(
    npa_home: Path,
) -> None:
    loose = npa_home / "known_hosts"
    loose.write_text("keys\n")
    loose.chmod(0o644)
    _written(loose)
    assert _mode(loose) == 0o600
    executable = npa_home / "provider"
    executable.write_text("")
    executable.chmod(0o755)
    _written(executable)
    assert _mode(executable) == 0o700  # its owner's x bit only
    private = npa_home / "special"  # nothing for group or others: its mode is the user's
    private.write_text("")
    private.chmod(0o4600)
    _written(private)
    assert _mode(private) == 0o4600


def test_reading_a_file_changes_no_mode_and_creates_no_folder(npa_home: Path) -> None:
    notes = npa_home / "notes.json"
    notes.write_text("{}")
    notes.chmod(0o644)
    os.close(open_private(notes, os.O_RDONLY))
    assert _mode(notes) == 0o644
    with pytest.raises(FileNotFoundError):
        open_private(npa_home / "soperator" / "demo" / "inventory.json", os.O_RDONLY)
    assert not (npa_home / "soperator").exists()


def test_a_new_file_under_the_home_is_0600_in_0700_folders(npa_home: Path) -> None:
    log = npa_home / "logs" / "tui-errors.log"
    _written(log, WRITE, b"one\n")
    _written(log, WRITE, b"two\n")
    assert log.read_bytes() == b"one\ntwo\n"
    assert _mode(log) == 0o600 and _mode(log.parent) == 0o700


# -- truncation, blocking ----------------------------------------------------------------------


def test_a_file_is_truncated_only_when_asked_and_only_after_the_checks(
    npa_home: Path, tmp_path: Path
) -> None:
    lock = npa_home / "soperator" / "demo" / ".lock"
    lock.parent.mkdir(parents=True)
    lock.write_text("held by 42\n")
    os.close(open_private(lock, LOCK))
    assert lock.read_text() == "held by 42\n"  # a lock is opened, not emptied
    os.close(open_private(lock, os.O_WRONLY | os.O_TRUNC))
    assert lock.read_bytes() == b""  # truncated to nothing, not written over
    victim = outside_file(tmp_path)
    os.link(victim, npa_home / "linked")
    with pytest.raises(HomeHardLink):
        open_private(npa_home / "linked", os.O_WRONLY | os.O_TRUNC)
    assert untouched(victim)  # refused before any byte went


def test_the_file_npa_gets_blocks_like_any_file(npa_home: Path) -> None:
    """Opened without waiting (a FIFO must not hang npa), then given back blocking."""
    for flags in (WRITE, os.O_RDONLY):
        fd = open_private(npa_home / "inventory.json", flags)
        try:
            assert os.get_blocking(fd)
        finally:
            os.close(fd)


# -- caches npa trusts -------------------------------------------------------------------------


def _cache(folder: Path, data: bytes = b'{"v": 1}') -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    path = folder / "cache.json"
    path.write_bytes(data)
    path.chmod(0o600)
    return path


def test_a_private_cache_is_read_up_to_its_limit(npa_home: Path) -> None:
    cache = _cache(npa_home / "cache", b"x" * 10)
    assert read_trusted(cache, limit=10) == b"x" * 10  # exactly the limit is read whole
    assert read_trusted(cache, limit=9) is None
    assert read_trusted(npa_home / "cache" / "missing.json", limit=10) is None


def test_a_cache_others_could_write_or_enter_is_not_trusted(npa_home: Path) -> None:
    cache = _cache(npa_home / "cache")
    cache.chmod(0o620)  # even the user's own group may not write it
    assert read_trusted(cache, limit=100) is None
    cache.chmod(0o600)
    cache.parent.chmod(0o750)  # nor may anyone else enter its folder
    assert read_trusted(cache, limit=100) is None
    cache.parent.chmod(0o700)
    assert read_trusted(cache, limit=100) == b'{"v": 1}'


def test_a_cache_reached_through_a_link_is_not_trusted(npa_home: Path, tmp_path: Path) -> None:
    real = _cache(tmp_path / "real")
    catalog = npa_home / "catalog"
    catalog.mkdir(mode=0o700)
    (catalog / "platforms.json").symlink_to(real)
    assert read_trusted(catalog / "platforms.json", limit=100) is None  # a link at the file
    _cache(tmp_path / "outside" / "sub")
    (npa_home / "cache").symlink_to(tmp_path / "outside")
    assert read_trusted(npa_home / "cache" / "sub" / "cache.json", limit=100) is None
    (tmp_path / "private").mkdir(mode=0o700)
    (tmp_path / "private" / "cache.json").symlink_to(real)  # outside the home too
    assert read_trusted(tmp_path / "private" / "cache.json", limit=100) is None


@pytest.mark.timeout(30)  # a FIFO opened for reading would wait for a writer forever
def test_a_fifo_or_folder_planted_as_a_cache_is_not_read_and_not_waited_on(
    npa_home: Path,
) -> None:
    folder = npa_home / "cache"
    folder.mkdir(mode=0o700)
    os.mkfifo(folder / "cache.json", 0o600)
    assert read_trusted(folder / "cache.json", limit=100) is None
    (folder / "schema.json").mkdir(mode=0o700)
    assert read_trusted(folder / "schema.json", limit=100) is None


def test_a_cache_of_another_user_or_in_their_folder_is_not_trusted(npa_home: Path) -> None:
    cache = _cache(npa_home / "cache")
    assert read_trusted(cache, limit=100) == b'{"v": 1}'
    if os.geteuid() != 0:
        return  # giving a file or folder to another user needs root
    os.chown(cache, OTHER_UID, OTHER_UID)
    assert read_trusted(cache, limit=100) is None
    os.chown(cache, 0, 0)
    os.chown(cache.parent, OTHER_UID, OTHER_UID)
    assert read_trusted(cache, limit=100) is None


# -- the sandbox's home ------------------------------------------------------------------------


def test_the_sandbox_home_is_entered_for_a_block_and_the_previous_home_comes_back(
    npa_home: Path,
) -> None:
    with SandboxHomeEntered() as home:
        assert home == npa_home / "sandbox"
        assert _mode(home) == 0o700
        assert os.environ["NPA_HOME"] == os.environ["NPA_SANDBOX_HOME"] == str(home)
    assert os.environ["NPA_HOME"] == str(npa_home)
    assert "NPA_SANDBOX_HOME" not in os.environ


def test_leaving_the_sandbox_home_restores_once_whatever_happened_inside(
    npa_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    entered = SandboxHomeEntered()
    del os.environ["NPA_SANDBOX_HOME"]  # removed by what ran inside: leaving still works
    entered.leave()
    assert os.environ["NPA_HOME"] == str(npa_home)
    assert "NPA_SANDBOX_HOME" not in os.environ
    monkeypatch.setenv("NPA_HOME", str(tmp_path / "later"))  # chosen after leaving
    entered.leave()  # a second leave (a `with` after an explicit leave) changes nothing
    assert os.environ["NPA_HOME"] == str(tmp_path / "later")
