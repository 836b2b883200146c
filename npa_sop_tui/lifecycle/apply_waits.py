"""What `terraform apply` waits on in the recipe's `modules/slurm/main.tf`, and until when.

Three waits hold an apply after the Helm/Flux releases are installed (nebius-solutions-library
`soperator/modules/slurm/main.tf`: `terraform_data.wait_for_slurm_cluster_hr`,
`wait_for_slurm_cluster_available`, `wait_for_soperator_activechecks_hr`):
1. the slurm-cluster Flux HelmRelease `flux-system-soperator-fluxcd-slurm-cluster`, 60 min;
2. SlurmCluster `soperator` phase `Available` (`kubectl wait`), 1 h;
3. the activechecks Flux HelmRelease `flux-system-soperator-fluxcd-soperator-activechecks`,
   whose post-install hook is the `wait-for-active-checks` Job, 240 min.
When one starts, the operation says so with its deadline; when it ends, how long it took.
The stand-in recipe's resources for the same steps are listed beside the real addresses.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from npa_sop_tui.events import Event


@dataclass(frozen=True)
class ApplyWait:
    what: str
    minutes: int
    addresses: tuple[str, ...]  # the real recipe's, then the stand-in's


WAITS = (
    ApplyWait(
        "the slurm-cluster Flux HelmRelease (flux-system-soperator-fluxcd-slurm-cluster)",
        60,
        (
            "module.slurm.terraform_data.wait_for_slurm_cluster_hr",
            "module.slurm.null_resource.release_slurm_cluster",
        ),
    ),
    ApplyWait(
        "SlurmCluster soperator to be Available",
        60,
        (
            "module.slurm.terraform_data.wait_for_slurm_cluster_available",
            "module.slurm.null_resource.wait_for_slurm_cluster",
        ),
    ),
    ApplyWait(
        "the activechecks Flux HelmRelease (flux-system-soperator-fluxcd-soperator-activechecks;"
        " its wait-for-active-checks hook waits on the checks that run after creation)",
        240,
        (
            "module.slurm.terraform_data.wait_for_soperator_activechecks_hr",
            "module.slurm.null_resource.release_activechecks",
        ),
    ),
)


def wait_for(address: str) -> ApplyWait | None:
    return next((w for w in WAITS if address in w.addresses), None)


def wait_note(event: Event) -> str | None:
    """A line for the operation's events when `event` starts or ends one of the waits."""
    address = getattr(event, "addr", None)
    wait = wait_for(address) if isinstance(address, str) else None
    if wait is None:
        return None
    if event.kind == "resource_started":
        deadline = time.strftime("%H:%M UTC", time.gmtime(event.ts + wait.minutes * 60))
        return f"apply waits for {wait.what}: up to {wait.minutes} min, gives up at {deadline}"
    if event.kind == "resource_finished":
        return f"apply wait done after {getattr(event, 'elapsed', 0):.0f} s: {wait.what}"
    if event.kind == "resource_failed":
        return f"apply wait failed: {wait.what}"
    return None
