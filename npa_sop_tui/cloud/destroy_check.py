"""After Terraform's destroy: is the cluster really gone from Nebius?

Checks the exact IDs the cluster owned (from its Terraform state before destroy) — its mk8s
cluster, filesystems, VPC allocations (the login's static address), GPU clusters and buckets —
and, by the recipe's naming, any mk8s cluster called `soperator-<name>` still in the project
(a cluster Terraform lost track of). Returns a line per leftover; empty means gone.
"""

from __future__ import annotations

from collections.abc import Sequence

from npa_sop_tui.cloud.client import CloudClient


async def leftovers(
    client: CloudClient,
    *,
    project_id: str | None,
    name: str,
    cluster_ids: Sequence[str],
    filesystem_ids: Sequence[str],
    allocation_ids: Sequence[str] = (),
    gpu_cluster_ids: Sequence[str] = (),
    bucket_ids: Sequence[str] = (),
) -> list[str]:
    remaining: list[str] = []
    seen: set[str] = set()
    for cluster_id in cluster_ids:
        cluster = await client.mk8s_cluster(cluster_id)
        if cluster is not None:
            seen.add(cluster.id)
            remaining.append(f"mk8s cluster {cluster.name} ({cluster.id}, {cluster.state})")
    if project_id:
        for cluster in await client.mk8s_clusters(project_id):
            if cluster.name == f"soperator-{name}" and cluster.id not in seen:
                remaining.append(f"mk8s cluster {cluster.name} ({cluster.id}, {cluster.state})")
    for fs_id in filesystem_ids:
        fs = await client.filesystem(fs_id)
        if fs is not None:
            remaining.append(f"filesystem {fs.name} ({fs.id}, {fs.state})")
    for read, ids in (
        (client.allocation, allocation_ids),
        (client.gpu_cluster, gpu_cluster_ids),
        (client.bucket, bucket_ids),
    ):
        for item_id in ids:
            found = await read(item_id)
            if found is not None:
                state = f", {found.state}" if found.state else ""
                remaining.append(f"{found.kind} {found.name} ({found.id}{state})")
    return remaining
