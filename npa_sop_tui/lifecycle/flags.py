"""The existing npa's deploy/destroy flags, with its meanings.

- `--timeout` (minutes, default 90) bounds each Terraform plan and each apply. When it runs
  out, Terraform is stopped the way Ctrl-C stops it (SIGINT, then it finishes what it is
  doing and saves state) and the error says which resources were still in progress.
- `--project` is the project ID to deploy into; it overrides the environment and the config
  file, and must agree with a `project_id` the spec sets. As in npa it may instead name a
  project alias of config.yaml (`projects.<alias>`), whose region, tenant and project win.
- `--source-preflight-only` is handled by the operations: resolve and check the recipe, then
  stop, having changed nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

from npa_sop_tui.errors import OperationError, UsageError

T = TypeVar("T")
DEFAULT_TIMEOUT_MINUTES = 90


class TerraformTimeout(OperationError):
    def __init__(self, what: str, minutes: float, in_flight: dict[str, float]) -> None:
        now = time.time()
        where = [
            f"  - {addr} (running {max(now - started, 0) / 60:.0f} min)"
            for addr, started in sorted(in_flight.items(), key=lambda kv: kv[1])
        ]
        detail = (
            "; it was working on:\n" + "\n".join(where)
            if where
            else " (no resource was in progress: Terraform was between steps)"
        )
        super().__init__(
            f"terraform {what} did not finish within {minutes:g} min and was stopped "
            f"gracefully{detail}",
            hint="look at the cluster (`npa soperator status`), then deploy again to converge, "
            "with a larger --timeout if it was only slow",
        )
        self.where = sorted(in_flight)

    def json_extra(self) -> dict[str, Any]:
        return {"in_progress": self.where}


async def bounded(
    run: Awaitable[T], minutes: float | None, *, what: str, in_flight: dict[str, float]
) -> T:
    """Await `run` for at most `minutes`; on time-out cancel it (a graceful Terraform stop)
    and raise `TerraformTimeout` naming what was in progress."""
    if not minutes:
        return await run
    task = asyncio.ensure_future(run)
    try:
        done, _ = await asyncio.wait({task}, timeout=minutes * 60)
    except asyncio.CancelledError:  # Ctrl-C: the task stops gracefully, then we go
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        raise
    if task in done:
        return task.result()
    snapshot = dict(in_flight)  # before the graceful stop finishes what was running
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    raise TerraformTimeout(what, minutes, snapshot)


def with_project(identity: Any, spec: Any, project: str | None) -> Any:
    """`identity` with `--project` applied (or unchanged when it is not given)."""
    if not project:
        return identity
    from npa_sop_tui.spec.identity import identifier_problem

    project = project.strip()
    # whoever passed it (a flag, the SDK, an agent's tool call): an ID or an alias's shape
    problem = identifier_problem("project", project)
    if problem is None and project.startswith("project-"):
        problem = identifier_problem("project_id", project)
    if problem is not None:
        raise UsageError(
            f"--project {project!r}: {problem}",
            hint="project IDs look like project-e00… (see `nebius iam project list`)",
        )
    if not project.startswith("project-"):
        # The alias of one of the existing npa's `projects:` sections: the settings read its
        # identity (home/settings.py), and refuse an alias that is not there.
        return identity
    if spec is not None and spec.project_id and spec.project_id != project:
        raise UsageError(
            f"--project {project} disagrees with the spec's project_id {spec.project_id}",
            hint="drop one of them: the spec's project_id is the cluster's project",
        )
    if identity is None:
        return None
    return identity.model_copy(update={"project_id": project})


# The existing npa SDK's keyword names → LifecycleOptions fields.
NPA_KEYWORDS = {
    "timeout_minutes": "timeout_minutes",
    "gpu_creation_check_timeout_seconds": "gpu_check_timeout",
    "apply_fixes": "apply_fixes",
    "source_preflight_only": "source_preflight_only",
    "project": "project",
    "profile": "profile",
    "preflight": "preflight",
    "solutions_library_ref": "recipe_ref",
    "root_login_ssh_public_key_file": "root_login_key_file",
}


# npa's apply request also carries its backend's separate reserved-capacity preflight
# (`provider_*`, used only by `SoperatorBackend.preflight`, which its fleet calls); its deploy
# reads none of them. They are accepted for the same code to run: this deploy's own cloud
# preflight (quotas, reservations, price) runs unless `preflight=False`.
NPA_PREFLIGHT_KEYWORDS = frozenset(
    {
        "provider_preflight",
        "provider_nebius_bin",
        "provider_tenant_id",
        "provider_project_id",
        "provider_region",
        "provider_install_dir",
        "provider_work_root",
        "provider_env",
    }
)


def with_npa_flags(options: Any, flags: dict[str, Any], *, apply: bool = True) -> Any:
    """`options` with the existing npa's keywords applied (those of its apply request when
    `apply`, else of its destroy request); an unknown keyword is an error."""
    import dataclasses

    if apply:
        flags = {k: v for k, v in flags.items() if k not in NPA_PREFLIGHT_KEYWORDS}
    unknown = sorted(set(flags) - set(NPA_KEYWORDS))
    if unknown:
        raise UsageError(
            f"unknown keyword(s): {', '.join(unknown)}",
            hint="deploy/destroy accept " + ", ".join(sorted(NPA_KEYWORDS)),
        )
    changes = {NPA_KEYWORDS[k]: v for k, v in flags.items() if v is not None}
    return dataclasses.replace(options, **changes)
