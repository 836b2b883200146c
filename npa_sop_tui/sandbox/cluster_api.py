"""A short-lived fake Kubernetes API for the sandbox's post-deploy step.

It holds what a fresh Soperator 4.1.x cluster has that the repairs look at: the SlurmCluster
CRD whose `plugStackConfig` schema drops unknown fields, and the `slurm-scripts` configmap
without its `soperator-slurm-scripts` copy; and, given the deployed spec, what the simulated
cluster holds after the apply (rebuilt from the Terraform state's resource addresses: nodes,
pods, NodeSets, the login Service whose address the post-deploy step reads). The repairs and
the login-address resolver then talk to it with the official client through a real
kubeconfig, as they talk to a real cluster.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from npa_sop_tui.sandbox.fake_kube import FakeKubeServer

if TYPE_CHECKING:
    from npa_sop_tui.spec.model import SoperatorSpec
    from npa_sop_tui.state.store import StateStore

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "slurmclusters.slurm.nebius.ai"},
    "spec": {
        "group": "slurm.nebius.ai",
        "names": {"kind": "SlurmCluster", "plural": "slurmclusters"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "plugStackConfig": {
                                        "type": "object",
                                        "properties": {"pyxis": {"type": "object"}},
                                    }
                                },
                            }
                        },
                    }
                },
            }
        ],
    },
}
SCRIPTS = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "slurm-scripts", "namespace": "soperator"},
    "data": {"health_check.sh": "#!/bin/bash\nexit 0\n"},
}


@contextmanager
def sandbox_cluster_api(
    context: str, spec: SoperatorSpec | None = None, store: StateStore | None = None
) -> Iterator[Path]:
    """A running fake API server with a fresh 4.1.x cluster's objects (and, with `spec` and
    `store`, the simulated cluster its Terraform state describes); yields a kubeconfig."""
    server = FakeKubeServer().start()
    try:
        server.add("customresourcedefinitions", CRD)
        server.add("configmaps", SCRIPTS)
        if spec is not None and store is not None:
            from npa_sop_tui.sandbox.cluster import SimulatedCluster, state_addresses

            SimulatedCluster(spec.name, spec, server).restore(state_addresses(store, spec.name))
        with tempfile.TemporaryDirectory(prefix="npa-sandbox-kube-") as tmp:
            path = server.write_kubeconfig(Path(tmp) / "kubeconfig", context)
            yield path
    finally:
        server.stop()
