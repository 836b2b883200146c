"""Reads from the Nebius cloud: quotas, capacity, platforms, prices, mk8s, identity.

`connect(settings)` gives a `CloudClient`; the official SDK loads on its first call, so
importing this package is cheap. `preflight.py` checks a spec against the cloud before
Terraform runs; `destroy_check.py` proves a destroyed cluster is gone.
"""

from __future__ import annotations

from npa_sop_tui.cloud.client import (
    DEFAULT_TIMEOUT,
    CloudClient,
    CloudCredentialsMissing,
    CloudError,
    CloudSettings,
    CloudTimeout,
    connect,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "CloudClient",
    "CloudCredentialsMissing",
    "CloudError",
    "CloudSettings",
    "CloudTimeout",
    "connect",
]
