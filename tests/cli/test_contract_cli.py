"""The existing npa's CLI shapes: `--output json` is ONE document (npa's result fields at the
top level, ours beside them) with progress on stderr; `--output ndjson` is the event
stream; `destroy --force` is npa's confirmation flag."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npa_sop_tui.cli.entry import main

from testkit.fleets import ROOT_KEY

pytestmark = pytest.mark.usefixtures("sandbox_in_home", "fast_standin")

SPEC = (
    "apiVersion: npa.soperator/v0.0.1\nname: {name}\nroot_login_ssh_public_key: {key}\n"
    "workers:\n  - {{name: cpu, size: 1, docker_cache: true, docker_cache_gib: 93}}\n"
)


@pytest.mark.terraform
def test_json_is_one_document_and_ndjson_is_the_stream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "cluster.yaml"
    spec.write_text(SPEC.format(name="jsonone", key=ROOT_KEY))

    assert main(["soperator", "plan", "--spec", str(spec), "--sandbox", "-o", "json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["ok"] is True and plan["provider_mutation"] is False
    assert plan["control_plane"] == {"system_min_size": 3, "system_max_size": 24}

    code = main(["soperator", "deploy", "--spec", str(spec), "--sandbox", "--yes", "-o", "json"])
    captured = capsys.readouterr()
    assert code == 0
    doc = json.loads(captured.out)  # one document: json.loads fails on NDJSON
    assert doc["status"] == "ready" and doc["backend"] == "soperator"
    assert doc["worker_pools"] == ["cpu"] and doc["docker_cache_pools"] == ["cpu"]
    assert doc["region"] and doc["project_id"] and doc["replacement_guard"]["status"] == "passed"
    assert doc["ok"] is True and doc["result"]["name"] == "jsonone"  # ours, beside
    assert captured.err  # progress went to stderr

    code = main(["soperator", "deploy", "--spec", str(spec), "--sandbox", "--yes", "-o", "ndjson"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0 and len(lines) > 2
    events = [json.loads(line) for line in lines[:-1]]
    assert events[0]["kind"] == "operation_started" and events[-1]["kind"] == ("operation_finished")
    assert json.loads(lines[-1])["status"] == "ready"

    code = main(["soperator", "destroy", "--name", "jsonone", "--sandbox", "--force", "-o", "json"])
    gone = json.loads(capsys.readouterr().out)
    assert code == 0 and gone["status"] == "destroyed" and gone["backend"] == "soperator"


def test_ndjson_is_offered_only_where_events_stream(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["soperator", "list", "-o", "ndjson"])
    assert info.value.code == 2
    assert "invalid choice: 'ndjson'" in capsys.readouterr().err


@pytest.mark.terraform
def test_destroy_reads_its_answer_from_stdin_and_its_incomplete_json_is_npas(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    spec = tmp_path / "cluster.yaml"
    spec.write_text(SPEC.format(name="stdinq", key=ROOT_KEY))
    ref = "01e8c67a6182305bf2751a931fc5ee2f642f51a1"  # npa's --ref: the recipe commit
    deploy = ["soperator", "deploy", "--spec", str(spec), "--sandbox", "--yes", "--ref", ref]
    assert main(deploy) == 0
    capsys.readouterr()
    destroy = ["soperator", "destroy", "--name", "stdinq", "--sandbox", "-o", "json"]

    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    assert main(destroy) == 1  # declined, as npa's prompt: nothing destroyed
    assert "not confirmed" in json.loads(capsys.readouterr().out)["message"]
    monkeypatch.setattr("sys.stdin", None)  # closed (`<&-`): no answer, no traceback
    assert main(destroy) == 1
    assert "not confirmed" in json.loads(capsys.readouterr().out)["message"]

    code = main([*destroy, "--yes", "--project", "project-e00elsewhere"])
    assert code == 2  # npa's --project names where the cluster is; another is refused
    assert (
        "does not match the persisted project_id" in json.loads(capsys.readouterr().out)["message"]
    )

    monkeypatch.setenv("NPA_SANDBOX_SCENARIO", "destroy-leftover")
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))  # `echo y | npa soperator destroy`
    assert main([*destroy, "--terraform-dir", str(_recipe_of("stdinq")), "--ref", ref]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is False and doc["status"] == "destroy-incomplete"
    assert doc["name"] == "stdinq" and doc["errors"] and doc["backend"] == "soperator"


def _recipe_of(name: str) -> Path:
    from npa_sop_tui.home import inventory

    entry = inventory.require(name)
    assert entry.recipe is not None
    return Path(entry.recipe.path)


def test_plan_static_is_npas_provider_free_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from npa_sop_tui.lifecycle import api as lifecycle

    async def no_terraform(*_a: object, **_k: object) -> None:
        raise AssertionError("--static runs no Terraform")

    monkeypatch.setattr(lifecycle, "plan", no_terraform)
    spec = tmp_path / "cluster.yaml"
    spec.write_text(SPEC.format(name="static", key=ROOT_KEY))
    # no --sandbox and no identity anywhere: npa's plan needs none
    assert main(["soperator", "plan", "--spec", str(spec), "--static", "-o", "json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan == {
        "name": "static",
        "region": "(resolve-at-deploy)",
        "control_plane": {"system_min_size": 3, "system_max_size": 24},
        "workers": [
            {
                "name": "cpu",
                "platform": "cpu-d3",
                "preset": "8vcpu-32gb",
                "size": 1,
                "capacity_mode": "on-demand",
                "reservation_selector": None,
                "reservation_verified": None,
            }
        ],
        "reservation_preflight": "not-required",
        "provider_mutation": False,
        "backend": "soperator",
    }
    assert main(["soperator", "plan", "--spec", str(spec), "--static"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "Soperator plan for 'static' ((resolve-at-deploy)):",
        "  system autoscaling: 3..24",
        "  worker cpu: size=1 preset=8vcpu-32gb capacity=on-demand",
    ]
