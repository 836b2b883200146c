"""Spec test data shared by the spec, recipe, config and CLI tests."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ASSETS = REPO / "assets"
# A real ed25519 public key (ssh-keygen output); public keys are not secrets.
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOSbyr48sc2OSnGoHzYfK2Y81o89Abx/PYwOuYuUDoW9 root@vm"
KEY_FP = "SHA256:D1QqiBCbm/1vkruyOsPM1seww85jT5rtHkErYKts2Y4"

MINIMAL = """\
apiVersion: npa.soperator/v0.0.1
name: demo
region: eu-north1
workers:
  - name: cpu
    preset: 16vcpu-64gb
    size: 2
"""


# A spec as people write it: comments everywhere, flow maps padded or not, odd quoting,
# 4-space sequences. Round-trip editing must keep all of it (tests/spec, tests/cli).
COMMENTED = """\
# Our training cluster. Owner: the ML platform team.
# Keep pool names stable: Slurm node names derive from them.

apiVersion: npa.soperator/v0.0.1
name: train   # also the kube context suffix
region: eu-north1

control_plane:
  system: { min_size: 3, max_size: 9 }   # flow style, padded
  login: {preset: 16vcpu-64gb}

workers:
    # CPU pool for pre-processing
    -   name: cpu
        platform: 'cpu-d3'     # single-quoted on purpose
        preset: "8vcpu-32gb"
        size: 2

    -   name: gpu
        platform: gpu-h100-sxm
        preset: 8gpu-128vcpu-1600gb
        size: 1          # one node for now
        fabric: eu-north1-a
        preemptible: true

accounting: false
slurm_operator_version: "4.1.6"
k8s_version: '1.31'
# trailing comment at the end
"""


def changed_lines(before: str, after: str) -> list[str]:
    """The `- old` / `+ new` lines of a line diff."""
    import difflib

    return [
        line
        for line in difflib.ndiff(before.splitlines(), after.splitlines())
        if line.startswith(("- ", "+ "))
    ]
