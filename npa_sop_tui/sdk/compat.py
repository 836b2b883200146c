"""The existing npa SDK's names that are not this SDK's own: its loaders, exception types,
provider-free plan, status/destroy shapes and `apply_post_deploy_fixes`.

`npa_sop_tui.sdk.soperator` re-exports them, so `from npa.sdk import soperator` offers both
vocabularies.
Results answer `result["field"]` as npa's dictionaries did (`DictAccess`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from npa_sop_tui.errors import OperationError
from npa_sop_tui.lifecycle.post_deploy_step import DeploymentDegraded
from npa_sop_tui.lifecycle.results import DestroyResult, DictAccess, StateCaptureFailed
from npa_sop_tui.spec.model import SoperatorSpec
from npa_sop_tui.status.model import ClusterStatus

SoperatorStateCaptureError = StateCaptureFailed


def load_spec(path: str | os.PathLike[str]) -> SoperatorSpec:
    """npa's `load_spec(path)`: read, parse and validate a spec file; a `SpecError`
    (`SoperatorSpecError`, a `ValueError`) lists every problem with file:line."""
    from npa_sop_tui.spec.model import load_spec as load_file

    return load_file(Path(path).expanduser()).spec


def spec_from_mapping(data: Any) -> SoperatorSpec:
    """npa's `spec_from_mapping(data)`: build a spec from parsed YAML/JSON. Fields are
    checked strictly (types, unknown keys); the cluster rules run in `load_spec` and in every
    operation, as in npa."""
    from npa_sop_tui.spec.model import spec_from_mapping as build

    return build(data, validate=False)


@dataclasses.dataclass
class DeploymentValidationFailure:
    """npa's public-safe description of a failed post-apply validation gate."""

    code: str
    message: str
    check: str
    pool: str | None = None
    phase: str | None = None
    cleanup_confirmed: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "status": "failed",
            "code": self.code,
            "check": self.check,
            "message": self.message,
        }
        for key in ("pool", "phase", "cleanup_confirmed"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out

    @classmethod
    def from_validation(cls, validation: dict[str, Any] | None) -> DeploymentValidationFailure:
        v = validation or {}
        return cls(
            code=str(v.get("code") or "gpu_creation_check_failed"),
            message=str(v.get("message") or "post-deploy validation failed"),
            check=str(v.get("check") or "gpu-creation"),
            pool=v.get("pool"),
            phase=v.get("phase"),
            cleanup_confirmed=v.get("cleanup_confirmed"),
        )


class SoperatorDeploymentValidationError(DeploymentDegraded, RuntimeError):
    """Applied, but the GPU creation check failed (npa's name; exit 1 on the CLI).

    `.result` is the `DeployResult` (status `degraded-validation`, also readable as
    `result["status"]`), `.failure` a `DeploymentValidationFailure`."""

    @property
    def failure(self) -> DeploymentValidationFailure:
        return DeploymentValidationFailure.from_validation(self.result.validation)

    @property
    def deployment(self) -> dict[str, Any]:
        return dict(self.result.model_dump(mode="json"))


def as_validation_error(exc: DeploymentDegraded) -> SoperatorDeploymentValidationError:
    if isinstance(exc, SoperatorDeploymentValidationError):
        return exc
    out = SoperatorDeploymentValidationError(exc.result)
    out.__cause__ = exc.__cause__
    return out


class ContractPlan(DictAccess, BaseModel):
    """npa's provider-free plan: what `plan(spec)` returns when no Terraform plan is asked
    for (nothing is read from the cloud or the config: region `(resolve-at-deploy)`)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    region: str
    control_plane: dict[str, Any]
    workers: list[dict[str, Any]]
    reservation_preflight: str
    provider_mutation: bool = False
    backend: str = "soperator"


def contract_plan(spec: SoperatorSpec, capacity: dict[str, str] | None = None) -> ContractPlan:
    from npa_sop_tui.lifecycle import steps
    from npa_sop_tui.lifecycle.contract_fields import plan_fields

    steps.check_spec(spec)  # the cluster rules, as npa's plan runs spec.validate()
    return ContractPlan(**plan_fields(spec, capacity))


class SoperatorStatus(DictAccess, ClusterStatus):
    """`ClusterStatus` with npa's SDK fields: `status` (`running` once Kubernetes answered,
    else `unreachable`) and `backend`."""

    status: str = "running"
    backend: str = "soperator"


def with_contract_status(snapshot: ClusterStatus) -> SoperatorStatus:
    return SoperatorStatus(**snapshot.model_dump(), status=snapshot.reach)


def incomplete_result(name: str, exc: OperationError, remaining: list[str]) -> DestroyResult:
    """npa returns (does not raise) an incomplete destroy: `status: destroy-incomplete`
    with `errors`; `remaining` lists what is still in the Terraform state."""
    return DestroyResult(
        operation_id=getattr(exc, "operation_id", "") or "",
        name=name,
        duration=0.0,
        install_dir=str(getattr(exc, "install_dir", "") or ""),
        destroyed=0,
        remaining=remaining,
        status="destroy-incomplete",
        errors=[exc.message] if hasattr(exc, "message") else [str(exc)],
    )


def apply_post_deploy_fixes(
    context: str,
    kubectl_bin: str | None = None,
    *,
    namespace: str = "soperator",
    on_status: Callable[[str], None] | None = None,
    timeout_minutes: int = 20,
    kubeconfig: str | os.PathLike[str] | None = None,
) -> list[str]:
    """npa's idempotent post-deploy repairs on the cluster behind kube `context`: the
    4.1.x SlurmCluster CRD `plugStackConfig` fix and the `soperator-slurm-scripts` configmap.
    Returns the warnings (a failed repair is a warning, never an exception).

    Kubernetes is reached with the official client, so `kubectl_bin` is accepted and not
    used; only the `soperator` namespace exists for these repairs. Worker recovery needs SSH
    to the login node and runs inside `deploy` (`apply_fixes=True`)."""
    import asyncio

    from npa_sop_tui.postdeploy.repairs import repair_4_1

    if namespace != "soperator":
        return [f"post-deploy fixes apply to the 'soperator' namespace only, not {namespace!r}"]
    path = Path(kubeconfig) if kubeconfig else None
    outcomes = asyncio.run(asyncio.wait_for(repair_4_1(path, context), timeout_minutes * 60))
    warnings = []
    for outcome in outcomes:
        line = f"post-deploy {outcome.repair}: {outcome.result}"
        if outcome.message:
            line += f" ({outcome.message})"
        if on_status is not None:
            on_status(line)
        if outcome.result == "failed":
            warnings.append(line)
    return warnings
