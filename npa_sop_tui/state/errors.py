"""Errors of the team state store, worded for whoever called (no CLI flags here)."""

from __future__ import annotations

from npa_sop_tui.errors import OperationError, UsageError


class StateUnreachable(OperationError):
    """The state bucket could not be reached (network, endpoint down, timeout)."""


class StateAccessDenied(UsageError):
    """The bucket answered, but refused these credentials."""


class StateBucketMissing(UsageError):
    """The configured bucket does not exist."""


class StateCredentialsMissing(UsageError):
    """No Object Storage access key is available."""


class StateBackendMismatch(UsageError):
    """An installation's Terraform state is somewhere other than the configured backend."""
