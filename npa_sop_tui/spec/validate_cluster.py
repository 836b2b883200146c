"""The cluster-wide rules of the spec (name, region, identity, versions, keys, control plane,
accounting) and the patterns they check, as findings; validate_spec (spec/validate.py) runs
them with the worker pool rules."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from npa_sop_tui.spec.catalog import SUPPORTED_VERSIONS, Catalog
from npa_sop_tui.spec.findings import Finding, error, one_of_hint
from npa_sop_tui.spec.identity import IDENTITY_PREFIX, identity_shape_problems

if TYPE_CHECKING:
    # types only: the model runs these rules when it loads a spec (no import cycle)
    from npa_sop_tui.spec.model import SoperatorSpec

COMPANY_NAME_RE = re.compile(r"^[a-z][a-z\d-]*[a-z\d]+$")
SEMVER_RE = re.compile(r"^[1-9]\d*\.\d+\.\d+$")
K8S_RE = re.compile(r"^\d+\.\d+$")
NODE_GROUP_RE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.]*$")
# driver_presets.tf at 4.1.12 (9a187732) only has these k8s versions.
K8S_VERSIONS_4_1_12 = ("1.35", "1.36")


def k8s_step_hint(current: str, accepted: tuple[str, ...]) -> str:
    """What to set instead of `current`, never more than one minor version away: the cloud
    upgrades Kubernetes one minor at a time."""
    major, _, low = current.partition(".")
    above = f"{major}.{int(low) + 1}" if low.isdigit() else None
    below = f"{major}.{int(low) - 1}" if low.isdigit() else None
    if above in accepted:
        return (f'set k8s_version: "{above}" (one minor at a time; `npa soperator upgrade` '
                "takes the steps)")  # fmt: skip
    if below in accepted:
        return f'set k8s_version: "{below}"'
    first = accepted[0]
    return (f"Kubernetes moves one minor at a time: upgrade {current} step by step to {first} "
            f"first (`npa soperator upgrade --k8s-version {first}`)")  # fmt: skip


def slug(name: str) -> str:
    """A suggestion that satisfies the company_name rule, for hints."""
    out = re.sub(r"[^a-z0-9-]+", "-", name.lower())
    # start at the first letter; cutting to 32 may leave a trailing '-', so strip after it
    out = re.sub(r"^[^a-z]+", "", out)[:32].rstrip("-")
    return out if len(out) >= 2 else "my-cluster"


def name_rules(spec: SoperatorSpec) -> list[Finding]:
    name = spec.name
    if 2 <= len(name) <= 32 and COMPANY_NAME_RE.match(name):
        return []
    return [
        error(
            "name",
            f"cluster name {name!r} breaks the recipe's company_name rule: 2-32 characters, "
            "lowercase letters, digits and '-', starting with a letter and ending with a "
            "letter or digit",
            f"try {slug(name)!r}",
        )
    ]


def region_rules(spec: SoperatorSpec, cat: Catalog) -> list[Finding]:
    if spec.region is None or spec.region in cat.regions:
        return []
    return [
        error(
            "region",
            f"unknown region {spec.region!r}",
            one_of_hint(spec.region, sorted(cat.regions)),
        )
    ]


def identity_rules(spec: SoperatorSpec) -> list[Finding]:
    values = {name: getattr(spec, name) for name in IDENTITY_PREFIX}
    return [
        error(
            name,
            message,
            f"copy the ID as Nebius shows it ({IDENTITY_PREFIX[name]}e00…), or leave {name} "
            "out and set it in config.yaml or the environment at deploy time",
        )
        for name, message in identity_shape_problems(values)
    ]


def version_rules(spec: SoperatorSpec) -> list[Finding]:
    out: list[Finding] = []
    version = spec.slurm_operator_version
    supported = ", ".join(SUPPORTED_VERSIONS)
    if not SEMVER_RE.match(version):
        out.append(
            error(
                "slurm_operator_version",
                f"must be an explicit semantic version such as '4.1.6', got {version!r}",
                f"supported: {supported}",
            )
        )
    elif version == "4.1.0":
        out.append(
            error(
                "slurm_operator_version",
                "slurm_operator_version 4.1.0 is no longer verified",
                "replace it with 4.1.6",
            )
        )
    elif version not in SUPPORTED_VERSIONS:
        out.append(
            error(
                "slurm_operator_version",
                f"Soperator {version} is not a recipe version this tool can render",
                f"supported versions: {supported}",
            )
        )
    elif version != "4.1.6" and spec.use_default_apparmor_profile is False:
        out.append(
            error(
                "use_default_apparmor_profile",
                f"the unconfined Enroot/Pyxis override is verified only with Soperator 4.1.6; "
                f"{version} needs the default AppArmor profile",
                "set use_default_apparmor_profile: true",
            )
        )
    if spec.k8s_version is not None and not K8S_RE.match(spec.k8s_version):
        out.append(
            error(
                "k8s_version",
                f'must be MAJOR.MINOR such as "1.34", got {spec.k8s_version!r}',
            )
        )
    elif (
        spec.recipe_generation == "4.1.12" and spec.effective_k8s_version not in K8S_VERSIONS_4_1_12
    ):
        out.append(
            error(
                "k8s_version",
                f"recipe {version} only knows GPU drivers for Kubernetes "
                f"{' and '.join(K8S_VERSIONS_4_1_12)} (driver_presets.tf), not "
                f"{spec.effective_k8s_version}",
                k8s_step_hint(spec.effective_k8s_version, K8S_VERSIONS_4_1_12),
            )
        )
    if spec.node_group_version is not None and not NODE_GROUP_RE.match(spec.node_group_version):
        out.append(
            error(
                "node_group_version",
                f'must be a node image version such as "72", got {spec.node_group_version!r}',
            )
        )
    return out


def key_rules(spec: SoperatorSpec) -> list[Finding]:
    out: list[Finding] = []
    if spec.root_login_ssh_public_key and spec.ssh_public_keys:
        out.append(
            error(
                "ssh_public_keys",
                "set only root_login_ssh_public_key; ssh_public_keys is its legacy alias",
            )
        )
    if len(spec.ssh_public_keys) > 1:
        out.append(
            error(
                "ssh_public_keys",
                "ssh_public_keys accepts exactly one root-login public-key record",
                "use root_login_ssh_public_key",
            )
        )
    candidates = [("root_login_ssh_public_key", spec.root_login_ssh_public_key)]
    candidates += [(f"ssh_public_keys[{i}]", k) for i, k in enumerate(spec.ssh_public_keys)]
    for path, key in candidates:
        if key is None:
            continue
        from npa_sop_tui.spec.sshkeys import (  # only when there is a key
            KeyProblem,
            check_public_key,
        )

        try:
            check_public_key(key)
        except KeyProblem as exc:
            out.append(error(path, str(exc), "paste the single line of your .pub file"))
    return out


def _check_cp_preset(
    role: str, preset: str, tier: str, cat: Catalog, *, role_path: str
) -> list[Finding]:
    path = f"{role_path}.preset"
    cpu = cat.platforms["cpu-d3"]
    spec_preset = cpu.presets.get(preset)
    if spec_preset is None:
        return [
            error(
                path,
                f"{preset!r} is not a cpu-d3 preset (control-plane nodes run on cpu-d3)",
                one_of_hint(preset, list(cpu.presets)),
            )
        ]
    # the catalog names every role (tests/spec checks the data), so a gap fails loudly
    need_recipe = cat.role_min_vcpu[role]
    if spec_preset.vcpu < need_recipe:
        return [
            error(
                path,
                f"{preset} is insufficient for the {role} node group (recipe rule: at least "
                f"{need_recipe} vCPU)",
                "choose a larger preset or omit it so the sizing tier decides",
            )
        ]
    need_tier = cat.control_plane_min_vcpu[role][tier]
    if spec_preset.vcpu < need_tier:
        return [
            error(
                path,
                f"{preset} is insufficient for {tier} sizing ({role} requires at least "
                f"{need_tier} vCPU)",
                "omit the preset to use the recipe's sizing tier",
            )
        ]
    return []


def control_plane_rules(spec: SoperatorSpec, cat: Catalog) -> list[Finding]:
    out: list[Finding] = []
    cp = spec.control_plane
    system = cp.system
    if system.min_size < 3:
        out.append(error("control_plane.system.min_size", "must be >= 3 (recipe rule)", "use 3"))
    if system.max_size is not None and system.max_size < system.min_size:
        out.append(
            error(
                "control_plane.system.max_size",
                f"must be >= min_size ({system.min_size})",
            )
        )
    tier = spec.sizing_tier
    roles: list[tuple[str, str | None]] = [
        ("system", system.preset),
        ("controller", cp.controller.preset),
        ("login", cp.login.preset),
    ]
    if spec.accounting:
        roles.append(("accounting", cp.accounting.preset))
    for role, preset in roles:
        if preset is not None:
            out += _check_cp_preset(role, preset, tier, cat, role_path=f"control_plane.{role}")
    return out


def accounting_rules(spec: SoperatorSpec) -> list[Finding]:
    if spec.slurm_rest_enabled and not spec.accounting:
        return [
            error(
                "slurm_rest_enabled",
                f"slurm_rest_enabled=true requires accounting=true with Soperator "
                f"{spec.slurm_operator_version}: the controller skips REST reconciliation "
                "without an accounting database",
                "set accounting: true, or remove slurm_rest_enabled (it follows accounting)",
            )
        ]
    return []
