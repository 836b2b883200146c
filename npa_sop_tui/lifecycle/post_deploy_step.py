"""The deploy's post-deploy step: repairs and the GPU creation gate, reported as events.

Where Slurm is reached: `options.slurm` when the caller supplies a shell (tests); else the
environment's login node (`Environment.login_shell`, at the address the one resolver gives:
`login.host`, else the `soperator-login-svc` LoadBalancer IP, else no shell and a reason that
names what to set; a simulated node where there is no real cluster). The recipe has no
Terraform outputs to read it from. Kubernetes: the kube context the recipe wrote
(`nebius-<name>-slurm`), through the environment's `cluster_api`.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from npa_sop_tui.errors import OperationError
from npa_sop_tui.events import GpuCheckReported, RepairReported
from npa_sop_tui.postdeploy.model import PostDeployResult
from npa_sop_tui.postdeploy.run import run_post_deploy

if TYPE_CHECKING:
    from npa_sop_tui.environment import Environment


class DeploymentDegraded(OperationError):
    """Applied, but a GPU pool failed its creation check (exit 1; `.result` says which)."""

    def __init__(self, result: Any) -> None:
        v = result.validation or {}
        where = ", ".join(f"{k} {v[k]}" for k in ("pool", "node", "phase") if v.get(k))
        cleanup = ""
        if v.get("cleanup_confirmed") is not None:
            cleanup = (
                "; its Slurm jobs were cancelled and the queue is empty"
                if v["cleanup_confirmed"]
                else "; cancelling its Slurm jobs could NOT be confirmed: check squeue"
            )
        super().__init__(
            f"{result.name!r} is applied but degraded-validation: {v.get('message')} "
            f"({where}){cleanup}",
            hint="look at the node (`npa soperator status`, drain reasons), fix or replace it, "
            "then run deploy again; it converges and re-runs the check",
        )
        self.result = result

    def json_extra(self) -> dict[str, Any]:
        return {"result": self.result.model_dump(mode="json")}


async def post_deploy(
    op: Any,
    spec: Any,
    options: Any,
    outputs: dict[str, Any],
    context: str,
    environment: Environment,
    recipe: Any = None,
) -> PostDeployResult:
    op.phase("post-deploy", "Repairs and the GPU creation check")

    def on_repair(outcome: Any) -> None:
        op.emit(RepairReported(operation_id=op.id, repair=outcome.repair,
                               result=outcome.result, message=outcome.message))  # fmt: skip

    def on_gpu(**fields: Any) -> None:
        op.emit(GpuCheckReported(operation_id=op.id, **fields))

    shell, reason, owned = getattr(options, "slurm", None), "", False
    fixes = getattr(options, "apply_fixes", True)
    try:
        with contextlib.ExitStack() as stack:
            kubeconfig = stack.enter_context(environment.cluster_api(context, recipe, spec))
            if shell is None:
                shell, said = await asyncio.to_thread(
                    environment.login_shell, spec, recipe, kubeconfig=kubeconfig, context=context
                )
                owned = shell is not None
                if owned:
                    op.note(said)
                else:
                    reason = said
            return await run_post_deploy(
                spec,
                shell=shell,
                no_shell_reason=reason,
                kubeconfig=kubeconfig,
                context=context,
                apply_fixes=fixes,
                gpu_timeout=float(getattr(options, "gpu_check_timeout", 1800)),
                on_repair=on_repair,
                on_gpu=on_gpu,
            )
    finally:
        if owned and shell is not None:
            await shell.close()
