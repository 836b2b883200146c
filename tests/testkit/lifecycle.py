"""Lifecycle test helpers: a sandbox identity, specs, options and an event recorder."""

from __future__ import annotations

from typing import Any

from npa_sop_tui.events import Event
from npa_sop_tui.home.config import Identity
from npa_sop_tui.lifecycle.api import LifecycleOptions
from npa_sop_tui.spec.model import SoperatorSpec, spec_from_mapping

ROOT_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEdXlFusLvYjeeK1rVVinKzN6pzzcRQunPAvc+y2YBhJ test"
IDENTITY = Identity(
    region="eu-north1",
    tenant_id="tenant-e2e",
    project_id="project-e2e",
    subnet_id="vpcsubnet-e2e",
)


def make_spec(name: str = "lc", **overrides: Any) -> SoperatorSpec:
    data: dict[str, Any] = {
        "apiVersion": "npa.soperator/v0.0.1",
        "name": name,
        "root_login_ssh_public_key": ROOT_KEY,
        "workers": [
            {"name": "cpu", "size": 2},
            {
                "name": "gpu",
                "platform": "gpu-h200-sxm",
                "preset": "8gpu-128vcpu-1600gb",
                "fabric": "fabric-3",
                "size": 1,
            },
        ],
    }
    data.update(overrides)
    return spec_from_mapping(data)


def options(
    sleep: float = 0, flags: dict[str, str] | None = None, **extra: Any
) -> LifecycleOptions:
    """Options for the sandbox environment, Terraform sleeping `sleep` s per resource, with
    the command-line `flags` given (`terraform_dir`, …)."""
    from npa_sop_tui.environment_choice import open_environment

    extra.setdefault("identity", IDENTITY)
    environment = open_environment(sandbox=True, flags=flags, sleep_seconds=sleep)
    return LifecycleOptions(environment=environment, **extra)


class Recorder:
    """An event sink that keeps everything (tests only; the runner itself keeps nothing)."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def kinds(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.kind == kind]

    def phases(self) -> list[str]:
        return [e.phase for e in self.kinds("phase_changed")]
