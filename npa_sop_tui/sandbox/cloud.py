"""The sandbox's cloud: a `FakeNebius` server for one operation, with a client connected to it.

Every call the preflight and the destroy check make is answered over the real gRPC protocol;
by default every check passes. `$NPA_SANDBOX_SCENARIO` breaks one thing on purpose (see
`fake_cloud_state.SCENARIOS`). The server lives as long as the operation; what the sandbox
"created" is rebuilt from the cluster's Terraform state, like the fake Kubernetes objects.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from npa_sop_tui.cloud.client import CloudClient, CloudSettings
from npa_sop_tui.sandbox.fake_cloud_state import (
    FakeCloudState,
    default_state,
    scenario_from_env,
    seed_for_spec,
)
from npa_sop_tui.sandbox.fake_nebius import FakeNebius

SANDBOX_REGION = "eu-north1"
CLUSTER_ADDRESS = "module.k8s.null_resource.cluster"  # the stand-in's mk8s cluster


def sandbox_state(
    spec: Any, capacity: Mapping[str, str] | None, identity: Any, *, existing: bool = False
) -> FakeCloudState:
    state = default_state(
        region=getattr(identity, "region", None) or SANDBOX_REGION,
        tenant_id=getattr(identity, "tenant_id", None) or "tenant-sandbox",
        project_id=getattr(identity, "project_id", None) or "project-sandbox",
    )
    state.scenario = scenario_from_env()
    if spec is not None:
        seed_for_spec(state, spec, capacity or {})
        if existing:
            state.create_cluster(spec.name)
    return state


@asynccontextmanager
async def sandbox_cloud(state: FakeCloudState) -> AsyncIterator[CloudClient]:
    from npa_sop_tui.cloud.nebius_sdk import NebiusCloudClient

    token = secrets.token_hex(8)
    state.token = token
    server = FakeNebius(state).start()
    client = NebiusCloudClient(CloudSettings(endpoint=server.endpoint, iam_token=token, timeout=30))
    try:
        yield client
    finally:
        await client.close()
        server.stop()
