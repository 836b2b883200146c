"""`npa-sop serve` refuses what it cannot serve safely, with exit code 2 and no traceback
(the browser test in tests/web covers a served session)."""

from __future__ import annotations

from pathlib import Path

import pytest

from npa_sop_tui.cli.entry import tui_main


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--host", "0.0.0.0"], "refusing to serve beyond this machine"),
        (["--host", "10.0.0.5", "--port", "9000"], "--token-file"),
        (["--port", "70000"], "not a TCP port"),
        (["--tls-cert", "cert.pem"], "--tls-cert and --tls-key go together"),
        (["--name", "Not_A_Name"], "not a cluster name"),
        (["--max-sessions", "0"], "at least 1"),
    ],
)
def test_refused(args: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert tui_main(["serve", *args]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


def test_another_address_with_a_world_readable_token_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    token = tmp_path / "token"
    token.write_text("a-long-enough-shared-token-0123456789\n")
    token.chmod(0o644)
    assert tui_main(["serve", "--host", "0.0.0.0", "--token-file", str(token)]) == 2
    assert "chmod 600" in capsys.readouterr().err


def test_read_only_and_operator_are_exclusive(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        tui_main(["serve", "--read-only", "--operator"])
    assert exit_.value.code == 2
