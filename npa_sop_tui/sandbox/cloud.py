"""The sandbox's cloud: a `FakeNebius` server for one step, with a client connected to it.

Every call the preflight and the destroy check make is answered over the real gRPC protocol;
by default every check passes. `$NPA_SANDBOX_SCENARIO` breaks one thing on purpose (see
`fake_cloud_state.SCENARIOS`). The server lives as long as the step; what the sandbox
"created" is rebuilt from the cluster's Terraform state, like the fake Kubernetes objects.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from npa_sop_tui.cloud.client import CloudClient, CloudReads, CloudSettings
from npa_sop_tui.sandbox.fake_cloud_state import (
    FakeCloudState,
    default_state,
    scenario_from_env,
    seed_for_spec,
)
from npa_sop_tui.sandbox.fake_nebius import FakeNebius

SANDBOX_REGION = "eu-north1"
CLUSTER_RESOURCE = ("null_resource", "cluster")  # the stand-in's mk8s cluster (module.k8s)


def _has_cluster(name: str) -> bool:
    """Whether the cluster's Terraform state (local or in the team's bucket, read through
    the state store) holds the stand-in's mk8s cluster."""
    from npa_sop_tui.home import inventory
    from npa_sop_tui.home.recorded_paths import trusted
    from npa_sop_tui.state.stores import default_store

    entry = inventory.get(name)
    install_dir = trusted(entry.install_dir) if entry is not None else None
    if install_dir is None:  # none, or not in this home: a record's path is data
        return False
    try:
        state = default_store().read_tfstate(name, install_dir)
    except Exception:  # an unreachable bucket: the simulated cloud holds nothing
        return False
    return any(
        (r.get("type"), r.get("name")) == CLUSTER_RESOURCE and r.get("instances")
        for r in (state or {}).get("resources", [])
    )


def _kept_by_scenario(name: str, scenario: frozenset[str]) -> bool:
    """`destroy-leftover`: the cloud keeps a cluster whose destroy has started."""
    from npa_sop_tui.home import inventory

    entry = inventory.get(name)
    return (
        "destroy-leftover" in scenario
        and entry is not None
        and entry.state in ("destroying", "destroy-incomplete")
    )


def sandbox_state(reads: CloudReads) -> FakeCloudState:
    identity: Any = reads.identity
    state = default_state(
        region=getattr(identity, "region", None) or SANDBOX_REGION,
        tenant_id=getattr(identity, "tenant_id", None) or "tenant-sandbox",
        project_id=getattr(identity, "project_id", None) or "project-sandbox",
    )
    state.scenario = scenario_from_env()
    if reads.spec is not None:
        seed_for_spec(state, reads.spec, reads.capacity)
    if reads.name and (_has_cluster(reads.name) or _kept_by_scenario(reads.name, state.scenario)):
        state.create_cluster(reads.name)
    return state


@asynccontextmanager
async def simulated_cloud(reads: CloudReads) -> AsyncIterator[CloudClient]:
    from npa_sop_tui.cloud.nebius_sdk import NebiusCloudClient

    state = sandbox_state(reads)
    token = secrets.token_hex(8)
    state.token = token
    server = FakeNebius(state).start()
    client = NebiusCloudClient(CloudSettings(endpoint=server.endpoint, iam_token=token, timeout=30))
    try:
        yield client
    finally:
        await client.close()
        server.stop()
