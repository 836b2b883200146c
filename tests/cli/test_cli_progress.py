"""Text progress of `npa soperator plan|deploy|destroy` when stderr is not a terminal."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from npa_sop_tui import events as ev
from npa_sop_tui.cli.progress import TextProgress

OP = "deploy-20260101T000000-abc123"


def _run(stream: list[ev.Event], *, verbose: bool = False) -> list[str]:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=200, color_system=None)
    with TextProgress(console, verbose=verbose) as progress:
        for event in stream:
            progress(event)
    return out.getvalue().splitlines()


STREAM: list[ev.Event] = [
    ev.OperationStarted(operation_id=OP, operation="deploy", name="demo"),
    ev.PhaseChanged(operation_id=OP, phase="init", label="Preparing Terraform"),
    ev.RecipeResolved(
        operation_id=OP, origin="sandbox", path="/r/soperator", terraform_version="1.9.8"
    ),
    ev.PlanSummary(
        operation_id=OP,
        phase="plan:full",
        add=2,
        change=0,
        remove=1,
        pools=[ev.PoolChange(pool="gpu", change="resize", size_before=1, size_after=3)],
        destructive=["module.k8s.old"],
    ),
    ev.ResourceStarted(operation_id=OP, addr="module.k8s.a", module="k8s", action="create"),
    ev.ResourceProgress(
        operation_id=OP, addr="module.k8s.a", module="k8s", action="create", elapsed=10
    ),
    ev.ResourceFinished(
        operation_id=OP, addr="module.k8s.a", module="k8s", action="create", elapsed=12
    ),
    ev.ResourceFailed(
        operation_id=OP,
        addr="module.k8s.b",
        module="k8s",
        action="create",
        elapsed=3,
        message="quota exceeded",
    ),
    ev.Diagnostic(operation_id=OP, severity="info", summary="Resource targeting is in effect"),
    ev.Diagnostic(
        operation_id=OP, severity="error", summary="Quota exceeded", detail="Ask for more."
    ),
    ev.LogLine(operation_id=OP, stream="terraform", text="module.k8s.a: Creating..."),
    ev.LogLine(operation_id=OP, stream="npa", text="reusing the saved plan"),
    ev.Outputs(operation_id=OP, outputs={"kube_context": "nebius-demo-slurm"}),
    ev.PhaseChanged(operation_id=OP, phase="done", label="deploy failed"),
    ev.OperationFinished(operation_id=OP, result="failed", message="apply failed", duration=20),
]


def test_a_pipe_gets_one_described_line_per_phase_and_resource_then_diagnostics() -> None:
    assert _run(STREAM) == [
        "» Preparing Terraform",
        "recipe: /r/soperator (sandbox); terraform 1.9.8",
        "  plan: 2 to add, 0 to change, 1 to destroy",
        "    pool gpu: resize 1→3 nodes",
        "    deletes or replaces: module.k8s.old",
        "  ✓ module.k8s.a: created in 12s",
        "  ✗ module.k8s.b: create failed after 3s: quota exceeded",
        "  reusing the saved plan",
        # kept until the end, in full; info diagnostics are not repeated
        "error: Quota exceeded",
        "  Ask for more.",
    ]


def test_verbose_also_shows_terraform_log_lines() -> None:
    lines = _run(STREAM, verbose=True)
    assert "  module.k8s.a: Creating..." in lines
    assert "  module.k8s.a: Creating..." not in _run(STREAM)


def test_a_pipe_never_gets_long_paths_split_across_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    monkeypatch.setattr("sys.stderr", out)
    long_path = "/home/someone/" + "deep/" * 30 + "soperator"
    with TextProgress() as progress:  # the console it builds for itself, on a pipe
        progress(
            ev.RecipeResolved(
                operation_id=OP, origin="sandbox", path=long_path, terraform_version="1.9.8"
            )
        )
    assert any(long_path in line for line in out.getvalue().splitlines())
