"""A short-lived fake Kubernetes API for the sandbox's post-deploy repairs.

It holds what a fresh Soperator 4.1.x cluster has that the repairs look at: the SlurmCluster
CRD whose `plugStackConfig` schema drops unknown fields, and the `slurm-scripts` configmap
without its `soperator-slurm-scripts` copy. The repairs then talk to it with the official
client through a real kubeconfig, as they talk to a real cluster.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from npa_sop_tui.sandbox.fake_kube import FakeKubeServer

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
def sandbox_cluster_api(context: str) -> Iterator[Path]:
    """A running fake API server with a fresh 4.1.x cluster's objects; yields a kubeconfig."""
    server = FakeKubeServer().start()
    try:
        server.add("customresourcedefinitions", CRD)
        server.add("configmaps", SCRIPTS)
        with tempfile.TemporaryDirectory(prefix="npa-sandbox-kube-") as tmp:
            path = server.write_kubeconfig(Path(tmp) / "kubeconfig", context)
            yield path
    finally:
        server.stop()
