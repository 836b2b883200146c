"""`nodes / jobs / drain / resume / cancel --sandbox`, each with --output json, on a sandbox
cluster deployed by the CLI (real Terraform on the stand-in recipe)."""

from __future__ import annotations

from pathlib import Path

import pytest

from npa_sop_tui.cli.entry import main

from testkit.sandbox_cli import TWO_CPU_NODES, cli_json, deploy_in_sandbox

pytestmark = [pytest.mark.terraform, pytest.mark.slow]

SPEC = TWO_CPU_NODES


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    return cli_json(capsys, "ops", *args)


def test_operator_actions_on_a_sandbox_cluster(
    npa_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    deploy_in_sandbox(SPEC, tmp_path, monkeypatch, capsys)

    code, doc = _run(capsys, "nodes")
    assert code == 0 and [n["name"] for n in doc["nodes"]] == ["cpu-0", "cpu-1"]

    code, doc = _run(capsys, "drain", "--node", "cpu-1", "--reason", "bad [/] disk", "--yes")
    assert code == 0 and doc["action"] == "drain" and "DRAIN" in doc["state"]
    code, doc = _run(capsys, "nodes")
    node = {n["name"]: n for n in doc["nodes"]}["cpu-1"]
    assert node["state"] == "drained" and node["reason"].startswith("bad [/] disk")
    code, doc = _run(capsys, "nodes", "--node", "cpu-1")
    assert doc["node"]["reason"] == "bad [/] disk" and doc["node"]["reason_by"] == "root"

    code, doc = _run(capsys, "resume", "--node", "cpu-1", "--yes")
    assert code == 0 and "DRAIN" not in doc["state"]
    code, doc = _run(capsys, "nodes")
    assert {n["name"]: n for n in doc["nodes"]}["cpu-1"]["reason"] is None

    # the first job: its output, then its exit code (Done when of `run --sandbox`)
    code = main(
        ["soperator", "run", "--name", "ops", "--sandbox", "--", "sh", "-c", "echo hi; exit 3"]
    )
    captured = capsys.readouterr()
    assert code == 3 and captured.out == "hi\n"
    assert "SANDBOX job 1 submitted" in captured.err and "FAILED, exit code 3" in captured.err
    code, doc = _run(capsys, "run", "--detach", "--", "sleep 30")  # shell text, one word
    assert code == 0 and doc["state"] == "PENDING" and doc["sandbox"] is True
    first = doc["job_id"]
    code, doc = _run(capsys, "jobs")
    assert [j["id"] for j in doc["jobs"]] == [first]
    assert [j["job_id"] for j in doc["npa_jobs"]] == ["1", first]
    assert doc["npa_jobs"][0]["exit_code"] == 3 and doc["npa_jobs"][0]["output_path"]
    code, doc = _run(capsys, "logs", "--job", "1")
    assert code == 0 and doc["output"] == "hi\n" and doc["state"] == "FAILED"
    code, doc = _run(capsys, "cancel", "--job", first, "--yes")
    assert code == 0 and doc == {
        "ok": True,
        "name": "ops",
        "action": "cancel",
        "job": first,
        "message": f"cancelled job {first}",
    }
    code, doc = _run(capsys, "logs", "--job", first, "--follow")
    assert code == 143 and doc["state"] == "CANCELLED"
    code, doc = _run(capsys, "jobs", "--history")
    assert doc["available"] is False and "accounting" in doc["note"]

    code, doc = _run(capsys, "drain", "--node", "cpu-7", "--reason", "x", "--yes")
    assert code == 2 and doc["ok"] is False and "cpu-7" in doc["message"]
