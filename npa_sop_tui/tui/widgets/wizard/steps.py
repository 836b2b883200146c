"""The wizard's steps, and where each finding shows: beside the field it is about, or
under the step's form."""

from __future__ import annotations

from textual.content import Content

from npa_sop_tui.spec.findings import Finding
from npa_sop_tui.tui.backend import issue_text
from npa_sop_tui.tui.safety import markup

STEPS = ("cluster", "control", "pools", "options", "review")
STEP_TITLES = {
    "cluster": "1 Cluster & region",
    "control": "2 Control plane",
    "pools": "3 Worker pools",
    "options": "4 Options",
    "review": "5 Review & write",
}
OPERATOR_VERSIONS = ("4.1.6", "4.1.7")
REST_CHOICES = (("follows accounting", "auto"), ("on", "on"), ("off", "off"))
DEFAULT_SYSTEM_MIN = 3
"""The spec's default control_plane.system.min_size (shown when a file leaves it out)."""
ROLE_FIELDS = (("system", "#sys-preset"), ("controller", "#ctl-preset"), ("login", "#login-preset"))


FIELD_ERRORS = {
    "name": "name-error",
    "region": "region-error",
    "control_plane.system": "system-error",
    "control_plane.controller": "preset-error",
    "control_plane.login": "preset-error",
    "k8s_version": "versions-error",
    "node_group_version": "versions-error",
}
"""Where a finding about a field path is shown: the error line under that field."""


def field_error_of(path: str) -> str | None:
    for prefix, field in FIELD_ERRORS.items():
        if path == prefix or path.startswith((f"{prefix}.", f"{prefix}[")):
            return field
    return None


def step_of(path: str) -> str:
    """Which wizard step shows a finding for this field path."""
    if path.startswith("workers"):
        return "pools"
    if path.startswith("control_plane"):
        return "control"
    if path in {"name", "region", ""} or path.startswith(("tenant", "project", "subnet")):
        return "cluster"
    return "options"


def issue_markup(issue: Finding) -> Content:
    colour = "red" if issue.is_error else "yellow"
    return markup(f"[{colour}]{issue.level}[/] $text", text=issue_text(issue))
