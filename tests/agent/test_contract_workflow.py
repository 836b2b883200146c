"""npa's workflow format (`npa.workflow/v0.0.1`, `kind: Workflow`, states): run here for
the states whose toolRef is ours, with `{{config.*}}` and initial/next/terminal order; other
toolRefs, shell states and steps lists under that apiVersion are refused when read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from npa_sop_tui.agent.workflow import WorkflowError, load_workflow, parse_workflow_text
from npa_sop_tui.cli.entry import main

ASSETS = Path(__file__).resolve().parents[2] / "assets"

HEAD = "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {name: t}\n"


def _parse(text: str, base: Path) -> object:
    return parse_workflow_text(text, source="wf.yaml", base_dir=base)


def test_order_follows_initial_and_next_with_config_substitution(tmp_path: Path) -> None:
    shutil.copy(ASSETS / "workflow-standin-cluster.yaml", tmp_path / "c.yaml")
    loaded = _parse(
        HEAD + "config:\n  spec_name: c\n  soperator_spec: '{{config.spec_name}}.yaml'\n"
        "initial: first\n"
        "states:\n"
        "  last: {terminal: true}\n"
        "  second: {toolRef: infra.soperator.plan, with: {sandbox: true}, next: last}\n"
        "  first: {toolRef: infra.soperator.validate, next: second}\n",
        tmp_path,
    )
    assert [s.name for s in loaded.file.steps] == ["first", "second"]  # type: ignore[attr-defined]
    assert loaded.inputs[0]["spec_path"] == str((tmp_path / "c.yaml").resolve())  # type: ignore[attr-defined]
    assert loaded.inputs[1]["sandbox"] is True  # type: ignore[attr-defined]
    assert loaded.format == "states"  # type: ignore[attr-defined]


def test_without_initial_the_first_state_runs_and_params_overlay_its_config(
    tmp_path: Path,
) -> None:
    for name in ("c.yaml", "other-a.yaml"):
        shutil.copy(ASSETS / "workflow-standin-cluster.yaml", tmp_path / name)
    loaded = _parse(
        HEAD + "config: {soperator_spec: c.yaml, mode: a}\n"
        "states:\n"
        "  first:\n"
        "    toolRef: infra.soperator.validate\n"
        "    params: {soperator_spec: 'other-{{config.mode}}.yaml'}\n"
        "    next: second\n"
        "  second: {toolRef: infra.soperator.plan, with: {sandbox: true}, next: last}\n"
        "  last: {terminal: true}\n",
        tmp_path,
    )
    assert [s.name for s in loaded.file.steps] == ["first", "second"]  # type: ignore[attr-defined]
    inputs = loaded.inputs  # type: ignore[attr-defined]
    assert inputs[0]["spec_path"] == str((tmp_path / "other-a.yaml").resolve())
    assert inputs[1]["spec_path"] == str((tmp_path / "c.yaml").resolve())  # its own state only
    with pytest.raises(WorkflowError, match=r"params.lr must be a string, number or bool"):
        _parse(
            HEAD + "config: {soperator_spec: c.yaml}\nstates:\n"
            "  a: {toolRef: infra.soperator.plan, params: {lr: [1, 2]}, terminal: true}\n",
            tmp_path,
        )


@pytest.mark.parametrize(
    ("states", "needle"),
    [
        ("  a: {toolRef: workbench.lerobot.eval, next: z}\n  z: {terminal: true}\n",
         "toolRef 'workbench.lerobot.eval' is not one of this runner's tools"),
        ("  a: {run: {shell: 'rm -rf /'}, next: z}\n  z: {terminal: true}\n",
         "runs a shell command"),
        ("  a: {toolRef: infra.soperator.plan, resources: gpu, next: z}\n  z: {terminal: true}\n",
         "'resources' is not supported here"),
        ("  a: {toolRef: infra.soperator.plan, next: nowhere}\n", "next must name a state"),
        ("  a: {toolRef: infra.soperator.plan, next: a}\n", "reached twice"),
    ],
)  # fmt: skip
def test_states_we_cannot_run_are_refused_at_validation(
    tmp_path: Path, states: str, needle: str
) -> None:
    (tmp_path / "c.yaml").write_text("x: 1\n")
    text = HEAD + "config: {soperator_spec: c.yaml}\ninitial: a\nstates:\n" + states
    with pytest.raises(WorkflowError) as info:
        _parse(text, tmp_path)
    assert needle in info.value.render()
    assert info.value.exit_code == 2


def test_a_steps_list_under_npas_api_version_is_refused(tmp_path: Path) -> None:
    text = "apiVersion: npa.workflow/v0.0.1\nname: t\nsteps:\n  - toolRef: infra.soperator.plan\n"
    with pytest.raises(WorkflowError, match=r"npa-sop\.workflow/v0\.0\.1"):
        _parse(text, tmp_path)


def test_missing_config_key_and_unknown_placeholder(tmp_path: Path) -> None:
    with pytest.raises(WorkflowError, match=r"reads config\.soperator_spec"):
        _parse(HEAD + "initial: a\nstates:\n  a: {toolRef: infra.soperator.deploy, "
               "terminal: true}\n", tmp_path)  # fmt: skip
    with pytest.raises(WorkflowError, match=r"unknown placeholder \{\{config.nope\}\}"):
        _parse(HEAD + "config: {soperator_spec: '{{config.nope}}'}\ninitial: a\nstates:\n"
               "  a: {toolRef: infra.soperator.deploy, terminal: true}\n", tmp_path)  # fmt: skip


@pytest.mark.terraform
@pytest.mark.usefixtures("sandbox_in_home", "fast_standin")
def test_upstream_shaped_workflow_deploys_in_the_sandbox(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("workflow-npa-states.yaml", "workflow-standin-cluster.yaml"):
        shutil.copy(ASSETS / name, tmp_path / name)
    path = tmp_path / "workflow-npa-states.yaml"
    assert load_workflow(path).format == "states"
    code = main(["workflow", "run", str(path), "--sandbox", "--output", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0, doc
    assert [(s["name"], s["tool"], s["status"]) for s in doc["steps"]] == [
        ("check", "infra.soperator.validate", "ok"),
        ("deploy", "infra.soperator.deploy", "ok"),
    ]
    deployed = doc["steps"][1]["output"]
    assert deployed["status"] == "ready" and deployed["backend"] == "soperator"


async def test_a_fleet_state_reads_config_fleet_spec(tmp_path: Path) -> None:
    from npa_sop_tui.agent.workflow import run_workflow

    shutil.copy(ASSETS / "fleet-standin.yaml", tmp_path / "fleet.yaml")
    loaded = _parse(
        HEAD + "config: {fleet_spec: fleet.yaml}\ninitial: up\nstates:\n"
        "  up: {toolRef: infra.fleet.deploy, with: {sandbox: true}, terminal: true}\n",
        tmp_path,
    )
    assert loaded.inputs[0]["spec_path"] == str((tmp_path / "fleet.yaml").resolve())  # type: ignore[attr-defined]
    checked = await run_workflow(loaded, dry_run=True)  # type: ignore[arg-type]
    assert checked.ok and checked.steps[0].status == "would-run"
    assert checked.steps[0].tool == "infra.fleet.deploy"
