"""A project's tenant from Nebius IAM: a project's parent is its tenant.

The lookup asks `iam.v2.ProjectService.Get`. `iam.v1.ProjectService` retires on 2026-12-16
(the SDK marks it "Supported until 12/16/26"; every project stays readable through v2). Until
that day, an address that does not serve v2 (it answers UNIMPLEMENTED) is asked through v1
once more; from that day on v1 is never called and the v2 failure is reported as it is. The
v1 call lives here alone, so it goes with this fallback once the day has passed.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from npa_sop_tui.cloud.nebius_calls import NebiusCalls, ServiceMissing

V1_SUNSET = dt.date(2026, 12, 16)  # iam.v1.ProjectService: "Supported until 12/16/26"
log = logging.getLogger(__name__)


def v1_fallback_open(today: dt.date) -> bool:
    """Whether the v1 ProjectService may still be asked (before its sunset day)."""
    return today < V1_SUNSET


async def project_tenant(calls: NebiusCalls, project_id: str) -> str | None:
    """The tenant of `project_id`, None when there is no such project."""
    from nebius.api.nebius.iam.v2 import GetProjectRequest, ProjectServiceClient

    what = f"project {project_id} (iam v2 ProjectService.Get)"
    try:
        item = await calls._get_or_none(what, ProjectServiceClient, GetProjectRequest, project_id)
    except ServiceMissing as exc:
        if not v1_fallback_open(calls.today()):
            raise ServiceMissing(
                f"{exc.message}; the v1 ProjectService retired on {V1_SUNSET.isoformat()}, "
                "so npa no longer falls back to it",
                hint="set tenant_id (NPA_TENANT_ID, the npa config or the spec), or point "
                "NPA_NEBIUS_ENDPOINT at an address that serves iam v2",
            ) from None
        log.debug("%s; asking iam v1 until %s", exc.message, V1_SUNSET.isoformat())
        item = await _v1_project(calls, project_id)
    if item is None:
        return None
    return str(item.metadata.parent_id) or None


async def _v1_project(calls: NebiusCalls, project_id: str) -> Any:
    """The project through `iam.v1.ProjectService.Get` (only before V1_SUNSET)."""
    from nebius.api.nebius.iam.v1 import GetProjectRequest, ProjectServiceClient

    what = f"project {project_id} (iam v1 ProjectService.Get)"
    return await calls._get_or_none(what, ProjectServiceClient, GetProjectRequest, project_id)
