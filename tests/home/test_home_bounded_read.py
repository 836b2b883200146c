"""`bounded_read`: the rules every file npa reads meets (docs/security.md R5 and R10).

R5, reads are bounded and never wait: a named file is opened without blocking, must be a
regular file, and is read up to a limit, each refusal a sentence for the user (`Unreadable`);
a log read line by line (`open_regular`) is refused the same way. R10, settings are only
yours: with `own`, a file of another user, or one that others or a group with anyone else in
it may write, is refused with what to do.
"""

from __future__ import annotations

import contextlib
import errno
import grp
import locale
import os
import pwd
import re
import socket
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from npa_sop_tui.cli.entry import main
from npa_sop_tui.home.bounded_read import (
    Unreadable,
    kind_of,
    limit_text,
    open_regular,
    read_regular_bytes,
    read_regular_text,
)
from npa_sop_tui.sdk import soperator as sdk
from npa_sop_tui.spec.model import SpecError

MiB = 1024 * 1024


@contextlib.contextmanager
def _no_wait_on(fifo: Path, seconds: float = 10.0) -> Iterator[None]:
    """Fails the test instead of hanging it: if the body still runs after `seconds` (an open
    waiting for a writer of `fifo`), a writer opens the FIFO so that open returns."""
    done = threading.Event()
    waited = threading.Event()

    def release() -> None:
        if done.wait(seconds):
            return
        waited.set()
        while not done.wait(0.05):
            with contextlib.suppress(OSError):  # ENXIO until the reader is in its open
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    watchdog = threading.Thread(target=release, daemon=True)
    watchdog.start()
    try:
        yield
    finally:
        done.set()
        watchdog.join()
    assert not waited.is_set(), f"the open of {fifo} waited for a writer"


def _open_descriptors() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


# R5: only a regular file, refused at once -------------------------------------------------


def test_special_files_are_refused_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """/dev/zero, /dev/urandom and a FIFO nobody writes to: refused, nothing read, no wait."""
    fifo = tmp_path / "spec.fifo"
    os.mkfifo(fifo)
    for path, kind in (
        ("/dev/zero", "a character device"),
        ("/dev/urandom", "a character device"),
        (str(fifo), "a named pipe (FIFO)"),
    ):
        with _no_wait_on(fifo), pytest.raises(Unreadable) as refused:
            read_regular_bytes(path, limit=1024, what="spec file")
        assert refused.value.reason == f"is {kind}, not a spec file"
        assert str(refused.value) == refused.value.reason
        # what to do instead, and it is not a missing file
        assert refused.value.hint == "pass the path of a regular spec file"
        assert refused.value.missing is False
    # every front door that reads a spec, as a user runs it: exit 2, one clear line, at once
    for command in (["validate"], ["plan"], ["deploy", "--yes"], ["set", "name=x"]):
        for path in ("/dev/zero", "/dev/urandom", str(fifo)):
            with _no_wait_on(fifo):
                code = main(["soperator", command[0], "--spec", path, *command[1:]])
            err = capsys.readouterr().err
            assert code == 2, (command, path, err)
            assert "not a spec file" in err and "Traceback" not in err
    with _no_wait_on(fifo), pytest.raises(SpecError, match="not a spec file"):
        sdk.load(fifo)


def test_a_missing_file_and_a_folder_say_which(tmp_path: Path) -> None:
    with pytest.raises(Unreadable) as missing:
        read_regular_bytes(tmp_path / "nope.yaml", limit=10, what="spec file")
    assert missing.value.missing and "spec file not found" in missing.value.reason
    with pytest.raises(Unreadable) as folder:
        read_regular_bytes(tmp_path, limit=10, what="spec file")
    assert folder.value.reason == "is a folder, not a spec file"
    # a folder needs no "pass the path of a regular file": the user knows what a folder is
    assert folder.value.hint is None and folder.value.missing is False


def test_a_missing_file_says_where_it_looked_and_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relative path is shown as the absolute path looked for (relative to the current
    folder, which the hint says)."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(Unreadable) as missing:
        read_regular_text("specs/gone.yaml", limit=10, what="spec file")
    assert missing.value.reason == (
        f"spec file not found (looked for {tmp_path / 'specs' / 'gone.yaml'})"
    )
    assert missing.value.hint == "check the path; relative paths start from the current folder"
    assert missing.value.missing is True
    # unnamed, the file is "file"
    with pytest.raises(Unreadable, match=r"^file not found \(looked for "):
        read_regular_bytes("gone", limit=10)


def test_a_socket_is_refused_as_a_special_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A socket cannot be opened as a file at all (ENXIO): it is named a special file."""
    monkeypatch.chdir(tmp_path)  # a short relative name: socket paths are limited to 108 bytes
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind("spec.sock")
        with pytest.raises(Unreadable) as refused:
            read_regular_bytes("spec.sock", limit=10, what="spec file")
    assert refused.value.reason == "is a special file, not a spec file"
    assert refused.value.hint is None and refused.value.missing is False


def test_a_file_the_system_cannot_open_or_read_says_why(tmp_path: Path) -> None:
    """Any other OS error, at the open or at the read, is the system's own words; these
    hold for root too (a mode would not stop root)."""
    spec = tmp_path / "spec.yaml"
    spec.write_text("a: 1\n")
    with pytest.raises(Unreadable) as below_a_file:
        read_regular_bytes(spec / "inner.yaml", limit=10, what="spec file")
    assert below_a_file.value.reason == "cannot read spec file: Not a directory"
    assert below_a_file.value.missing is False
    # /proc/self/mem is a regular file whose read at offset 0 fails (nothing is mapped there)
    with pytest.raises(Unreadable) as failed_read:
        read_regular_bytes("/proc/self/mem", limit=10, what="spec file")
    assert failed_read.value.reason == "cannot read spec file: Input/output error"


def test_every_kind_of_special_file_is_named() -> None:
    """The words each refusal uses for what the path is instead of a regular file."""
    assert kind_of(stat.S_IFDIR | 0o755) == "a folder"
    assert kind_of(stat.S_IFIFO | 0o644) == "a named pipe (FIFO)"
    assert kind_of(stat.S_IFCHR | 0o666) == "a character device"
    assert kind_of(stat.S_IFBLK | 0o660) == "a block device"
    assert kind_of(stat.S_IFSOCK | 0o755) == "a socket"
    assert kind_of(stat.S_IFLNK | 0o777) == "not a regular file"


def test_a_terminal_named_as_a_file_never_becomes_npas_terminal() -> None:
    """A terminal is refused like any device, and opening it to find that out never makes it
    the controlling terminal of npa (O_NOCTTY): run in a session with none (a daemon, an
    MCP server), npa would otherwise take over the terminal of whoever owns that tty."""
    controller, terminal = os.openpty()
    name = os.ttyname(terminal)
    try:
        with pytest.raises(Unreadable, match=r"^is a character device, not a spec file$"):
            read_regular_bytes(name, limit=10, what="spec file")
        with pytest.raises(OSError, match="a character device, not a regular file"):
            open_regular(name)
        for read in (
            lambda: read_regular_bytes(name, limit=10, what="spec file"),
            lambda: open_regular(name),
        ):
            child = os.fork()
            if child == 0:  # a new session without a controlling terminal
                code = 2
                try:
                    os.setsid()
                    with contextlib.suppress(Unreadable, OSError):
                        read()
                    try:
                        os.close(os.open("/dev/tty", os.O_RDONLY))
                        code = 1  # the refused terminal became this session's terminal
                    except OSError:
                        code = 0
                finally:
                    os._exit(code)
            _, status = os.waitpid(child, 0)
            assert os.waitstatus_to_exitcode(status) == 0
    finally:
        os.close(terminal)
        os.close(controller)


# R5: read up to a limit -------------------------------------------------------------------


def test_a_file_larger_than_the_limit_is_refused_while_reading(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"a: 1\n" * 300)
    with pytest.raises(Unreadable) as refused:
        read_regular_bytes(big, limit=1024, what="spec file", subject="spec")
    assert refused.value.reason == "spec is larger than 1 KiB"
    assert refused.value.hint == "is this the right file?"
    assert read_regular_bytes(big, limit=1500) == b"a: 1\n" * 300


def test_a_file_of_exactly_the_limit_is_read_and_one_byte_more_is_not(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_bytes(b"x" * 2048)
    assert read_regular_bytes(spec, limit=2048) == b"x" * 2048
    spec.write_bytes(b"x" * 2049)
    with pytest.raises(Unreadable, match=r"^file is larger than 2 KiB$"):
        read_regular_bytes(spec, limit=2048)


def test_a_sparse_giant_is_refused_before_a_byte_is_read(tmp_path: Path) -> None:
    """A file claiming 3 GB (sparse: it takes no disk) is refused from its size alone."""
    giant = tmp_path / "inventory.json"
    with giant.open("wb") as out:
        out.truncate(3 * 1024 * MiB)
    with pytest.raises(Unreadable) as refused:
        read_regular_bytes(giant, limit=8 * MiB, what="record", subject="the record")
    assert refused.value.reason == "the record is larger than 8 MiB"
    assert refused.value.hint == "is this the right file?"


def test_a_file_that_holds_more_than_it_claims_is_cut_at_the_limit() -> None:
    """A /proc file claims size 0 and holds tens of KiB, handed out a page at a time: the
    read itself stops past the limit (as for a file that grows while it is read)."""
    claimed = os.stat("/proc/self/smaps").st_size
    assert claimed == 0
    with pytest.raises(Unreadable) as refused:
        read_regular_bytes("/proc/self/smaps", limit=8 * 1024, what="spec file", subject="spec")
    assert refused.value.reason == "spec is larger than 8 KiB"
    assert refused.value.hint == "is this the right file?"
    # within the limit, what it holds is read whole
    status = read_regular_bytes("/proc/self/status", limit=MiB)
    assert status.startswith(b"Name:") and status.endswith(b"\n")


def test_a_file_read_in_many_chunks_comes_back_whole(tmp_path: Path) -> None:
    """A file longer than one read (64 KiB) is returned byte for byte."""
    content = bytes(range(256)) * 1000  # 256 000 bytes
    spec = tmp_path / "spec.yaml"
    spec.write_bytes(content)
    assert read_regular_bytes(spec, limit=MiB) == content


def test_size_messages_name_the_limit_in_mib_kib_or_bytes(tmp_path: Path) -> None:
    assert limit_text(MiB) == "1 MiB"
    assert limit_text(8 * MiB) == "8 MiB"
    assert limit_text(256 * 1024) == "256 KiB"
    assert limit_text(1025 * 1024) == "1025 KiB"
    assert limit_text(1024) == "1 KiB"
    assert limit_text(1000) == "1000 bytes"
    assert limit_text(MiB + 1) == f"{MiB + 1} bytes"
    spec = tmp_path / "spec.yaml"
    with spec.open("wb") as out:
        out.truncate(MiB + 1)
    with pytest.raises(Unreadable, match=r"^spec is larger than 1 MiB$"):
        read_regular_bytes(spec, limit=MiB, what="spec file", subject="spec")


def test_no_descriptor_is_left_open(tmp_path: Path) -> None:
    """Whether the file is read, too large or refused, its descriptor is closed."""
    spec = tmp_path / "spec.yaml"
    spec.write_bytes(b"a: 1\n" * 100)
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    before = _open_descriptors()
    read_regular_bytes(spec, limit=MiB)
    with pytest.raises(Unreadable):
        read_regular_bytes(spec, limit=10)
    with _no_wait_on(fifo):
        with pytest.raises(Unreadable):
            read_regular_bytes(fifo, limit=10)
        with pytest.raises(OSError):
            open_regular(fifo)
    assert _open_descriptors() == before


# R5: text ---------------------------------------------------------------------------------


def test_text_is_utf8_and_a_bad_byte_is_named(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_bytes("name: café\n".encode())
    assert read_regular_text(spec, limit=1024, what="spec file") == "name: café\n"
    spec.write_bytes(b"a: \xff\n")
    with pytest.raises(Unreadable) as bad:
        read_regular_text(spec, limit=1024, what="spec file", subject="spec")
    assert bad.value.reason == "spec is not UTF-8 text (byte 3)"
    with pytest.raises(Unreadable, match=r"^spec file is not UTF-8 text \(byte 3\)$"):
        read_regular_text(spec, limit=1024, what="spec file")
    with pytest.raises(Unreadable, match=r"^file is not UTF-8 text \(byte 3\)$"):
        read_regular_text(spec, limit=1024)


def test_text_reads_keep_the_limit_and_its_wording(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("a: 1\n" * 300)
    with pytest.raises(Unreadable, match=r"^spec is larger than 1 KiB$"):
        read_regular_text(spec, limit=1024, what="spec file", subject="spec")
    with pytest.raises(Unreadable, match=r"^spec file is larger than 1 KiB$"):
        read_regular_text(spec, limit=1024, what="spec file")


# R5: logs read line by line ---------------------------------------------------------------


def test_a_log_is_read_as_utf8_whatever_the_locale(tmp_path: Path) -> None:
    """An operation log is UTF-8 (a bad byte shown as U+FFFD, never an error), even where
    the locale says ASCII; the handle is an ordinary blocking file."""
    log = tmp_path / "operation.log"
    log.write_bytes("déployé\n".encode() + b"\xff\n")
    previous = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        with open_regular(log) as lines:
            assert os.get_blocking(lines.fileno())
            assert list(lines) == ["déployé\n", "\ufffd\n"]
    finally:
        locale.setlocale(locale.LC_CTYPE, previous)


def test_a_log_that_is_not_a_regular_file_is_refused_at_once(tmp_path: Path) -> None:
    """A FIFO where a log should be is refused without waiting for a writer, as an OSError
    naming what it is and the path; so are a folder and a device."""
    fifo = tmp_path / "operation.log"
    os.mkfifo(fifo)
    with _no_wait_on(fifo), pytest.raises(OSError) as refused:
        open_regular(fifo)
    assert refused.value.errno == errno.EINVAL
    assert refused.value.strerror == "a named pipe (FIFO), not a regular file"
    assert refused.value.filename == str(fifo)
    for path, kind in ((tmp_path, "a folder"), (Path("/dev/zero"), "a character device")):
        with pytest.raises(OSError) as refused:
            open_regular(path)
        assert refused.value.errno == errno.EINVAL
        assert refused.value.strerror == f"{kind}, not a regular file"
        assert refused.value.filename == str(path)


# R10: settings are only yours (`own`) -----------------------------------------------------


@pytest.fixture
def primary_group(monkeypatch: pytest.MonkeyPatch) -> Callable[[list[str] | None], None]:
    """Sets whom the group database lists in the user's primary group (None: the group has
    no entry). Listing another member takes root editing /etc/group for the whole machine,
    so this test replaces that one lookup instead."""
    real = grp.getgrgid

    def members(names: list[str] | None) -> None:
        def getgrgid(gid: int) -> grp.struct_group:
            if gid != os.getegid():
                return real(gid)
            if names is None:
                raise KeyError(f"getgrgid(): gid not found: {gid}")
            return grp.struct_group(("mine", "x", gid, names))

        monkeypatch.setattr(grp, "getgrgid", getgrgid)

    return members


def _settings(tmp_path: Path, mode: int) -> Path:
    config = tmp_path / "config.yaml"
    config.write_text("terraform_bin: /usr/bin/terraform\n")
    config.chmod(mode)
    return config


@pytest.mark.parametrize("mode", [0o600, 0o644, 0o400, 0o755])
def test_a_file_only_you_can_write_is_yours(tmp_path: Path, mode: int) -> None:
    """Others and the group may read it or run it: only writing makes it not yours."""
    config = _settings(tmp_path, mode)
    text = read_regular_text(config, limit=1024, what="config file", own=True)
    assert text == "terraform_bin: /usr/bin/terraform\n"


@pytest.mark.parametrize("mode", [0o602, 0o666, 0o646, 0o777])
def test_a_file_others_can_write_is_refused(tmp_path: Path, mode: int) -> None:
    config = _settings(tmp_path, mode)
    with pytest.raises(Unreadable) as refused:
        read_regular_bytes(config, limit=1024, what="config file", own=True)
    assert refused.value.reason == (
        f"the config file is writable by others (mode {mode:o}); npa uses only a config file "
        "that nobody else can write (what it names runs as you)"
    )
    assert refused.value.hint == (
        f"if it is yours: `chown {os.geteuid()} {config}` and `chmod go-w {config}`; "
        "otherwise copy what you need into a file of your own"
    )
    assert refused.value.missing is False
    with pytest.raises(Unreadable, match=re.escape(f"writable by others (mode {mode:o})")):
        read_regular_text(config, limit=1024, what="config file", own=True)


def test_a_file_of_another_user_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Even 0600: its owner decides what it says. Giving a file away takes root, so npa is
    made to run as another uid instead (os.geteuid), which holds as root and as a user."""
    config = _settings(tmp_path, 0o600)
    owner = os.geteuid()
    me = owner + 1
    monkeypatch.setattr(os, "geteuid", lambda: me)
    with pytest.raises(Unreadable) as refused:
        read_regular_bytes(config, limit=1024, what="config file", own=True)
    assert refused.value.reason == (
        f"the config file belongs to uid {owner}, not to you (uid {me}); npa uses only a "
        "config file that nobody else can write (what it names runs as you)"
    )
    assert refused.value.hint == (
        f"if it is yours: `chown {me} {config}` and `chmod go-w {config}`; "
        "otherwise copy what you need into a file of your own"
    )
    with pytest.raises(Unreadable, match=re.escape(f"belongs to uid {owner}, not to you")):
        read_regular_text(config, limit=1024, what="config file", own=True)


def test_without_own_any_owner_and_mode_is_read(tmp_path: Path) -> None:
    """A spec or a fleet anyone may write is still read: only settings must be yours."""
    config = _settings(tmp_path, 0o666)
    assert read_regular_bytes(config, limit=1024) == b"terraform_bin: /usr/bin/terraform\n"
    assert read_regular_text(config, limit=1024) == "terraform_bin: /usr/bin/terraform\n"


@pytest.mark.parametrize("listed", [[], ["me"]], ids=["no-member-listed", "only-you-listed"])
@pytest.mark.parametrize("mode", [0o620, 0o664])
def test_a_file_only_your_own_private_group_may_write_is_yours(
    tmp_path: Path, primary_group: Callable[[list[str] | None], None], listed: list[str], mode: int
) -> None:
    """On a `umask 002` system files are group-writable by the user's private group: that
    is the user alone, whether the group lists no member or only the user."""
    me = pwd.getpwuid(os.geteuid()).pw_name
    primary_group([me if name == "me" else name for name in listed])
    config = _settings(tmp_path, mode)
    assert read_regular_bytes(config, limit=1024, own=True).startswith(b"terraform_bin:")


@pytest.mark.parametrize(
    "group", ["with-another-member", "without-an-entry", "not-your-primary-group"]
)
def test_a_file_a_group_with_anyone_else_may_write_is_refused(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    primary_group: Callable[[list[str] | None], None],
    group: str,
) -> None:
    """A group that lists someone else, that the system cannot say who is in, or that is
    not the user's primary group: its other members could write the file."""
    me = pwd.getpwuid(os.geteuid()).pw_name
    config = _settings(tmp_path, 0o660)
    if group == "with-another-member":
        primary_group([me, "alice"])
    elif group == "without-an-entry":
        primary_group(None)
    else:  # the file keeps its group; npa runs with another primary group (no root needed)
        other = os.getegid() + 1
        monkeypatch.setattr(os, "getegid", lambda: other)
    with pytest.raises(Unreadable) as refused:
        read_regular_bytes(config, limit=1024, what="config file", own=True)
    assert refused.value.reason.startswith("the config file is writable by others (mode 660);")


@pytest.mark.parametrize("group", ["with-another-member", "not-your-primary-group"])
def test_a_group_that_may_only_read_or_run_a_file_leaves_it_yours(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    primary_group: Callable[[list[str] | None], None],
    group: str,
) -> None:
    """Whoever is in the file's group, only group write counts (0755 is yours)."""
    if group == "with-another-member":
        primary_group([pwd.getpwuid(os.geteuid()).pw_name, "alice"])
    else:
        other = os.getegid() + 1
        monkeypatch.setattr(os, "getegid", lambda: other)
    for mode in (0o755, 0o644, 0o600):
        config = _settings(tmp_path, mode)
        assert read_regular_bytes(config, limit=1024, own=True).startswith(b"terraform_bin:")
