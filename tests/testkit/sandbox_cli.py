"""Driving `npa soperator … --sandbox` in-process: a cluster deployed from a spec text, and
one command's JSON document."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.cli.entry import main

TWO_CPU_NODES = """\
apiVersion: npa.soperator/v0.0.1
name: ops
workers:
  - name: cpu
    size: 2
"""
"""The sandbox cluster `ops`: one pool of two CPU nodes (cpu-0, cpu-1)."""


def deploy_in_sandbox(
    spec_text: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> Path:
    """`deploy --sandbox --yes` of `spec_text` (written to tmp_path/cluster.yaml), with the
    stand-in resources made at once and a HOME of its own; its output is read away."""
    monkeypatch.setenv("TF_VAR_standin_sleep_seconds", "0")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    spec = tmp_path / "cluster.yaml"
    spec.write_text(spec_text)
    assert main(["soperator", "deploy", "--spec", str(spec), "--sandbox", "--yes"]) == 0
    capsys.readouterr()
    return spec


def cli_json(
    capsys: pytest.CaptureFixture[str], name: str, *args: str
) -> tuple[int, dict[str, Any]]:
    """`npa soperator <args> --name <name> --sandbox -o json [-- command]`: the exit code and
    the last JSON document printed (options go before the `--`, a remote command after it)."""
    command = list(args[args.index("--") :]) if "--" in args else []
    options = list(args[: len(args) - len(command)])
    code = main(["soperator", *options, "--name", name, "--sandbox", "-o", "json", *command])
    lines = capsys.readouterr().out.strip().splitlines()
    return code, json.loads(lines[-1])
