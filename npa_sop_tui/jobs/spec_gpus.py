"""A job's default GPU count ("all GPUs of the node") from the cluster's deployed spec.

Why: asking Slurm (`sinfo` on the login node) costs a process and a controller round trip
before srun can start, tens of ms of a job that lasts a fraction of a second. The spec
npa deployed already says it: each worker pool's preset names its GPUs per node
(`8gpu-128vcpu-1600gb` → 8, a CPU preset → 0). It decides only when the job's nodes are
unambiguous: no --pool (the placement lookup already reads the pool's nodes from Slurm),
no partition, and a spec with exactly one worker pool, so the default partition's nodes are
that pool's. Otherwise (several pools, no spec, an unreadable one) the login node's Slurm
is asked as before (jobs/remote.py). The source used goes to the `--debug` log.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from npa_sop_tui.jobs.model import JobRequest
from npa_sop_tui.spec.derived import PoolFacts

log = logging.getLogger(__name__)


@dataclass
class _Pool(PoolFacts):
    """A worker pool as the spec file says it; PoolFacts holds the preset → GPUs rule."""

    name: str
    platform: str
    preset: str


def deployed_spec(cluster: str) -> str | None:
    """The spec of the cluster's last deploy (the inventory's copy), None if unreadable: a
    missing copy only means Slurm is asked."""
    from npa_sop_tui.errors import NpaError
    from npa_sop_tui.home import inventory

    try:
        return inventory.read_spec(cluster)
    except (NpaError, OSError) as exc:
        log.debug("no deployed spec for %s: %s", cluster, exc)
        return None


def spec_pool_gpus(spec_yaml: str | None) -> tuple[str, int] | None:
    """(pool, GPUs per node) of a spec with exactly one worker pool, else None."""
    if not spec_yaml:
        return None
    import yaml

    try:
        data = yaml.safe_load(spec_yaml)
    except yaml.YAMLError:
        return None
    workers = data.get("workers") if isinstance(data, dict) else None
    if not isinstance(workers, list) or len(workers) != 1 or not isinstance(workers[0], dict):
        return None
    fields = workers[0]
    if not all(isinstance(fields.get(k), str) for k in ("name", "platform", "preset")):
        return None
    pool = _Pool(fields["name"], fields["platform"], fields["preset"])
    return pool.name, pool.gpus_per_node


def fill_default_gpus(request: JobRequest, spec_yaml: str | None, *, pool: str | None) -> str:
    """Set `request.gpus_per_node` from the spec when it alone decides it; returns the source
    of the default (also logged): "given", "spec pool <name>", or "slurm" (looked up later)."""
    if not request.auto_gpus:
        source = "given"
    elif pool or request.partition or request.all_nodes:
        source = "slurm"  # the placement lookup reads the nodes of the pool from Slurm
    elif (found := spec_pool_gpus(spec_yaml)) is None:
        source = "slurm"
        log.debug("default GPUs per node: no single-pool spec; asking Slurm on the login node")
    else:
        name, gpus = found
        request.gpus_per_node = gpus
        source = f"spec pool {name}"
    if source != "given":
        log.debug("default GPUs per node from %s: %s", source, request.gpus_per_node)
    return source
