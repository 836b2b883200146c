"""The simulated cluster behind a sandbox deploy, driven by lifecycle events.

What it serves follows Soperator 4.1.6 (nebius/soperator 65e088abe53b2a52bed18b9536196139f693ab20):
the SlurmCluster goes `Pending` (conditions `Unknown`, reason `SetUpCondition`) when its
release is installed and `Available` when the recipe's wait for it ends
(`internal/controller/clustercontroller/reconcile.go`); one NodeSet per pool, or per rack
`<pool>-rack<N>` for GB300 pools as the recipe's main.tf makes them (soperator/ at 9a187732);
worker pods `<nodeset>-<i>` with component `nodeset` (`internal/render/worker/statefulset.go`);
the operator in `soperator-system`. Objects come from sandbox/fake_kube_objects.py.

Each stand-in resource Terraform finishes adds what its upstream counterpart would create
(nodes for node groups, pods for releases, the SlurmCluster, NodeSets, the login Service) to
the fake Kubernetes API; a deleted resource removes them again. A cluster deployed by another
process (a headless `deploy --sandbox`, an earlier app session) comes back from the resource
addresses in its Terraform state. Slurm is derived from the spec and that state: a pool's
nodes appear once its NodeSet is released and turn idle once the SlurmCluster is Available.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from npa_sop_tui.events import Event, ResourceFinished
from npa_sop_tui.recipe.nodesets import PlannedNodeSet, pool_of_nodeset, spec_nodesets
from npa_sop_tui.sandbox.fake_kube import FakeKubeServer
from npa_sop_tui.sandbox.fake_kube_objects import (
    OPERATOR_NAMESPACE,
    SLURMCLUSTER_CONDITIONS,
    make_login_service,
    make_node,
    make_nodeset,
    make_operator_pod,
    make_pod,
    make_slurmcluster,
    make_worker_pod,
)

if TYPE_CHECKING:
    from npa_sop_tui.spec.catalog import Catalog
    from npa_sop_tui.spec.model import SoperatorSpec, WorkerPoolSpec
    from npa_sop_tui.state.store import StateStore
    from npa_sop_tui.status.model import SlurmState

NAMESPACE = "soperator"
SLURM_CLUSTER_CR = "soperator"  # upstream's SlurmCluster is always called this
_ADDR = re.compile(
    r'^module\.(?P<module>\w+)\.null_resource\.(?P<name>\w+)(\["(?P<key>[^"]+)"\])?$'
)


@dataclass
class SimulatedCluster:
    """What the fake cloud holds for one cluster."""

    name: str
    spec: SoperatorSpec
    kube: FakeKubeServer
    slurm_available: bool = False
    released_nodesets: set[str] = field(default_factory=set)

    def on_event(self, event: Event) -> None:
        if isinstance(event, ResourceFinished):
            self.apply(event.addr, deleting=event.action == "delete")

    def restore(self, addresses: list[str]) -> None:
        """Bring back what Terraform's state says exists (a cluster from another process)."""
        for address in addresses:
            self.apply(address, deleting=False)

    def apply(self, address: str, *, deleting: bool) -> None:
        match = _ADDR.match(address)
        if match is None:
            return
        handler = getattr(self, f"_{match['module']}_{match['name']}", None)
        if handler is not None:
            handler(match["key"], deleting)

    # -- stand-in resource → what upstream would create ----------------------------------------

    def _k8s_node_group_system(self, key: str | None, deleting: bool) -> None:
        self._nodes("system", "system", int(self.spec.control_plane.system.min_size), deleting)

    def _k8s_node_group_controller(self, key: str | None, deleting: bool) -> None:
        self._nodes("controller", "controller", 1, deleting)

    def _k8s_node_group_login(self, key: str | None, deleting: bool) -> None:
        self._nodes("login", "login", 1, deleting)

    def _k8s_node_group_accounting(self, key: str | None, deleting: bool) -> None:
        self._nodes("accounting", "accounting", 1, deleting)

    def _k8s_worker_v2(self, key: str | None, deleting: bool) -> None:
        pool, nodeset = self._pool_for(key), self._nodeset_for(key)
        if pool is not None and nodeset is not None:
            self._nodes(nodeset.name, "worker", nodeset.size, deleting, ready=False, pool=pool)

    def _k8s_worker_v2_size(self, key: str | None, deleting: bool) -> None:
        pool, nodeset = self._pool_for(key), self._nodeset_for(key)
        if pool is not None and nodeset is not None and not deleting:
            # the node group reached its size: its nodes have joined and are Ready
            self._nodes(nodeset.name, "worker", nodeset.size, False, ready=True, pool=pool)

    def _nodeset_for(self, key: str | None) -> PlannedNodeSet | None:
        """The NodeSet a node group serves: a GB300 rack's group is keyed by the rack's
        NodeSet name, other pools' groups `<pool>-<chunk>` serve the pool's one NodeSet
        (its nodes carry the NodeSet's name in `slurm.nebius.ai/nodeset-name`, which the
        NodeSet's nodeSelector matches)."""
        planned = {ns.name: ns for ns in spec_nodesets(self.spec)}
        if key is None:
            return None
        return planned.get(key) or planned.get(key.rsplit("-", 1)[0])

    def _slurm_release_operator(self, key: str | None, deleting: bool) -> None:
        if deleting:
            self._delete("pods", "soperator-controller-manager-0", namespace=OPERATOR_NAMESPACE)
        else:
            self.kube.upsert("pods", make_operator_pod(node=f"{self.name}-system-0"))

    def _slurm_release_slurm_cluster(self, key: str | None, deleting: bool) -> None:
        if deleting:
            self._delete("slurmclusters", SLURM_CLUSTER_CR)
        else:
            self._slurm_cluster("Pending", ready=False)
        for pod in ("controller-0", "login-0"):
            self._pod(pod, pod.split("-")[0], deleting)

    def _slurm_release_nodeset(self, key: str | None, deleting: bool) -> None:
        if key is None:
            return
        planned = next((ns for ns in spec_nodesets(self.spec) if ns.name == key), None)
        size = planned.size if planned is not None else 1
        if deleting:
            self.released_nodesets.discard(key)
            self._delete("nodesets", key)
        else:
            self.released_nodesets.add(key)
            self.kube.upsert("nodesets", make_nodeset(key, replicas=size, ready=size))
        node = f"{self.name}-system-0"
        for i in range(size):
            if deleting:
                self._delete("pods", f"{key}-{i}")
            else:
                self.kube.upsert("pods", make_worker_pod(key, i, node=node))

    def _slurm_release_activechecks(self, key: str | None, deleting: bool) -> None:
        from npa_sop_tui.sandbox.active_checks import sandbox_active_checks

        for check in sandbox_active_checks(self.spec):
            if deleting:
                self._delete("activechecks", check["metadata"]["name"])
            else:
                self.kube.upsert("activechecks", check)

    def _slurm_release_accounting(self, key: str | None, deleting: bool) -> None:
        self._pod("accounting-0", "accounting", deleting)

    def _slurm_wait_for_slurm_cluster(self, key: str | None, deleting: bool) -> None:
        self.slurm_available = not deleting
        if not deleting:
            self._slurm_cluster("Available", ready=True)

    def _login_script_lb_service_ip(self, key: str | None, deleting: bool) -> None:
        if deleting:
            self._delete("services", "soperator-login-svc")
        else:
            self.kube.upsert("services", make_login_service("127.0.0.1"))

    # -- helpers -------------------------------------------------------------------------------

    def _pool_for(self, key: str | None) -> WorkerPoolSpec | None:
        """The pool of a node group key (`<nodeset>` for GB300 racks, `<nodeset>-<chunk>`
        otherwise, as the stand-in's worker_chunks name them)."""
        if key is None:
            return None
        pool = pool_of_nodeset(self.spec, key)
        if pool is None and "-" in key:
            pool = pool_of_nodeset(self.spec, key.rsplit("-", 1)[0])
        return pool

    def _nodes(
        self,
        group: str,
        role: str,
        count: int,
        deleting: bool,
        *,
        ready: bool = True,
        pool: WorkerPoolSpec | None = None,
    ) -> None:
        for i in range(count):
            name = f"{self.name}-{group}-{i}"
            if deleting:
                self._delete("nodes", name, namespaced=False)
                continue
            node = make_node(
                name,
                nodeset=role,
                pool=group if pool is not None else None,
                ready=ready,
                gpu=bool(pool is not None and pool.is_gpu()),
                preemptible=bool(pool is not None and pool.preemptible),
            )
            self.kube.upsert("nodes", node)

    def _pod(
        self, name: str, component: str, deleting: bool, *, nodeset: str | None = None
    ) -> None:
        if deleting:
            self._delete("pods", name)
        else:
            node = f"{self.name}-system-0"
            self.kube.upsert("pods", make_pod(name, component, node=node, nodeset=nodeset))

    def _slurm_cluster(self, phase: str, *, ready: bool) -> None:
        # Pending: every condition as set up (Unknown); Available: all True. Without
        # accounting, AccountingAvailable is False "Slurm accounting is disabled" either way.
        state: bool | str = True if ready else "Unknown"
        conditions: dict[str, bool | str] = dict.fromkeys(SLURMCLUSTER_CONDITIONS, state)
        obj = make_slurmcluster(
            phase,
            conditions=conditions,
            ready_login=1 if ready else 0,
            accounting=bool(self.spec.accounting),
        )
        self.kube.upsert("slurmclusters", obj)

    def _delete(
        self, resource: str, name: str, *, namespaced: bool = True, namespace: str = NAMESPACE
    ) -> None:
        # deleting what a partial deploy never created is not an error
        with contextlib.suppress(Exception):
            if namespaced:
                self.kube.delete(resource, name, namespace=namespace)
            else:
                self.kube.delete(resource, name)

    # -- simulated Slurm -------------------------------------------------------------------------

    def slurm_state(self, catalog: Catalog) -> SlurmState:
        """What `sinfo` would say right now: one node `<nodeset>-<i>` per worker of each
        released NodeSet."""
        from npa_sop_tui.status.model import SlurmNode, SlurmPartition, SlurmState

        nodes: list[SlurmNode] = []
        pools = {pool.name: pool for pool in self.spec.workers}
        for nodeset in spec_nodesets(self.spec):
            if nodeset.name not in self.released_nodesets:
                continue
            pool = pools[nodeset.pool]
            preset = catalog.preset(pool.platform, pool.preset)
            for name in nodeset.node_names:
                nodes.append(_slurm_node(pool, name, preset, available=self.slurm_available))
        # Like the recipe: one visible default partition `main` with every worker (the
        # `hidden` one for active checks is not listed by sinfo).
        idle = sum(1 for n in nodes if n.state == "idle")
        counts: dict[str, int] = {}
        for node in nodes:
            counts[node.display] = counts.get(node.display, 0) + 1
        partition = SlurmPartition(
            name="main",
            default=True,
            available="up",
            timelimit="infinite",
            nodes_total=len(nodes),
            nodes_idle=idle,
            nodes_other=len(nodes) - idle,
            nodes=[n.name for n in nodes],
            state_counts=counts,
        )
        return SlurmState(
            host="sandbox (simulated)",
            version="simulated",
            source_format="delimited",
            partitions=[partition] if nodes else [],
            nodes=nodes,
        )


def _slurm_node(pool: WorkerPoolSpec, name: str, preset: Any, *, available: bool) -> Any:
    from npa_sop_tui.status.model import SlurmNode

    if available:
        state, flags, display, reason = "idle", [], "idle", None
    else:
        state, flags = "down", ["NOT_RESPONDING"]
        display, reason = "down*", "Not responding (slurmd starting)"
    return SlurmNode(
        name=name,
        state=state,
        flags=flags,
        display=display,
        partitions=["main"],
        cpus=preset.vcpu if preset else None,
        cpus_allocated=0,
        memory_mb=preset.memory_gb * 1024 if preset else None,
        gres=f"gpu:{pool.gpus_per_node}" if pool.gpus_per_node else None,
        reason=reason,
    )


def state_addresses(store: StateStore, name: str) -> list[str]:
    from npa_sop_tui.errors import NpaError

    try:
        return store.resource_addresses(name, managed_only=True) or []
    except NpaError:  # an unreachable bucket: the simulated cluster starts empty
        return []
