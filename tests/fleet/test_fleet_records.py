"""A damaged fleet record (state file or a project's network record) stops a
fleet command before any target runs — exit 2 naming the file and the problem — instead of
running Terraform first and then dying with a TaskGroup traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npa_sop_tui.cli.entry import main

pytestmark = pytest.mark.usefixtures("sandbox_in_home")

ASSETS = Path(__file__).resolve().parents[2] / "assets"


@pytest.mark.parametrize(
    ("record", "text", "needle"),
    [
        ("fleet-state.json", "{bad", "line 1 column 2"),
        ("fleet-state.json", "[]", "Input should be an object"),
        ("alpha/.npa-fleet-network.json", "x", "Invalid JSON"),
        ("alpha/.npa-fleet-network.json", None, "cannot read it"),
    ],
)
@pytest.mark.parametrize("command", ["plan", "deploy"])
def test_damaged_fleet_record_stops_before_any_target(
    record: str,
    text: str | None,
    needle: str,
    command: str,
    npa_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("TF_VAR_standin_sleep_seconds", "0")
    path = npa_home / "fleet" / "standin" / record
    path.parent.mkdir(parents=True)
    if text is None:
        path.mkdir()
    else:
        path.write_text(text)
    argv = ["fleet", command, "--file", str(ASSETS / "fleet-standin.yaml"), "--sandbox"]
    argv += ["--select", "name=train-a", "--output", "json"]
    if command == "deploy":
        argv.append("--yes")
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, err
    assert "Traceback" not in err
    doc = json.loads(out)  # exactly one JSON document
    assert doc["ok"] is False
    assert str(path) in doc["message"] and needle in doc["message"]
    # nothing ran: no cluster folder was created for the target
    assert not (npa_home / "soperator" / "train-a").exists()


@pytest.mark.parametrize("command", ["deploy", "destroy"])
def test_fleet_prompt_keeps_json_stdout_clean(
    command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In a terminal without --yes the question goes to stderr; declining gives exactly one
    JSON document on stdout (exit 1) and runs nothing."""
    import io
    import sys

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdin", Tty("n\n"))
    monkeypatch.setattr(sys, "stderr", Tty())
    argv = ["fleet", command, "--file", str(ASSETS / "fleet-standin.yaml"), "--sandbox"]
    code = main([*argv, "--select", "name=train-a", "--output", "json"])
    out = capsys.readouterr().out
    assert code == 1
    doc = json.loads(out)
    assert doc["ok"] is False and "not confirmed" in doc["message"]
    assert "them? [y/N]" in sys.stderr.getvalue()
