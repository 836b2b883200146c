"""Spec → the soperator recipe's input variables, as `terraform.tfvars.json`.

The output is complete: Terraform replaces whole objects from tfvars (no deep merge), so every
object is written in full and nothing relies on the example terraform.tfvars. Identity goes to
Terraform as `TF_VAR_*` in the environment, never into the file. Names and shapes follow the
contract of the recipe commit the spec deploys on (recipe/table.py picks it, recipe/shape.py
shapes the values, recipe/contract.py checks the result).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from npa_sop_tui.errors import OperationError, UsageError
from npa_sop_tui.home.capacity import CAPACITY_ENV
from npa_sop_tui.home.config import Identity
from npa_sop_tui.recipe.contract import Contract, load_contract, require
from npa_sop_tui.recipe.rules import ENV_VARIABLES, recipe_problems
from npa_sop_tui.recipe.shape import (
    ACTIVE_CHECKS_SCOPE,
    NVIDIA_CONFIG_LINES,
    check_hosted,
    nodesets,
    storage,
)
from npa_sop_tui.recipe.table import load_table
from npa_sop_tui.spec.catalog import Catalog, load_catalog
from npa_sop_tui.spec.findings import Finding, errors_of
from npa_sop_tui.spec.model import SUPPORTED_VERSIONS, SoperatorSpec, SpecError
from npa_sop_tui.spec.model import kube_context as kube_context  # re-exported per contracts.md
from npa_sop_tui.spec.sshkeys import ResolvedKey

__all__ = ["recipe_problems"]

TFVARS_FILE = "terraform.tfvars.json"
# Backups are force-disabled, so the recipe never uses this password; it is a fixed,
# non-secret placeholder only because the variable is required.
BACKUPS_PLACEHOLDER_PASSWORD = "unused-backups-disabled"
# The upstream .envrc exports these for the public observability stack: a fixed Nebius o11y
# tenant and profile name, each overridable through the same variables it reads.
O11Y_TENANT_ID = "tenant-e00vyb5y1x5vqkzw5e"
O11Y_TENANT_ENV = "NEBIUS_OLLY_TENANT_ID"
O11Y_PROFILE = "soperator-telemetry"
O11Y_PROFILE_ENV = "NEBIUS_OLLY_PROFILE"


REDACTED = "<redacted>"


@dataclass
class Rendered:
    """What Terraform needs for one cluster. `.secrets` are values logs must redact."""

    tfvars: dict[str, Any]
    env: dict[str, str]
    recipe_version: str
    kube_context: str
    sizing_tier: str
    recipe_commit: str = ""  # the commit whose contract the variables follow
    env_names: list[str] = field(default_factory=lambda: [f"TF_VAR_{v}" for v in ENV_VARIABLES])
    secrets: list[str] = field(default_factory=list)
    root_key_fingerprint: str | None = None
    root_key_source: str | None = None
    warnings: list[Finding] = field(default_factory=list)

    def tfvars_json(self) -> str:
        return json.dumps(self.tfvars, indent=2, sort_keys=True) + "\n"

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        return text

    def redacted_json(self) -> str:
        """`tfvars_json()` with every secret masked in the data itself, before it is encoded:
        JSON writes a non-ASCII ID as `\\u00e9…`, which a search of the encoded text for the
        ID no longer finds."""
        return json.dumps(self._masked(self.tfvars), indent=2, sort_keys=True) + "\n"

    def _masked(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {self.redact(str(k)): self._masked(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._masked(v) for v in value]
        return value

    def write(self, out_dir: str | Path) -> Path:
        """Write `terraform.tfvars.json` atomically with mode 0600 (it may hold reservation
        IDs); a failure leaves any previous file intact."""
        from npa_sop_tui.home.fsutil import SECRET_MODE, atomic_write_text

        target = Path(out_dir) / TFVARS_FILE
        atomic_write_text(target, self.tfvars_json(), mode=SECRET_MODE)
        return target


# --- capacity (reservations) supplied at run time -------------------------------------------


def _resolve_capacity(spec: SoperatorSpec, capacity: Mapping[str, str]) -> dict[str, str]:
    """Per GPU pool, the reservation ID to use; run-time IDs win over the spec's.

    Validation has already refused run-time IDs for unknown, CPU or preemptible pools."""
    resolved: dict[str, str] = {}
    for pool in spec.workers:
        if pool.name in capacity:
            resolved[pool.name] = capacity[pool.name]
        elif pool.capacity_block_group_id:
            resolved[pool.name] = pool.capacity_block_group_id
        elif pool.capacity_block_group_name:
            raise UsageError(
                f"worker pool {pool.name!r}: a capacity block name must be resolved to an ID "
                "before rendering Terraform",
                hint=f"give its ID at run time: {pool.name}=capacityblockgroup-… in "
                f"{CAPACITY_ENV} or the capacity option of the call",
            )
    return resolved


# --- the variables -------------------------------------------------------------------------


def _common(spec: SoperatorSpec, contract: Contract, key: str) -> dict[str, Any]:
    apparmor = spec.use_default_apparmor_profile
    out: dict[str, Any] = {
        "company_name": spec.name,
        "production": False,
        "iam_merge_request_url": "",
        "slurm_login_public_ip": True,
        "k8s_version": spec.effective_k8s_version,
        "node_group_version": spec.effective_node_group_version,
        "use_preinstalled_gpu_drivers": True,
        "nvidia_config_lines": list(NVIDIA_CONFIG_LINES),
        "k8s_cluster_node_ssh_access_users": [],
        "slurm_operator_version": spec.slurm_operator_version,
        "slurm_operator_stable": True,
        "allow_empty_jail_submounts": True,
        "slurm_login_ssh_root_public_keys": [key],
        "accounting_enabled": spec.accounting,
        "slurm_rest_enabled": spec.rest_enabled,
        "slurm_exporter_enabled": spec.telemetry,
        "telemetry_enabled": spec.telemetry,
        "public_o11y_enabled": spec.telemetry,
        # Unset in the spec: the recipe's own default (true in every commit read).
        "use_default_apparmor_profile": (
            contract.default("use_default_apparmor_profile") if apparmor is None else apparmor
        ),
        "active_checks_scope": ACTIVE_CHECKS_SCOPE,
        # The commit's own default: 64 GiB up to 4.1.6, 1024 GiB in 4.1.13.
        "slurm_shared_memory_size_gibibytes": contract.default(
            "slurm_shared_memory_size_gibibytes"
        ),
        "soperator_notifier": {"enabled": False},
        "nccl_inspector_profiling": {"enabled": False},
        "backups_enabled": "force_disable",
        "backups_password": BACKUPS_PLACEHOLDER_PASSWORD,
        "backups_schedule": "@daily-random",
        "backups_prune_schedule": "@daily-random",
        "backups_retention": {"keepDaily": 7},
        "cleanup_bucket_on_destroy": False,
    }
    if contract.declares("cloud_environment"):
        out["cloud_environment"] = "production"
    if contract.declares("slurm_partition_config_type"):
        out["slurm_partition_config_type"] = "default"
    return out


def _env(identity: Identity | None, spec: SoperatorSpec) -> dict[str, str]:
    identity = identity or Identity()
    environ = os.environ
    env: dict[str, str] = {}
    pairs = {
        "region": identity.region,
        "iam_tenant_id": identity.tenant_id,
        "iam_project_id": identity.project_id,
        "vpc_subnet_id": identity.subnet_id,
    }
    for name, value in pairs.items():
        if value:
            env[f"TF_VAR_{name}"] = value
    # Required (tenant- prefix) even with o11y off; with it on, the upstream .envrc points at
    # Nebius's o11y tenant, not the cluster's.
    env["TF_VAR_o11y_iam_tenant_id"] = environ.get(O11Y_TENANT_ENV) or O11Y_TENANT_ID
    # "" is allowed only while public o11y is off, which is exactly when telemetry is off.
    profile = environ.get(O11Y_PROFILE_ENV) or O11Y_PROFILE
    env["TF_VAR_o11y_profile"] = profile if spec.telemetry else ""
    return env


def supported_versions() -> list[str]:
    return list(SUPPORTED_VERSIONS)


def render(
    spec: SoperatorSpec,
    *,
    identity: Identity | None = None,
    recipe_version: str | None = None,
    recipe_ref: str | None = None,
    capacity: Mapping[str, str] | None = None,
    root_login_key: ResolvedKey | str | None = None,
    catalog: Catalog | None = None,
    validate: bool = True,
) -> Rendered:
    """Render `spec` for its recipe commit: the table's default for the spec's operator
    version, or `recipe_ref` when it names a commit with a contract.

    `validate=False` renders a spec as deployed without npa's spec rules: a destroy that
    rebuilds its installation from it must not be refused by a rule added since the deploy
    (the recipe's own rules are still checked below).

    Raises `SpecError` if the spec has errors, `UsageError` for an unsupported version, a
    commit that cannot host the spec (GB300), an unresolved capacity name, or no root login
    key (resolved from the spec, environment, config and ~/.ssh when not given).
    """
    from npa_sop_tui.spec.validate import validate_spec

    cat = catalog or load_catalog()
    findings = validate_spec(spec, catalog=cat, capacity=capacity) if validate else []
    if errors_of(findings):
        raise SpecError(findings)
    version = recipe_version or spec.slurm_operator_version
    if version not in SUPPORTED_VERSIONS:
        raise UsageError(
            f"recipe version {version!r} is not supported",
            hint=f"supported versions: {', '.join(SUPPORTED_VERSIONS)}",
        )
    if version != spec.slurm_operator_version:
        raise UsageError(
            f"recipe version {version} differs from the spec's slurm_operator_version "
            f"{spec.slurm_operator_version}",
            hint="change slurm_operator_version in the spec to deploy another version",
        )
    commit = load_table().contract_commit(version, recipe_ref)
    contract = load_contract(commit)
    check_hosted(spec, contract)
    reservations = _resolve_capacity(spec, dict(capacity or {}))
    key = _root_key(spec, root_login_key)
    tfvars = _common(spec, contract, key.key)
    tfvars.update(storage(spec, contract))
    tfvars.update(nodesets(spec, cat, contract, reservations))
    # A failure here or below is a bug, not a user mistake: validation should have refused.
    require(tfvars, contract, from_env=ENV_VARIABLES)
    problems = recipe_problems(tfvars, version, cat, contract=contract)
    if problems:
        raise OperationError(
            "rendered variables break the recipe's rules: " + "; ".join(problems),
            hint="please report this with the spec (IDs redacted)",
        )
    return Rendered(
        tfvars=tfvars,
        env=_env(identity, spec),
        recipe_version=version,
        kube_context=spec.kube_context,
        sizing_tier=spec.sizing_tier,
        recipe_commit=commit,
        secrets=sorted(set(reservations.values())),
        root_key_fingerprint=key.fingerprint,
        root_key_source=key.source,
        warnings=[f for f in findings if not f.is_error],
    )


def _root_key(spec: SoperatorSpec, given: ResolvedKey | str | None) -> ResolvedKey:
    from npa_sop_tui.spec.sshkeys import KeyProblem, check_public_key, resolve_root_login_key

    if isinstance(given, ResolvedKey):
        return given
    if isinstance(given, str):
        try:
            return ResolvedKey(check_public_key(given), "caller")
        except KeyProblem as exc:
            raise UsageError(str(exc)) from None
    from npa_sop_tui.home.config import load_config

    spec_key = spec.root_login_ssh_public_key or (
        spec.ssh_public_keys[0] if spec.ssh_public_keys else None
    )
    return resolve_root_login_key(spec_key=spec_key, config_path=load_config().ssh_public_key_path)
