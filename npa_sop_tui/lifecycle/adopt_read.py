"""What an installation made without this product runs with, read through Terraform.

- its variables (`variables`): every variable the root module declares, evaluated by
  `terraform console` exactly as a plan would (terraform/console.py), except those that come
  from the environment (identity, o11y, and anything a `TF_VAR_*` here sets);
- its identity (`identity`): for the existing npa's installations the sidecar pins it; for
  a recipe applied by hand, what the caller gave, else what the installation's variables or
  `TF_VAR_*` say, else what its Terraform state records (the cluster's project and subnet,
  the stand-in's region), else the settings (environment, config.yaml);
- the environment Terraform needs for it (`npa_environment` for npa's: as npa sets it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from npa_sop_tui.errors import OperationError
from npa_sop_tui.recipe.adopted import ENV_VARIABLES, IDENTITY_VARIABLES
from npa_sop_tui.terraform import console
from npa_sop_tui.terraform.state import instances

if TYPE_CHECKING:
    from npa_sop_tui.environment import Environment, TerraformSetup
    from npa_sop_tui.home.npa_installs import NpaInstall

IDENTITY_FIELDS = ("region", "tenant_id", "project_id", "subnet_id")


def npa_environment(install: NpaInstall) -> dict[str, str]:
    """The TF_VAR_* npa runs the installation with: its pinned identity, and the o11y
    variables npa derives from it (tenant = the cluster's tenant, profile or `default`)."""
    pinned = install.identity()
    o11y_profile = install.sidecar.get("o11y_profile")
    return {
        **identity_env(pinned),
        "TF_VAR_o11y_iam_tenant_id": pinned.get("tenant_id", ""),
        "TF_VAR_o11y_profile": o11y_profile
        if isinstance(o11y_profile, str) and o11y_profile
        else "default",
    }


def identity_env(identity: Mapping[str, str]) -> dict[str, str]:
    by_field = {field: name for name, field in IDENTITY_VARIABLES.items()}
    return {f"TF_VAR_{by_field[k]}": v for k, v in identity.items() if v and k in by_field}


def console_env(setup: TerraformSetup, environment: Environment, extra: Mapping[str, str]) -> dict:  # type: ignore[type-arg]
    return {**os.environ, **setup.env, **environment.terraform_env(), **extra}


async def ensure_initialised(binary: str, install_dir: Path, env: Mapping[str, str]) -> None:
    """`terraform init` where it never ran here (the console needs the modules); it reads
    the state where the installation keeps it and changes none."""
    if (install_dir / ".terraform").is_dir():
        return
    await _run(binary, ["init", "-input=false", "-no-color"], install_dir, env, "init")


async def _run(binary: str, args: list[str], cwd: Path, env: Mapping[str, str], what: str) -> str:
    import asyncio

    proc = await asyncio.create_subprocess_exec(
        binary, *args, cwd=cwd, env=dict(env),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), console.CONSOLE_TIMEOUT * 5)
    if proc.returncode != 0:
        detail = err.decode(errors="replace").strip()[-600:]
        raise OperationError(
            f"terraform {what} failed in {cwd}: {detail}",
            hint="check that the folder is a recipe installation and its state is reachable",
        )
    return out.decode(errors="replace")


async def variables(binary: str, install_dir: Path, env: Mapping[str, str]) -> dict[str, Any]:
    """Every variable the installation sets or defaults, but those of the environment."""
    from npa_sop_tui.redact import declared_variables, sensitive_variables

    names = [
        name
        for name in declared_variables(install_dir)
        if name not in ENV_VARIABLES and f"TF_VAR_{name}" not in env
    ]
    if "company_name" not in names:
        raise OperationError(
            f"{install_dir} does not declare the recipe's variables (no company_name)",
            hint="point at soperator/installations/<name> of a nebius-solutions-library checkout",
        )
    return await console.read_variables(
        binary, install_dir, names, sensitive=sensitive_variables(install_dir), env=env
    )


async def _one(binary: str, install_dir: Path, name: str, env: Mapping[str, str]) -> Any:
    try:
        return (await console.read_variables(binary, install_dir, [name], env=env))[name]
    except OperationError:
        return None  # no value anywhere: Terraform cannot tell


async def identity_variables(
    binary: str, install_dir: Path, env: Mapping[str, str]
) -> dict[str, str]:
    """Identity the installation's own files or `TF_VAR_*` give (unset ones are skipped)."""
    found: dict[str, str] = {}
    for name, field in IDENTITY_VARIABLES.items():
        value = await _one(binary, install_dir, name, env)
        if isinstance(value, str) and value:
            found[field] = value
    return found


async def o11y_environment(
    binary: str, install_dir: Path, env: Mapping[str, str], telemetry: bool
) -> dict[str, str]:
    """The o11y TF_VAR_* the installation ran with: its files' or `TF_VAR_*`'s values, else
    the recipe setup's defaults (render.py's: Nebius's o11y tenant; a profile only with
    telemetry on)."""
    from npa_sop_tui.recipe.render import O11Y_PROFILE, O11Y_TENANT_ID

    tenant = await _one(binary, install_dir, "o11y_iam_tenant_id", env)
    profile = await _one(binary, install_dir, "o11y_profile", env)
    return {
        "TF_VAR_o11y_iam_tenant_id": tenant if isinstance(tenant, str) else O11Y_TENANT_ID,
        "TF_VAR_o11y_profile": profile
        if isinstance(profile, str)
        else (O11Y_PROFILE if telemetry else ""),
    }


async def identity_from_state(binary: str, install_dir: Path, env: Mapping[str, str]) -> dict:  # type: ignore[type-arg]
    """The project, subnet (and a stand-in's region) the state records for the cluster."""
    try:
        text = await _run(binary, ["state", "pull"], install_dir, env, "state pull")
        state = json.loads(text) if text.strip() else {}
    except (OperationError, ValueError):
        return {}
    found: dict[str, str] = {}
    for res, inst in instances(state if isinstance(state, dict) else {}):
        attrs = inst.get("attributes") or {}
        if res.get("type") == "nebius_mk8s_v1_cluster":
            _take(found, "project_id", attrs.get("parent_id"), "project-")
            plane = attrs.get("control_plane")
            plane = plane[0] if isinstance(plane, list) and plane else plane
            if isinstance(plane, dict):
                _take(found, "subnet_id", plane.get("subnet_id"), "vpcsubnet-")
        elif res.get("type") == "null_resource" and res.get("name") == "cluster":
            triggers = attrs.get("triggers") or {}  # the stand-in's mk8s cluster
            _take(found, "region", triggers.get("region"), "")
            _take(found, "subnet_id", triggers.get("subnet_id"), "vpcsubnet-")
    return found


def _take(found: dict[str, str], field: str, value: Any, prefix: str) -> None:
    if isinstance(value, str) and value.startswith(prefix) and value and field not in found:
        found[field] = value


def resource_count(state_text: str) -> int:
    try:
        state = json.loads(state_text)
    except ValueError:
        return 0
    return sum(1 for _ in instances(state)) if isinstance(state, dict) else 0


async def state_resources(binary: str, install_dir: Path, env: Mapping[str, str]) -> int:
    """How many resource instances the installation's state holds (local or remote)."""
    try:
        return resource_count(await _run(binary, ["state", "pull"], install_dir, env, "state"))
    except OperationError:
        return 0
