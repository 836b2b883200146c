"""`events.describe`: every event kind in the words users see, and the helpers around it."""

from __future__ import annotations

import json
import typing

import pytest

from npa_sop_tui import events as ev
from npa_sop_tui.events import describe, is_milestone, level_of, parse_event

OP = "deploy-20260101T000000-abc123"

# (event, what describe says, its level, whether one-line reporters show it)
CASES: list[tuple[ev.Event, str, str, bool]] = [
    (
        ev.OperationStarted(operation_id=OP, operation="deploy", name="demo"),
        "deploy demo: started",
        "info",
        True,
    ),
    (
        ev.PhaseChanged(
            operation_id=OP, phase="apply:k8s", label="Creating the Kubernetes cluster"
        ),
        "Creating the Kubernetes cluster",
        "info",
        True,
    ),
    (
        ev.RecipeResolved(
            operation_id=OP,
            origin="git",
            path="/home/u/.npa/recipes/abc/soperator",
            ref="0123abc",
            version="1.22.0",
            install_dir="/home/u/.npa/soperator/demo/install",
            terraform_bin="/usr/bin/terraform",
            terraform_version="1.9.8",
        ),
        "recipe: /home/u/.npa/recipes/abc/soperator (git, ref 0123abc, soperator 1.22.0); "
        "terraform 1.9.8\n  installation: /home/u/.npa/soperator/demo/install",
        "info",
        False,
    ),
    (
        ev.PlanSummary(
            operation_id=OP,
            phase="plan:full",
            add=3,
            change=1,
            remove=2,
            pools=[
                ev.PoolChange(pool="gpu", change="resize", size_before=2, size_after=4),
                ev.PoolChange(pool="cpu", change="replace"),
            ],
            destructive=['module.k8s.nebius_mk8s_v1_node_group.worker["cpu"]'],
        ),
        "plan: 3 to add, 1 to change, 2 to destroy\n"
        "  pool gpu: resize 2→4 nodes\n"
        "  pool cpu: replace\n"
        '  deletes or replaces: module.k8s.nebius_mk8s_v1_node_group.worker["cpu"]',
        "info",
        True,
    ),
    (
        ev.ResourceStarted(operation_id=OP, addr="module.k8s.a", module="k8s", action="create"),
        "module.k8s.a: creating",
        "info",
        False,
    ),
    (
        ev.ResourceProgress(
            operation_id=OP,
            addr="module.k8s.a",
            module="k8s",
            action="delete",
            elapsed=30,
            message="module.k8s.a: Still destroying... [30s elapsed]",
        ),
        "module.k8s.a: still destroying (30s)",
        "info",
        False,
    ),
    (
        ev.ResourceFinished(
            operation_id=OP, addr="module.k8s.a", module="k8s", action="replace", elapsed=125
        ),
        "module.k8s.a: replaced in 2m05s",
        "info",
        True,
    ),
    (
        ev.ResourceFailed(
            operation_id=OP,
            addr="module.slurm.b",
            module="slurm",
            action="create",
            elapsed=4,
            message="quota exceeded\nask for more GPUs",
        ),
        "module.slurm.b: create failed after 4s: quota exceeded\n  ask for more GPUs",
        "error",
        True,
    ),
    (
        ev.Diagnostic(
            operation_id=OP,
            severity="error",
            summary="Invalid value for variable",
            detail="The region must be one of eu-north1, eu-west1.\nFix cluster.yaml.",
            address="var.region",
            range={"filename": "variables.tf", "start": {"line": 12, "column": 1}},
        ),
        "error: Invalid value for variable (var.region) at variables.tf:12\n"
        "  The region must be one of eu-north1, eu-west1.\n"
        "  Fix cluster.yaml.",
        "error",
        True,
    ),
    (
        ev.LogLine(operation_id=OP, stream="stderr", text="Error: state lock held"),
        "Error: state lock held",
        "warning",
        False,
    ),
    (
        ev.Outputs(operation_id=OP, outputs={"login_ip": "10.0.0.5", "kube_context": "x"}),
        "outputs: kube_context, login_ip",
        "info",
        False,
    ),
    (
        ev.OperationFinished(
            operation_id=OP, result="ok", message="deployed 'demo': 42 resources", duration=61.2
        ),
        "finished in 61s: deployed 'demo': 42 resources",
        "info",
        True,
    ),
    (
        ev.PreflightReported(
            operation_id=OP,
            report={
                "rows": [{"resource": "compute.instance.gpu.h100", "verdict": "short by 8"}],
                "price": {"total": "51.424", "currency": "usd"},
                "problems": [{"message": "worker pool gpu: no capacity block group"}],
            },
            blocked=True,
        ),
        "preflight: refused (1 quotas checked, short: compute.instance.gpu.h100); "
        "≈ 51.42 usd/hour\n  worker pool gpu: no capacity block group",
        "error",
        True,
    ),
    (
        ev.PreflightReported(
            operation_id=OP,
            report={"rows": [{"resource": "compute.instance.count", "verdict": "unknown"},
                             {"resource": "mk8s.cluster.count", "verdict": "ok"}]},
            blocked=True,
        ),
        "preflight: refused (2 quotas checked, 1 unknown)",
        "error",
        True,
    ),
    (
        ev.RepairReported(
            operation_id=OP, repair="worker-recovery", result="failed", message="sinfo: x"
        ),
        "repair worker-recovery: failed (sinfo: x)",
        "warning",
        True,
    ),
    (
        ev.GpuCheckReported(
            operation_id=OP, pool="gpu", node="gpu-1", status="FAIL", check="vectorAdd.result",
            message="boom", gpus=8,
        ),
        "GPU check gpu/gpu-1 vectorAdd.result FAIL: boom",
        "error",
        True,
    ),
]  # fmt: skip


def _event_classes() -> set[type]:
    union = typing.get_args(ev.Event)[0]  # Annotated[Union[...], Field(...)]
    return set(typing.get_args(union))


def test_cases_cover_every_event_kind() -> None:
    assert {type(e) for e, *_ in CASES} == _event_classes()


@pytest.mark.parametrize(
    ("event", "words", "level", "milestone"), CASES, ids=[e.kind for e, *_ in CASES]
)
def test_describe_says_each_kind_in_words(
    event: ev.Event, words: str, level: str, milestone: bool
) -> None:
    assert describe(event) == words
    assert describe(event, detail=False) == words.splitlines()[0]
    assert level_of(event) == level
    assert is_milestone(event) is milestone
    # words are for people; the NDJSON line is unchanged and reads back as the same event
    assert parse_event(event.model_dump(mode="json")) == event


def test_operation_outcomes_say_how_it_ended() -> None:
    def finished(result: ev.OperationResult, message: str = "") -> ev.OperationFinished:
        return ev.OperationFinished(operation_id=OP, result=result, message=message, duration=3)

    assert describe(finished("failed", "terraform apply failed")) == (
        "failed after 3s: terraform apply failed"
    )
    assert describe(finished("interrupted", "interrupted by the user")) == (
        "interrupted after 3s: interrupted by the user"
    )
    assert describe(finished("ok")) == "finished in 3s"
    assert [level_of(finished(r)) for r in ("ok", "failed", "interrupted")] == [
        "info",
        "error",
        "warning",
    ]


def test_quiet_variants() -> None:
    info = ev.Diagnostic(
        operation_id=OP, severity="info", summary="Resource targeting is in effect"
    )
    assert describe(info) == "info: Resource targeting is in effect"
    assert not is_milestone(info) and level_of(info) == "info"
    bare = ev.RecipeResolved(operation_id=OP, origin="sandbox", path="/r")
    assert describe(bare) == "recipe: /r (sandbox)"
    assert describe(ev.Outputs(operation_id=OP, outputs={})) == "no outputs"
    npa = ev.LogLine(operation_id=OP, stream="npa", text="reusing the plan")
    assert level_of(npa) == "info"


def test_long_destructive_lists_are_counted_not_spelled_out() -> None:
    doomed = [f"module.k8s.null_resource.n{i}" for i in range(ev.MAX_ADDRESSES_SAID + 3)]
    plan = ev.PlanSummary(
        operation_id=OP, phase="plan", add=0, change=0, remove=len(doomed), destructive=doomed
    )
    last = describe(plan).splitlines()[-1]
    assert last.endswith(f"module.k8s.null_resource.n{ev.MAX_ADDRESSES_SAID - 1} and 3 more")
    assert f"n{ev.MAX_ADDRESSES_SAID}," not in last


def test_events_round_trip_as_ndjson() -> None:
    event = ev.Diagnostic(operation_id="op", severity="warning", summary="s", detail="d")
    line = json.dumps(event.model_dump(mode="json"))
    assert parse_event(line) == event
