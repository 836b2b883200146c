"""The app's own error log (tui/error_log.py): each traceback is appended, stamped and
placed, to a 0600 file under NPA_HOME/logs that is never reached through a symlink; a log
that cannot be written says so instead of raising a second error."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from npa_sop_tui.tui.error_log import log_places, log_traceback


def _raised(message: str) -> ValueError:
    try:
        raise ValueError(message)
    except ValueError as exc:
        return exc


def test_tracebacks_are_appended_to_a_private_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NPA_HOME", str(tmp_path))
    first = log_traceback(_raised("first"), "the home screen")
    second = log_traceback(_raised("second"), "")
    path = tmp_path / "logs" / "tui-errors.log"
    assert first == second == str(path)
    text = path.read_text()
    assert text.index("ValueError: first") < text.index("ValueError: second")
    assert "in the home screen\n" in text and "in the app\n" in text
    assert "Traceback (most recent call last)" in text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_symlinked_log_is_not_followed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NPA_HOME", str(tmp_path))
    (tmp_path / "logs").mkdir(mode=0o700)
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep\n")
    os.symlink(target, tmp_path / "logs" / "tui-errors.log")
    assert log_traceback(_raised("x"), "here") == "the terminal output"
    assert target.read_text() == "keep\n"


def test_log_places_names_every_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NPA_HOME", str(tmp_path))
    text = log_places()
    assert f"{tmp_path}/logs/tui-errors.log" in text
    assert f"{tmp_path}/logs/npa-debug.log" in text and "operations/" in text
