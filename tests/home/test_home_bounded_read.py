"""`bounded_read`: a named file is read only when it is a regular file within the limit."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from npa_sop_tui.cli.entry import main
from npa_sop_tui.home.bounded_read import Unreadable, read_regular_bytes
from npa_sop_tui.sdk import soperator as sdk
from npa_sop_tui.spec.model import SpecError


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
        with pytest.raises(Unreadable, match=re.escape(f"is {kind}, not a spec file")):
            read_regular_bytes(path, limit=1024, what="spec file")
    # every front door that reads a spec, as a user runs it: exit 2, one clear line, at once
    for command in (["validate"], ["plan"], ["deploy", "--yes"], ["set", "name=x"]):
        for path in ("/dev/zero", "/dev/urandom", str(fifo)):
            code = main(["soperator", command[0], "--spec", path, *command[1:]])
            err = capsys.readouterr().err
            assert code == 2, (command, path, err)
            assert "not a spec file" in err and "Traceback" not in err
    with pytest.raises(SpecError, match="not a spec file"):
        sdk.load(fifo)


def test_a_file_larger_than_the_limit_is_refused_while_reading(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"a: 1\n" * 300)
    with pytest.raises(Unreadable, match="spec is larger than 1 KiB"):
        read_regular_bytes(big, limit=1024, what="spec file", subject="spec")
    assert read_regular_bytes(big, limit=1500) == b"a: 1\n" * 300


def test_a_missing_file_and_a_folder_say_which(tmp_path: Path) -> None:
    with pytest.raises(Unreadable) as missing:
        read_regular_bytes(tmp_path / "nope.yaml", limit=10, what="spec file")
    assert missing.value.missing and "spec file not found" in missing.value.reason
    with pytest.raises(Unreadable, match="is a folder, not a spec file"):
        read_regular_bytes(tmp_path, limit=10, what="spec file")
