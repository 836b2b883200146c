"""`npa soperator config show`: every setting with its value and source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npa_sop_tui.cli.entry import main


def test_config_show_names_each_source(
    npa_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (npa_home / "config.yaml").write_text("region: eu-north1\nlogin: {port: 2222}\n")
    monkeypatch.setenv("NPA_TENANT_ID", "tenant-from-env")
    monkeypatch.setenv("NPA_CAPACITY_BLOCK_GROUPS", "gpu=capacityblockgroup-hidden")
    assert main(["soperator", "config", "show", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = {row["key"]: row for row in doc["settings"]}
    assert doc["config_file"] == str(npa_home / "config.yaml")
    assert rows["region"]["value"] == "eu-north1"
    assert rows["region"]["source"] == f"config {npa_home / 'config.yaml'}"
    assert rows["tenant_id"] == {
        "key": "tenant_id",
        "value": "tenant-from-env",
        "source": "env NPA_TENANT_ID",
    }
    assert rows["login.port"]["value"] == 2222
    assert rows["status.interval_seconds"] == {
        "key": "status.interval_seconds",
        "value": 10.0,
        "source": "default",
    }
    assert rows["capacity"]["value"] == {"gpu": "<set>"}

    assert main(["soperator", "config", "show"]) == 0
    text = capsys.readouterr().out
    assert "hidden" not in text and "tenant-from-env" in text and "env NPA_TENANT_ID" in text


def test_config_show_reports_a_broken_config_with_exit_2(
    npa_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (npa_home / "config.yaml").write_text("regoin: x\n")
    assert main(["soperator", "config", "show"]) == 2
    err = capsys.readouterr().err
    assert "regoin" in err and "did you mean 'region'" in err and "Traceback" not in err


def test_config_show_has_no_wide_empty_column(capsys: pytest.CaptureFixture[str]) -> None:
    """The value column is as wide as its longest value: each source follows right after."""
    assert main(["soperator", "config", "show"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line[:2] == "  "]
    rows = [line.split() for line in lines]
    key_width = max(len(r[0]) for r in rows)
    value_width = min(40, max(len(r[1]) for r in rows))
    start = 2 + key_width + 2 + value_width + 2  # where every source begins
    for line, (_, _, *source) in zip(lines, rows, strict=True):
        assert line[start - 2 : start] == "  " and line[start:] == " ".join(source), line


def test_config_show_reads_the_existing_npa_config_and_names_each_section(
    npa_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = npa_home / "config.yaml"
    text = (
        "projects:\n"
        "  dev: {project_id: project-e00dev, tenant_id: tenant-e00npa, region: eu-north1}\n"
        "  prod: {project_id: project-e00prod, tenant_id: tenant-e00npa, region: us-central1}\n"
        "default_project: dev\ndefault_workbench: b200\nworkflows: {distill: {sim: genesis}}\n"
    )
    cfg.write_text(text)
    assert main(["soperator", "config", "show", "-o", "json"]) == 0
    rows = {row["key"]: row for row in json.loads(capsys.readouterr().out)["settings"]}
    assert rows["region"]["source"] == f"config {cfg} projects.dev (default_project)"
    assert rows["project"]["value"] == "dev"
    assert main(["soperator", "config", "show", "--project", "prod"]) == 0
    out = capsys.readouterr().out
    assert "us-central1" in out and "projects.prod (--project prod)" in out
    assert main(["soperator", "list"]) == 0  # npa's file is no longer refused
    assert main(["soperator", "config", "show", "--project", "qa"]) == 2
    assert "aliases: dev, prod" in capsys.readouterr().err
    assert cfg.read_text() == text
