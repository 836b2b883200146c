"""debuglog.py: `--debug` writes a private, rotating log under NPA_HOME/logs with secrets masked,
takes npa's own DEBUG records but only INFO from other libraries, and leaves nothing behind on
the root logger when stopped; a planted symlink is refused, never written through."""

from __future__ import annotations

import logging
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from npa_sop_tui import __version__
from npa_sop_tui.errors import OperationError, UsageError
from npa_sop_tui.home import debuglog

CAPACITY_ID = "capacityblockgroup-e00secretid42"


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    """start() sets the root and npa loggers' levels and captures warnings: put them back."""
    root = logging.getLogger()
    levels = {name: logging.getLogger(name).level for name in ("", *debuglog._OWN)}
    yield
    debuglog.stop()
    logging.captureWarnings(False)
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)
    assert not [h for h in root.handlers if isinstance(h, debuglog._DebugLogHandler)]


def _flush() -> None:
    for handler in logging.getLogger().handlers:
        handler.flush()


def test_start_opens_a_private_log_in_the_home_and_says_where(
    npa_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = debuglog.start(["soperator", "status", "--name", "demo"])
    assert path == npa_home / "logs" / debuglog.LOG_NAME
    assert capsys.readouterr().err == f"debug log: {path}\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    _flush()
    first = path.read_text().splitlines()[0]
    assert f"npa {__version__}: soperator status --name demo (python " in first
    assert f"NPA_HOME={npa_home}" in first


def test_a_secret_on_the_command_line_or_in_a_message_is_masked(npa_home: Path) -> None:
    path = debuglog.start(["soperator", "deploy", "--capacity-block", CAPACITY_ID])
    assert path is not None
    logging.getLogger("npa_sop_tui.cloud").debug("reserving %s with token=%s", CAPACITY_ID, "t0k")
    try:
        raise RuntimeError(f"failed for {CAPACITY_ID}")
    except RuntimeError as exc:
        debuglog.note_error(exc)
    _flush()
    text = path.read_text()
    assert CAPACITY_ID not in text and "t0k" not in text
    assert "reserving *** with token=***" in text
    assert "RuntimeError: failed for ***" in text  # the traceback is masked too


def test_npa_records_at_debug_other_libraries_from_info(npa_home: Path) -> None:
    path = debuglog.start(["x"])
    assert path is not None
    logging.getLogger("npa_sop_tui.status").debug("own debug line")
    logging.getLogger("npa.cli").debug("npa shim debug line")
    logging.getLogger("urllib3.connectionpool").debug("Authorization: Bearer abc")
    logging.getLogger("urllib3.connectionpool").info("other library info line")
    _flush()
    text = path.read_text()
    assert "own debug line" in text and "npa shim debug line" in text
    assert "other library info line" in text
    assert "Bearer abc" not in text  # other libraries' DEBUG may carry headers


def test_note_error_records_our_errors_plainly_and_bugs_with_their_traceback(
    npa_home: Path,
) -> None:
    path = debuglog.start(["x"])
    assert path is not None
    debuglog.note_error(UsageError("bad flag", hint="drop it"))
    debuglog.note_error(OperationError("terraform failed"))
    try:
        {}["missing"]
    except KeyError as exc:
        debuglog.note_error(exc)
    _flush()
    text = path.read_text()
    assert "INFO npa_sop_tui.debug: error (exit 2): bad flag" in text
    assert "  hint: drop it" in text
    assert "error (exit 1): terraform failed" in text
    assert "ERROR npa_sop_tui.debug: unexpected KeyError" in text
    assert "Traceback (most recent call last)" in text


def test_start_twice_keeps_one_handler_and_stop_removes_only_its_own(npa_home: Path) -> None:
    other = logging.NullHandler()
    root = logging.getLogger()
    root.addHandler(other)
    try:
        debuglog.start(["one"])
        debuglog.start(["two"])
        ours = [h for h in root.handlers if isinstance(h, debuglog._DebugLogHandler)]
        assert len(ours) == 1
        debuglog.stop()
        assert other in root.handlers
        assert not [h for h in root.handlers if isinstance(h, debuglog._DebugLogHandler)]
    finally:
        root.removeHandler(other)


def test_a_planted_symlink_is_refused_and_the_command_runs_without_a_log(
    npa_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("not yours\n")
    logs = npa_home / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    (logs / debuglog.LOG_NAME).symlink_to(target)
    assert debuglog.start(["x"]) is None
    assert capsys.readouterr().err.startswith("debug log: not written: ")
    assert target.read_text() == "not yours\n"
    assert not [h for h in logging.getLogger().handlers if isinstance(h, debuglog._DebugLogHandler)]


def test_the_log_rotates_at_its_size_and_keeps_a_bounded_number_of_files(
    npa_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(debuglog, "MAX_BYTES", 500)
    path = debuglog.start(["x"])
    assert path is not None
    for i in range(200):
        logging.getLogger("npa_sop_tui.t").debug("line %03d %s", i, "x" * 40)
    _flush()
    names = sorted(p.name for p in path.parent.iterdir())
    assert names == [debuglog.LOG_NAME] + [
        f"{debuglog.LOG_NAME}.{i}" for i in range(1, debuglog.BACKUPS + 1)
    ]
    assert all(p.stat().st_size <= 600 for p in path.parent.iterdir())
    assert "line 199" in path.read_text()


def test_logging_sink_logs_each_event_as_json_and_passes_it_on(npa_home: Path) -> None:
    from npa_sop_tui.events import PhaseChanged

    path = debuglog.start(["x"])
    assert path is not None
    seen: list[PhaseChanged] = []
    sink = debuglog.logging_sink(seen.append)
    event = PhaseChanged(operation_id="op1", phase="plan", label=f"planning {CAPACITY_ID}")
    sink(event)
    _flush()
    assert seen == [event]  # passed on unchanged: masking is the sinks' own job
    line = next(ln for ln in path.read_text().splitlines() if "npa_sop_tui.events" in ln)
    assert '"kind":"phase_changed"' in line and '"phase":"plan"' in line
    assert CAPACITY_ID not in line and "planning ***" in line


def test_debug_on_a_full_disk_says_so_once_and_a_successful_list_still_succeeds(
    tiny_disk: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No "--- Logging error ---" traceback per line, no failure at the end: the log stops
    (one line says why) and `list` ends as it would have, exit 0."""
    from npa_sop_tui.cli.entry import main

    from testkit.disks import fill

    monkeypatch.setenv("NPA_HOME", str(tiny_disk / "home"))
    assert main(["soperator", "list"]) == 0  # the home exists before the disk fills
    capsys.readouterr()
    fill(tiny_disk)
    assert main(["--debug", "soperator", "list"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("No clusters in the inventory")
    assert "Traceback" not in err and "Logging error" not in err
    assert err.count("debug log: stopped: No space left on device") == 1
    assert not [h for h in logging.getLogger().handlers if isinstance(h, debuglog._DebugLogHandler)]
