"""The Soperator NodeSets (and so the Slurm node names) the recipe makes from a spec's pools.

The recipe's main.tf (nebius-solutions-library soperator/ at 9a187732, Soperator 4.1.12+)
turns each worker pool into one NodeSet named after the pool, except GB300 pools
(`gpu-gb300`), which become one NodeSet per NVLink rack of 18 nodes, `<pool>-rack<N>`.
Soperator names a NodeSet's pods and Slurm nodes `<nodeset>-<i>`
(nebius/soperator 4.1.6 `internal/render/worker/statefulset.go`, `render/common/configmap.go`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from npa_sop_tui.recipe.shape import GB300_PLATFORM, GB300_RACK, rack_names


@dataclass(frozen=True)
class PlannedNodeSet:
    name: str
    pool: str
    size: int

    @property
    def node_names(self) -> list[str]:
        return [f"{self.name}-{i}" for i in range(self.size)]


def pool_nodesets(pool: Any) -> list[PlannedNodeSet]:
    """The NodeSets of one worker pool (`name`, `size`, `platform`)."""
    size = int(pool.size)
    if pool.platform != GB300_PLATFORM:
        return [PlannedNodeSet(pool.name, pool.name, size)]
    return [
        PlannedNodeSet(rack, pool.name, max(0, min(GB300_RACK, size - i * GB300_RACK)))
        for i, rack in enumerate(rack_names(pool.name, size))
    ]


def spec_nodesets(spec: Any) -> list[PlannedNodeSet]:
    return [ns for pool in spec.workers for ns in pool_nodesets(pool)]


def pool_of_nodeset(spec: Any, nodeset: str) -> Any | None:
    """The pool a NodeSet belongs to (exactly: `<pool>` or one of its `<pool>-rack<N>`)."""
    for pool in spec.workers:
        if any(ns.name == nodeset for ns in pool_nodesets(pool)):
            return pool
    return None


@dataclass(frozen=True)
class PlannedNodeGroup:
    """One worker node group as the recipe makes it: `<nodeset>-<chunk>` chunks of at most
    100 nodes, a GB300 rack NodeSet's group named as the NodeSet."""

    name: str
    nodeset: str
    pool: str
    size: int


def recipe_node_groups(spec: Any) -> list[PlannedNodeGroup]:
    """The worker node groups in the recipe's order, which is their `count` index
    (`nebius_mk8s_v1_node_group.worker_v2[i]`): the tfvars list GPU pools first
    (recipe/shape.py `ordered_pools`), each pool's NodeSets, each NodeSet's chunks."""
    from npa_sop_tui.recipe.shape import ordered_pools

    out = []
    for pool in ordered_pools(spec):
        for nodeset in pool_nodesets(pool):
            if nodeset.name != nodeset.pool:  # a GB300 rack: one group, all of the rack
                out.append(PlannedNodeGroup(nodeset.name, nodeset.name, pool.name, nodeset.size))
                continue
            for chunk in range(max(1, -(-nodeset.size // 100))):
                size = min(100, nodeset.size - chunk * 100)
                out.append(
                    PlannedNodeGroup(f"{nodeset.name}-{chunk}", nodeset.name, pool.name, size)
                )
    return out
