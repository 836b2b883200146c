"""Fleet over real Terraform on the stand-in recipe: concurrency, partial failure, status,
destroy and network reclaim. Every target runs the standalone lifecycle functions."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.cli.entry import main
from npa_sop_tui.events import Event
from npa_sop_tui.fleet.loader import parse_fleet_text
from npa_sop_tui.fleet.model import FleetTarget
from npa_sop_tui.fleet.network import read_record
from npa_sop_tui.fleet.runner import FleetRunner, FleetRunOptions
from npa_sop_tui.home import inventory

from testkit.fleets import fleet_text

pytestmark = pytest.mark.usefixtures("sandbox_in_home", "fast_standin")


def _max_overlap(intervals: list[tuple[float, float]]) -> int:
    points = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals])
    running = peak = 0
    for _, step in points:  # at equal times an end (-1) sorts before a start (+1)
        running += step
        peak = max(peak, running)
    return peak


def _cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(list(argv))
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.terraform
@pytest.mark.slow
def test_three_targets_two_projects_at_most_two_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = fleet_text(name="conc", a="ca", b="cb", c="cc")
    path = tmp_path / "fleet.yaml"
    path.write_text(text)
    loaded = parse_fleet_text(text, source=str(path))
    seen: list[tuple[str, Event]] = []

    def record(target: FleetTarget, event: Event) -> None:
        seen.append((target.key, event))

    runner = FleetRunner(
        loaded, loaded.targets, FleetRunOptions(concurrency=2, sandbox=True), record
    )
    report = asyncio.run(runner.deploy())

    assert report.ok, [t.message for t in report.targets]
    assert [(t.key, t.status) for t in report.targets] == [
        ("alpha/ca", "deployed"),
        ("alpha/cb", "deployed"),
        ("beta/cc", "deployed"),
    ]
    # From the lifecycle's own event timestamps: each target's operation window.
    windows: dict[str, list[float]] = {}
    for key, event in seen:
        if event.kind in ("operation_started", "operation_finished"):
            windows.setdefault(key, []).append(event.ts)
    assert all(len(w) == 2 for w in windows.values()) and len(windows) == 3
    intervals = [(w[0], w[1]) for w in windows.values()]
    assert _max_overlap(intervals) == 2  # never three, and the limit was actually used
    # events of each target arrive in order
    for key in windows:
        stamps = [e.ts for k, e in seen if k == key]
        assert stamps == sorted(stamps)

    # one shared, fleet-owned network per project, used by every target of that project
    alpha, beta = read_record("conc", "alpha"), read_record("conc", "beta")
    assert alpha is not None and beta is not None and alpha.owned
    assert {t.subnet_id for t in report.targets if t.project_key == "alpha"} == {alpha.subnet_id}
    install = Path(inventory.require("ca").install_dir or "")
    assert json.loads((install / ".npa-env.json").read_text())["TF_VAR_vpc_subnet_id"] == (
        alpha.subnet_id
    )

    code, status = _cli_json(
        capsys, "fleet", "status", "--file", str(path), "--sandbox", "--output", "json"
    )
    assert code == 0
    assert [(r["key"], r["cluster_state"], r["owned_by_fleet"]) for r in status["targets"]] == [
        ("alpha/ca", "deployed", True),
        ("alpha/cb", "deployed", True),
        ("beta/cc", "deployed", True),
    ]

    code, destroyed = _cli_json(
        capsys,
        "fleet",
        "destroy",
        "--file",
        str(path),
        "--sandbox",
        "--yes",
        "-j",
        "3",
        "--output",
        "json",
    )
    assert code == 0 and destroyed["succeeded"] == 3
    assert read_record("conc", "alpha") is None and read_record("conc", "beta") is None
    assert {e.state for e in inventory.list_clusters()} == {"destroyed"}


@pytest.mark.terraform
def test_one_failing_target_leaves_the_others_deployed_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The stand-in's Terraform rejects the region of project beta: a real plan failure.
    path = tmp_path / "fleet.yaml"
    path.write_text(fleet_text(name="part", a="pa", b="pb", c="pc", beta_region="xx-nowhere1"))
    code, report = _cli_json(
        capsys,
        "fleet",
        "deploy",
        "--file",
        str(path),
        "--sandbox",
        "--yes",
        "-j",
        "2",
        "--output",
        "json",
    )
    assert code == 1
    assert (report["succeeded"], report["failed"], report["ok"]) == (2, 1, False)
    by_key = {t["key"]: t for t in report["targets"]}
    assert by_key["alpha/pa"]["status"] == "deployed" and by_key["alpha/pb"]["status"] == "deployed"
    assert by_key["beta/pc"]["status"] == "failed"
    assert "Unknown region" in by_key["beta/pc"]["message"]
    assert by_key["beta/pc"]["error"]["error"] == "TerraformFailed"

    code, status = _cli_json(
        capsys, "fleet", "status", "--file", str(path), "--sandbox", "--output", "json"
    )
    assert code == 1  # a failed target is not a healthy fleet
    assert [(r["key"], r["fleet_state"], r["cluster_state"]) for r in status["targets"]] == [
        ("alpha/pa", "deployed", "deployed"),
        ("alpha/pb", "deployed", "deployed"),
        ("beta/pc", "failed", "failed"),
    ]

    # Text mode names the failure per target, too.
    code = main(["fleet", "status", "--file", str(path), "--sandbox"])
    out = capsys.readouterr().out
    assert code == 1 and "beta/pc" in out and "2 deployed" in out and "1 failed" in out


@pytest.mark.terraform
def test_fail_fast_starts_nothing_after_the_first_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = fleet_text(name="ff", a="fa", b="fb", c="fc").replace(
        "    project_id: project-e00alpha\n",
        "    project_id: project-e00alpha\n    region: xx-nowhere1\n",
    )
    path = tmp_path / "fleet.yaml"
    path.write_text(text)
    code, report = _cli_json(
        capsys,
        "fleet",
        "deploy",
        "--file",
        str(path),
        "--sandbox",
        "--yes",
        "--fail-fast",
        "--output",
        "json",
    )
    assert code == 1
    assert [(t["key"], t["status"]) for t in report["targets"]] == [
        ("alpha/fa", "failed"),
        ("alpha/fb", "not-run"),
        ("beta/fc", "not-run"),
    ]
    assert inventory.get("fb") is None and inventory.get("fc") is None


def test_a_standalone_cluster_with_the_same_name_is_not_taken_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A cluster deployed with `npa soperator deploy` has an inventory record and no fleet
    # marker; the kube context is global, so the fleet must not adopt it.
    inventory.save(
        inventory.InventoryEntry(name="taken", kube_context="nebius-taken-slurm", state="deployed")
    )
    path = tmp_path / "fleet.yaml"
    path.write_text(fleet_text(name="own", a="taken"))
    code = main(["fleet", "deploy", "--file", str(path), "--sandbox", "--yes"])
    err = capsys.readouterr().err
    assert code == 2
    assert "alpha/taken: a cluster named 'taken' already exists in the local inventory" in err
    assert read_record("own", "alpha") is None  # refused before any network was recorded


@pytest.mark.terraform
def test_text_mode_plan_of_a_selected_soperator_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The anchor crashed here (KeyError 'cpu_nodes'); ours prints a per-target table.
    path = tmp_path / "fleet.yaml"
    path.write_text(fleet_text(name="txt", a="ta", b="tb", c="tc"))
    code = main(
        ["fleet", "plan", "--file", str(path), "--sandbox", "--select", "label=team=serving"]
    )
    captured = capsys.readouterr()
    assert code == 0
    assert "beta/tc" in captured.out and "planned" in captured.out
    assert "alpha/" not in captured.out
    assert "[beta/tc] plan: " in captured.err  # live progress, prefixed per target
    assert inventory.list_clusters() == []  # a plan deploys nothing


@pytest.mark.terraform
async def test_cancel_interrupts_running_targets_and_records_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from npa_sop_tui.fleet.state import load_state

    monkeypatch.setenv("TF_VAR_standin_sleep_seconds", "5")
    loaded = parse_fleet_text(fleet_text(name="intr", a="ia", b="ib", c="ic"))
    targets = [t for t in loaded.targets if t.project_key == "alpha"]
    started = asyncio.Event()

    def watch(target: FleetTarget, event: Event) -> None:
        if event.kind == "resource_started":
            started.set()

    runner = FleetRunner(loaded, targets, FleetRunOptions(concurrency=2, sandbox=True), watch)
    task = asyncio.ensure_future(runner.deploy())
    await asyncio.wait_for(started.wait(), 60)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    state = load_state("intr")
    assert {state.targets[t.key].state for t in targets} == {"interrupted"}
    for target in targets:
        entry = inventory.get(target.name)
        assert entry is not None and entry.last_operation is not None
        assert entry.last_operation.result == "interrupted"
