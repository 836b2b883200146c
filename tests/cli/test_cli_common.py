"""cli/common.py: the shared flag helpers."""

from __future__ import annotations

import argparse

import pytest

from npa_sop_tui.cli.common import add_switch


def _parser(default: bool) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="t")
    add_switch(
        parser, "operator", off=("--read-only", "watch"), on=("--operator", "act"), default=default
    )
    return parser


def test_switch_sets_one_boolean_and_refuses_both(capsys: pytest.CaptureFixture[str]) -> None:
    assert _parser(False).parse_args([]).operator is False
    assert _parser(True).parse_args([]).operator is True
    assert _parser(False).parse_args(["--operator"]).operator is True
    assert _parser(True).parse_args(["--read-only"]).operator is False
    with pytest.raises(SystemExit) as exit_:
        _parser(False).parse_args(["--read-only", "--operator"])
    assert exit_.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
    assert "--read-only" in _parser(False).format_help() and "act" in _parser(False).format_help()
