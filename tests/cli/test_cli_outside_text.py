"""Text from outside is data in every CLI view: a Slurm drain reason, an inventory record, a
job template in the home, a value in config.yaml, a path in an error. Shown through
`safe_text` (every control visible, never obeyed; markup is text), in text mode; JSON keeps
the raw value. Driven through `npa_sop_tui.cli.entry.main`, as a user runs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npa_sop_tui.cli.entry import main

from testkit.hostile import ATTACK, OSC52, TITLE, assert_inert
from testkit.inventory_files import record
from testkit.sandbox_cli import TWO_CPU_NODES, deploy_in_sandbox

SPEC = TWO_CPU_NODES
SEEN = ("␛]52;c;ZWNobyBvd25lZA==␇", "␛]0;owned␇", "␛[2J", "<U+009B>31m", "<U+202E>")
"""How the drain reason's controls read once shown (its whitespace is folded by the drain)."""


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _shown_safely(*texts: str) -> None:
    for text in texts:
        assert_inert(text)
        assert "Traceback" not in text


@pytest.mark.terraform
@pytest.mark.slow
def test_a_drain_reason_with_escapes_and_markup_is_shown_not_obeyed_in_nodes_and_status(
    npa_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The reason sets no title, plants no link, writes no clipboard (OSC 52), clears no
    screen, and `[/] x` is text: in `nodes`, `nodes --node` and `status`."""
    deploy_in_sandbox(SPEC, tmp_path, monkeypatch, capsys)
    target = ("--name", "ops", "--sandbox")
    code, _, err = _cli(
        capsys, "soperator", "drain", *target, "--node", "cpu-1", "--reason", ATTACK, "--yes"
    )
    assert code == 0, err

    for view in (("nodes",), ("nodes", "--node", "cpu-1"), ("status",)):
        code, out, err = _cli(capsys, "soperator", *view, *target)
        assert code in (0, 1), err  # status: 1 for a degraded cluster
        _shown_safely(out, err)
        assert "[/] x" in out, view
        for picture in SEEN:
            assert picture in out, (view, picture)

    code, out, _ = _cli(capsys, "soperator", "nodes", *target, "-o", "json")
    node = {n["name"]: n for n in json.loads(out)["nodes"]}["cpu-1"]
    assert OSC52 in node["reason"] and TITLE in node["reason"]  # JSON keeps the raw value


def test_list_shows_a_record_someone_else_wrote_safely(
    npa_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A teammate's (or a copied home's) record: its user and host become one cell each."""
    operation = {"id": "deploy-1", "kind": "deploy", "started": 1.0, "result": "failed",
                 "user": ATTACK, "host": "x\nfake-row  deployed"}  # fmt: skip
    record(npa_home, "demo", region="eu-north1", operations=[operation])
    code, out, err = _cli(capsys, "soperator", "list")
    assert code == 0, err
    _shown_safely(out, err)
    row = next(line for line in out.splitlines() if line.startswith("demo"))
    assert "␛]52;c;" in row and "x␊fake-row" in row  # one row: no forged second line
    assert not any(line.startswith("fake-row") for line in out.splitlines())


def test_list_templates_shows_a_summary_from_the_home_safely(
    npa_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = npa_home / "job-templates"
    folder.mkdir()
    (folder / "evil.sh").write_text(f"#!/bin/sh\n# npa-summary: [/] x {OSC52}{TITLE}\nhostname\n")
    code, out, err = _cli(capsys, "soperator", "run", "--name", "demo", "--list-templates")
    assert code == 0, err
    _shown_safely(out, err)
    line = next(line for line in out.splitlines() if line.startswith("evil"))
    assert "[/] x ␛]52;c;ZWNobyBvd25lZA==␇␛]0;owned␇" in line
    code, out, _ = _cli(
        capsys, "soperator", "run", "--name", "demo", "--list-templates", "-o", "json"
    )
    summaries = {t["name"]: t["summary"] for t in json.loads(out)["templates"]}
    assert OSC52 in summaries["evil"]


def test_config_show_puts_a_value_with_controls_on_one_line(
    npa_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (npa_home / "config.yaml").write_text('terraform_bin: "/opt/tf\\e]0;owned\\a\\nregion x"\n')
    code, out, err = _cli(capsys, "soperator", "config", "show")
    assert code == 0, err
    _shown_safely(out, err)
    line = next(line for line in out.splitlines() if "terraform_bin" in line)
    assert "/opt/tf␛]0;owned␇␊region x" in line


def test_an_error_quoting_outside_text_is_shown_not_obeyed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / f"spec{TITLE}[/].yaml"
    code, out, err = _cli(capsys, "soperator", "validate", "--spec", str(missing))
    assert code == 2
    _shown_safely(out, err)
    assert "spec␛]0;owned␇[/].yaml" in err
    code, out, err = _cli(capsys, "soperator", "validate", "--spec", str(missing), "-o", "json")
    assert code == 2
    _shown_safely(out, err)  # JSON escapes every control itself
    assert str(missing) in json.loads(out)["message"]  # and keeps the raw value
