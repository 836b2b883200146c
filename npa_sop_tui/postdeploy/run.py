"""The post-deploy sequence: repairs, then the GPU creation gate, as one call."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from npa_sop_tui.postdeploy.gpu_gate import run_gate
from npa_sop_tui.postdeploy.model import PostDeployResult, Validation
from npa_sop_tui.postdeploy.repairs import RepairOutcome, recover_workers, repair_4_1
from npa_sop_tui.postdeploy.shell import SlurmShell


async def run_post_deploy(
    spec: Any,
    *,
    shell: SlurmShell | None,
    no_shell_reason: str = "",
    kubeconfig: Path | None,
    context: str,
    apply_fixes: bool,
    gpu_timeout: float,
    on_repair: Callable[[RepairOutcome], None],
    on_gpu: Callable[..., None],
) -> PostDeployResult:
    warnings: list[str] = []
    if apply_fixes:
        outcomes: list[RepairOutcome] = []
        if spec.slurm_operator_version.startswith("4.1."):
            outcomes += await repair_4_1(kubeconfig, context)
        if shell is not None:
            outcomes.append(await recover_workers(shell))
        else:
            outcomes.append(RepairOutcome("worker-recovery", "failed", no_shell_reason))
        for outcome in outcomes:
            on_repair(outcome)
            if outcome.result == "failed":
                warnings.append(f"{outcome.repair}: {outcome.message}")
    checks: list[Any] = []
    if not spec.has_gpu:
        validation = Validation(status="passed")
    elif shell is None:
        validation = Validation(
            status="failed",
            code="gpu_creation_check_failed",
            message=f"the GPU creation check could not run: {no_shell_reason}",
            phase="login",
        )
        on_gpu(pool="*", status="FAIL", check="login", message=no_shell_reason)
    else:
        validation, checks = await run_gate(spec, shell, timeout=gpu_timeout, emit=on_gpu)
    return PostDeployResult(
        status="ready" if validation.status == "passed" else "degraded-validation",
        validation=validation,
        gpu_creation_checks=checks,
        post_deploy_fixes="applied" if apply_fixes else "skipped",
        post_deploy_fix_warnings=warnings,
    )
