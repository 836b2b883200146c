"""What the recipe creates in the cloud for a spec: node groups, their disks, filesystems.

`shape.py` writes these sizes into the recipe's variables; the cloud preflight counts them
against quotas and prices them, reading the same constants. Control-plane presets left unset
are the sizing tier's (catalog), as the recipe picks them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from npa_sop_tui.recipe.shape import (
    ACCOUNTING_BOOT_GIB,
    ACCOUNTING_GIB,
    CONTROLLER_BOOT_GIB,
    LOGIN_BOOT_GIB,
    SPOOL_GIB,
    SYSTEM_BOOT_GIB,
)

if TYPE_CHECKING:
    from npa_sop_tui.spec.model import SoperatorSpec

CONTROLLER_SIZE = 1
LOGIN_SIZE = 1
CONTROL_PLANE_PLATFORM = "cpu-d3"
FILESTORE_TYPE = "NETWORK_SSD"


@dataclass(frozen=True)
class NodeGroupShape:
    """One node group: `count` nodes now (autoscaling groups may grow to `max_count`)."""

    role: str  # system, controller, login, accounting, worker
    name: str  # the worker pool's name, else the role
    platform: str
    preset: str
    count: int
    max_count: int
    boot_disk_gib: int
    extra_disks: tuple[tuple[str, int], ...] = ()  # (disk type, GiB) per node
    gpus_per_node: int = 0
    fabric: str | None = None
    preemptible: bool = False


@dataclass(frozen=True)
class FilesystemShape:
    role: str  # jail, controller-spool, accounting
    size_gib: int
    type: str = FILESTORE_TYPE


def has_login_node_group(spec: SoperatorSpec) -> bool:
    """False where the recipe puts the login pods on the GB300 workers (it renders
    `slurm_login_on_worker_nodes = true` and creates no login node group): nothing to count,
    price or show then."""
    from npa_sop_tui.errors import NpaError
    from npa_sop_tui.recipe.contract import load_contract
    from npa_sop_tui.recipe.shape import login_on_workers
    from npa_sop_tui.recipe.table import load_table

    try:
        contract = load_contract(load_table().contract_commit(spec.slurm_operator_version))
    except NpaError:  # no contract for the version: validation says so; count the group
        return True
    return not login_on_workers(spec, contract)


def node_groups(spec: SoperatorSpec) -> list[NodeGroupShape]:
    from npa_sop_tui.spec.catalog import load_catalog

    tier = load_catalog().sizing_tier(spec.worker_count)
    cp = spec.control_plane
    sys_ = cp.system
    groups = [
        NodeGroupShape(
            "system",
            "system",
            CONTROL_PLANE_PLATFORM,
            sys_.preset or tier.presets["system"],
            sys_.min_size,
            sys_.effective_max_size,
            SYSTEM_BOOT_GIB,
        ),
        NodeGroupShape(
            "controller",
            "controller",
            CONTROL_PLANE_PLATFORM,
            cp.controller.preset or tier.presets["controller"],
            CONTROLLER_SIZE,
            CONTROLLER_SIZE,
            CONTROLLER_BOOT_GIB,
        ),
    ]
    if has_login_node_group(spec):
        groups.append(
            NodeGroupShape(
                "login",
                "login",
                CONTROL_PLANE_PLATFORM,
                cp.login.preset,
                LOGIN_SIZE,
                LOGIN_SIZE,
                LOGIN_BOOT_GIB,
            )
        )
    if spec.accounting:
        groups.append(
            NodeGroupShape(
                "accounting",
                "accounting",
                CONTROL_PLANE_PLATFORM,
                cp.accounting.preset or tier.presets["accounting"],
                1,
                1,
                ACCOUNTING_BOOT_GIB,
            )
        )
    for pool in spec.workers:
        extra = ((pool.docker_cache_disk_type, pool.docker_cache_gib),) if pool.docker_cache else ()
        groups.append(
            NodeGroupShape(
                "worker",
                pool.name,
                pool.platform,
                pool.preset,
                pool.size,
                pool.size,
                pool.boot_disk_gib,
                extra,
                pool.gpus_per_node,
                pool.fabric,
                pool.preemptible,
            )
        )
    return groups


def filesystems(spec: SoperatorSpec) -> list[FilesystemShape]:
    """Shared filesystems per recipe generation: 4.1.6 has spool, jail (and accounting);
    4.1.12 keeps only the jail."""
    out = [FilesystemShape("jail", spec.jail_size_gib)]
    if spec.recipe_generation == "4.1.12":
        return out
    out.append(FilesystemShape("controller-spool", SPOOL_GIB))
    if spec.accounting:
        out.append(FilesystemShape("accounting", ACCOUNTING_GIB))
    return out
