"""The wizard's pages, laid out from the spec mapping they edit: cluster and region, the
control plane, options, and the review pane. The screen (screens/wizard.py) reacts to their
fields by id; the worker pools page is its own widget (pool_list.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Button, Input, Label, Select, Static, Switch

from npa_sop_tui.safe_text import safe_markup
from npa_sop_tui.tui.widgets.deploy.plan_price import PlanPrice
from npa_sop_tui.tui.widgets.wizard.steps import DEFAULT_SYSTEM_MIN, OPERATOR_VERSIONS, REST_CHOICES


def cluster_page(data: dict[str, Any], cat: Any) -> Iterator[Widget]:
    with VerticalScroll(id="cluster"):
        yield Label("Cluster name (lowercase letters, digits, dashes)")
        yield Input(data.get("name", ""), id="name", max_length=40)
        yield Static("", id="name-error", classes="field-error")
        yield Label("Region (GPU platforms it offers)")
        regions = cat.regions()
        region = data.get("region")
        yield Select(
            [(f"{r:<12} {cat.region_offer(r)}", r) for r in regions],
            value=region if region in regions else Select.NULL,
            id="region",
            prompt="choose a region (enter opens the list)",
        )
        yield Static("", id="region-error", classes="field-error")
        yield Static(
            cat.region_details(region if region in regions else ""),
            id="region-note",
            classes="note",
            markup=False,
        )


def control_page(data: dict[str, Any]) -> Iterator[Widget]:
    cp = data.setdefault("control_plane", {})
    system = cp.get("system", {}) or {}
    with VerticalScroll(id="control"):
        with Horizontal(classes="pair"):
            with Vertical():
                yield Label("System nodes: min")
                yield Input(
                    str(system.get("min_size", DEFAULT_SYSTEM_MIN)),
                    id="sys-min",
                    type="integer",
                )
            with Vertical():
                yield Label("max (empty: max(min, 24))")
                yield Input(
                    str(system.get("max_size") or ""),
                    id="sys-max",
                    type="integer",
                )
        yield Static("", id="system-error", classes="field-error")
        yield Label("System preset")
        yield Select([], id="sys-preset", prompt="recipe's sizing tier")
        yield Label("Controller preset")
        yield Select([], id="ctl-preset", prompt="recipe's sizing tier")
        yield Label("Login preset")
        yield Select([], id="login-preset", prompt="recipe default (16vcpu-64gb)")
        yield Static("", id="preset-error", classes="field-error")
        yield Static("", id="tier-note", classes="note")


def options_page(data: dict[str, Any], *, new: bool) -> Iterator[Widget]:
    with VerticalScroll(id="options"):
        with Horizontal(classes="switch-row"):
            yield Switch(bool(data.get("accounting", False)), id="accounting")
            yield Label("Accounting (slurmdbd + MariaDB)")
        yield Label("Slurm REST API")
        rest = data.get("slurm_rest_enabled")
        yield Select(
            REST_CHOICES,
            value="auto" if rest is None else ("on" if rest else "off"),
            id="rest",
            allow_blank=False,
        )
        yield Label("Soperator version")
        if new:  # a new cluster pins the version it was made for
            data.setdefault("slurm_operator_version", OPERATOR_VERSIONS[0])
        version = data.get("slurm_operator_version", OPERATOR_VERSIONS[0])
        versions = list(OPERATOR_VERSIONS)
        if version not in versions:
            versions.append(version)
        yield Select(  # the file's version among ours: a prompt is markup, so escaped
            [(safe_markup(v), v) for v in versions],
            value=version,
            id="operator-version",
            allow_blank=False,
        )
        with Horizontal(classes="switch-row"):
            yield Switch(
                bool(data.get("use_default_apparmor_profile", False)),
                id="apparmor",
            )
            yield Label("Default AppArmor profile (required for 4.1.7)")
        with Horizontal(classes="pair"):
            with Vertical():
                yield Label("Kubernetes version")
                yield Input(
                    data.get("k8s_version") or "",
                    id="k8s-version",
                    placeholder="recipe default",
                )
            with Vertical():
                yield Label("Node group image version")
                yield Input(
                    data.get("node_group_version") or "",
                    id="ng-version",
                    placeholder="recipe default",
                )
        yield Static("", id="versions-error", classes="field-error")


def review_page(path: Path | None) -> Iterator[Widget]:
    with Horizontal(id="review"):
        with VerticalScroll(id="review-yaml"):
            yield Static("", id="yaml-preview")
        with VerticalScroll(id="review-side"):
            yield Static("", id="totals")
            yield PlanPrice(None, quiet=True, id="price")  # shown once the calculator answers
            yield Static("", id="findings")
            yield Label("Write to")
            yield Input(str(path or ""), id="out-path")
            yield Static("", id="out-note", classes="note")
            with Horizontal(classes="buttons", id="review-buttons"):
                yield Button("Write (ctrl+s)", id="write", variant="success", compact=True)
                yield Button(
                    "Deploy (d)",
                    id="deploy",
                    variant="primary",
                    disabled=True,
                    compact=True,
                )
