"""The deploy's post-deploy step: repairs and the GPU creation gate, reported as events.

Where Slurm is reached: `options.slurm` when the caller supplies a shell (tests, the
Environment); else SSH to `login.host` from the npa config when it is set (in the sandbox too,
like `status`); else the sandbox's simulated login node for sandbox and stand-in runs; else
SSH to the deploy's `login_ip` output.
Kubernetes: the kube context the recipe wrote (`nebius-<name>-slurm`), or for the sandbox a
short-lived fake API server.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from npa_sop_tui.errors import OperationError
from npa_sop_tui.events import GpuCheckReported, RepairReported
from npa_sop_tui.postdeploy import run_post_deploy
from npa_sop_tui.postdeploy.model import PostDeployResult


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
    op: Any, spec: Any, options: Any, outputs: dict[str, Any], context: str, *, sandboxed: bool
) -> PostDeployResult:
    op.phase("post-deploy", "Repairs and the GPU creation check")

    def on_repair(outcome: Any) -> None:
        op.emit(RepairReported(operation_id=op.id, repair=outcome.repair,
                               result=outcome.result, message=outcome.message))  # fmt: skip

    def on_gpu(**fields: Any) -> None:
        op.emit(GpuCheckReported(operation_id=op.id, **fields))

    shell = getattr(options, "slurm", None)
    reason = ""
    owned_shell = None
    kubeconfig: Path | None = None
    with contextlib.ExitStack() as stack:
        if shell is None:
            from npa_sop_tui.config import load_config
            from npa_sop_tui.postdeploy.shell import login_shell

            config = load_config()
            configured = getattr(getattr(config, "login", None), "host", None)
            if sandboxed and not configured:
                from npa_sop_tui.paths import npa_home
                from npa_sop_tui.sandbox.fake_cloud_state import scenario_from_env
                from npa_sop_tui.sandbox.slurm_login import SimulatedLogin

                folder = npa_home() / "sandbox-gpu" / spec.name
                shell = SimulatedLogin(spec, folder, scenario_from_env())
            else:
                # a configured login.host wins even in the sandbox (a real Slurm to test on)
                owned_shell = shell = login_shell(spec.name, outputs, config)
                if shell is None:
                    reason = (
                        "no login node address: set login.host in the npa config or check "
                        "the login Service (soperator-login-svc)"
                    )
        fixes = getattr(options, "apply_fixes", True)
        if sandboxed and fixes and spec.slurm_operator_version.startswith("4.1."):
            from npa_sop_tui.sandbox.cluster_api import sandbox_cluster_api

            kubeconfig = stack.enter_context(sandbox_cluster_api(context))
        try:
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
            if owned_shell is not None:
                await owned_shell.close()
    raise AssertionError("unreachable")
