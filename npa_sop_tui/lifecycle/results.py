"""What a lifecycle operation takes and returns, and how it fails."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from npa_sop_tui.errors import OperationError
from npa_sop_tui.home.inventory import RecipeInfo
from npa_sop_tui.terraform.plan_reading import PlanChanges
from npa_sop_tui.terraform.runner import RunResult

if TYPE_CHECKING:
    from npa_sop_tui.environment import Environment
    from npa_sop_tui.home.config import Identity


@dataclass
class LifecycleOptions:
    """How to run one operation.

    `environment` is where it runs (the real cloud when None, with settings from the
    environment and `config.yaml`); the other fields are the caller's explicit settings for
    this call and win over the environment's. `env` is added to Terraform's environment.
    """

    environment: Environment | None = None
    terraform_dir: str | Path | None = None
    identity: Identity | None = None
    capacity: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    parallelism: int | None = None
    recipe_version: str | None = None
    recipe_ref: str | None = None  # the upstream commit to deploy on, instead of the table's
    root_login_key_file: str | Path | None = None
    # Cloud steps (lifecycle/cloud_steps.py, post_deploy_step.py) and the existing npa's flags.
    cloud: Any = None  # a cloud.CloudClient; None: the environment's (sandbox or the SDK)
    profile: str | None = None  # Nebius CLI profile (--profile)
    cloud_timeout: float | None = None  # seconds per cloud read; None: 120
    preflight: bool = True  # --no-preflight
    allow_unknown: bool = False  # --allow-unknown: go on past quotas preflight cannot judge
    project: str | None = None  # --project: the project ID to deploy into
    timeout_minutes: float | None = 90  # --timeout: each Terraform plan or apply
    source_preflight_only: bool = False  # resolve and check the recipe, then stop
    apply_fixes: bool = True  # --apply-fixes/--skip-fixes: the post-deploy repairs
    gpu_check_timeout: float = 1800  # --gpu-creation-check-timeout, seconds
    slurm: Any = None  # a postdeploy.shell.SlurmShell; None: SSH to the login node

    def flags(self) -> dict[str, Any]:
        """The explicit settings of this call, keyed like `settings.Settings`."""
        flags: dict[str, Any] = {
            "terraform_dir": self.terraform_dir,
            "parallelism": self.parallelism,
            "root_login_key_file": self.root_login_key_file,
            "recipe.ref": self.recipe_ref,
            "profile": self.profile,  # also mints the state bucket's key (state/credentials)
            "project": self.project,  # an ID, or the alias of an npa `projects:` section
            "cloud_timeout": self.cloud_timeout,  # also bounds minting the bucket's key
        }
        if self.capacity:
            flags["capacity"] = dict(self.capacity)
        return {key: value for key, value in flags.items() if value is not None}


class DictAccess:
    """npa's SDK returned dictionaries; typed results read like them too: `result["status"]`,
    `result.get(...)`, `"region" in result`, `result.keys()`/`items()` and so `dict(result)`
    (whose `json.dumps` is npa's document). Values are as `model_dump(mode="json")` gives."""

    def _document(self) -> dict[str, Any]:
        return self.model_dump(mode="json")  # type: ignore[attr-defined,no-any-return]

    def __getitem__(self, key: str) -> Any:
        if key not in type(self).model_fields:  # type: ignore[attr-defined]
            raise KeyError(key)
        return self.model_dump(mode="json", include={key})[key]  # type: ignore[attr-defined]

    def __contains__(self, key: object) -> bool:
        return key in type(self).model_fields  # type: ignore[attr-defined]

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def keys(self) -> list[str]:
        return list(type(self).model_fields)  # type: ignore[attr-defined]

    def values(self) -> list[Any]:
        return list(self._document().values())

    def items(self) -> list[tuple[str, Any]]:
        return list(self._document().items())


class _Result(DictAccess, BaseModel):
    model_config = ConfigDict(extra="forbid")

    operation_id: str
    name: str
    duration: float
    log: str | None = None


class PlanResult(_Result):
    changes: PlanChanges
    install_dir: str
    recipe: RecipeInfo
    terraform_version: str
    preflight: dict[str, Any] | None = None  # cloud.preflight.PreflightReport as JSON
    # The existing npa's plan document (lifecycle/contract_fields.py), beside ours.
    region: str = ""
    control_plane: dict[str, Any] = Field(default_factory=dict)
    workers: list[dict[str, Any]] = Field(default_factory=list)
    reservation_preflight: str = "not-required"
    provider_mutation: bool = False
    backend: str = "soperator"


class DeployResult(_Result):
    kube_context: str
    outputs: dict[str, Any]
    install_dir: str
    recipe: RecipeInfo
    resources: int
    phases: list[str]
    preflight: dict[str, Any] | None = None
    # The existing npa's result fields (postdeploy/model.py): ready | degraded-validation,
    # or source-preflight-passed when --source-preflight-only stopped before anything ran.
    status: str = "ready"
    deployment_status: str = "applied"
    validation: dict[str, Any] | None = None
    gpu_creation_checks: list[dict[str, Any]] = Field(default_factory=list)
    post_deploy_fixes: str = "skipped"
    post_deploy_fix_warnings: list[str] = Field(default_factory=list)
    # The existing npa's result fields (lifecycle/contract_fields.py).
    region: str = ""
    project_id: str = ""
    worker_pools: list[str] = Field(default_factory=list)
    docker_cache_pools: list[str] = Field(default_factory=list)
    control_plane: dict[str, Any] = Field(default_factory=dict)
    workers: list[dict[str, Any]] = Field(default_factory=list)
    replacement_guard: dict[str, Any] = Field(default_factory=dict)
    backend: str = "soperator"


class DestroyResult(_Result):
    install_dir: str
    destroyed: int
    remaining: list[str] = Field(default_factory=list)
    # destroyed | destroy-incomplete (the SDK returns that one, as npa does, with `errors`)
    # | source-preflight-passed when --source-preflight-only
    status: str = "destroyed"
    errors: list[str] = Field(default_factory=list)
    backend: str = "soperator"


class DestructivePlanError(OperationError):
    """The plan would delete or replace resources and that was not allowed."""

    def __init__(self, addresses: list[str], phase: str) -> None:
        shown = "\n".join(f"  - {a}" for a in addresses[:50])
        more = f"\n  … and {len(addresses) - 50} more" if len(addresses) > 50 else ""
        super().__init__(
            f"the {phase} plan would delete or replace {len(addresses)} resource(s); "
            f"refusing to apply:\n{shown}{more}",
            hint="check the spec change; allow destructive changes if this is intended",
        )
        self.addresses = addresses

    def json_extra(self) -> dict[str, Any]:
        return {"destructive": self.addresses}


class TerraformFailed(OperationError):
    def __init__(self, what: str, run: RunResult, install_dir: Path) -> None:
        super().__init__(
            f"terraform {what} failed: {run.error_text()}",
            hint=f"fix the problem and run it again; Terraform's folder is {install_dir}",
        )
        self.diagnostics = [d.model_dump(mode="json") for d in run.errors]
        self.no_space, self.errored_state = run.no_space, run.errored_state  # recovery.py
        self.install_dir = install_dir  # where Terraform ran: its relative paths start there

    def json_extra(self) -> dict[str, Any]:
        return {"diagnostics": self.diagnostics}


class DestroyIncomplete(OperationError):
    """Not everything went; its JSON carries npa's result fields (`status:
    "destroy-incomplete"`, `errors`) beside ours (`remaining`)."""

    def __init__(self, name: str, remaining: list[str], reason: str) -> None:
        shown = "\n".join(f"  - {a}" for a in remaining[:50]) or "  (state could not be read)"
        super().__init__(
            f"destroy of {name!r} is incomplete ({reason}); "
            f"{len(remaining)} resource(s) remain in state:\n{shown}",
            hint=f"fix the cause and destroy {name!r} again",
        )
        self.remaining = remaining
        self.name = name

    def json_extra(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": "destroy-incomplete",
            "errors": [self.message],
            "remaining": self.remaining,
            "backend": "soperator",
        }


class StateCaptureFailed(OperationError, RuntimeError):
    """Terraform applied, but the resulting state could not be read back and recorded (npa's
    `SoperatorStateCaptureError`). `.result` says so: status `deployed-state-capture-failed`,
    `deployment_status: applied`, `error` and `recovery`."""

    RECOVERY = (
        "the Terraform state and the inventory entry were kept; run the same deploy again "
        "once the state is readable (it converges); do not delete resources by name"
    )

    def __init__(self, name: str, error: str) -> None:
        super().__init__(
            f"{name!r} was applied but its state could not be recorded: {error}",
            hint=self.RECOVERY,
        )
        self.result = {
            "name": name,
            "status": "deployed-state-capture-failed",
            "deployment_status": "applied",
            "error": error,
            "recovery": self.RECOVERY,
            "backend": "soperator",
        }

    def json_extra(self) -> dict[str, Any]:
        return {"result": self.result}
