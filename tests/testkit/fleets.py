"""Spec and fleet test data shared by the SDK, tools, workflow and fleet tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT_KEY = (
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKTuXQ9y2gRIkFk7H06hEu58FkxtRe//rvO1FavuZgwl sdk-test"
)
ASSETS = Path(__file__).resolve().parents[2] / "assets"


def spec_mapping(name: str = "sdk-demo", size: int = 2) -> dict[str, Any]:
    return {
        "apiVersion": "npa.soperator/v0.0.1",
        "name": name,
        "root_login_ssh_public_key": ROOT_KEY,
        "workers": [{"name": "cpu", "platform": "cpu-d3", "preset": "8vcpu-32gb", "size": size}],
    }


FLEET_TEMPLATE = """\
apiVersion: npa.fleet/v0.0.1
name: {name}
tenant_id: tenant-e00fleet
region: eu-north1
defaults:
  backend: soperator
  soperator:
    root_login_ssh_public_key: {key}
    workers:
      - name: cpu
        size: 1
projects:
  - name: alpha
    project_id: project-e00alpha
    clusters:
      - name: {a}
        labels: {{team: ml}}
      - name: {b}
        labels: {{team: ml}}
  - name: beta
    project_id: project-e00beta
    region: {beta_region}
    clusters:
      - name: {c}
        labels: {{team: serving}}
"""


def fleet_text(
    name: str = "t",
    a: str = "fa",
    b: str = "fb",
    c: str = "fc",
    beta_region: str = "eu-north1",
) -> str:
    return FLEET_TEMPLATE.format(name=name, key=ROOT_KEY, a=a, b=b, c=c, beta_region=beta_region)
