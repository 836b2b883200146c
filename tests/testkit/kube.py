"""The kube context the `kubeconfig` fixture writes (the recipe's `nebius-<name>-slurm`), and
the Kubernetes states verdict tests start from."""

from __future__ import annotations

from npa_sop_tui.status.model import KubeState, NodeSetInfo, SlurmClusterInfo

CONTEXT = "nebius-demo-slurm"


def progressing_kube(*, login_ip: str | None = "203.0.113.7") -> KubeState:
    """A cluster coming up: SlurmCluster `Not available` (reconciled, not up yet), its nodeset's
    workers not ready (phases as Soperator 4.1.6's controllers set them)."""
    return KubeState(
        context=CONTEXT,
        slurm_cluster_crd=True,
        slurm_cluster=SlurmClusterInfo(name="soperator", phase="Not available"),
        nodesets_crd=True,
        nodesets=[NodeSetInfo(name="cpu", desired=2, ready=0, phase="Pending")],
        login_service=True,
        login_ip=login_ip,
    )
