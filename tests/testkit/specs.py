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
