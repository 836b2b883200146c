"""The kube context the `kubeconfig` fixture writes (the recipe's `nebius-<name>-slurm`)."""

from __future__ import annotations

CONTEXT = "nebius-demo-slurm"
