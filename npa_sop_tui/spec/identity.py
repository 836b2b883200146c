"""The shapes of the identifiers npa reads: Nebius IDs and regions (in a spec, config.yaml,
the environment, a flag, an inventory record or a fleet file), and CLI profile names.

An identifier becomes part of a path (`catalog/platforms-<region>.json`), a line (`config
show`, a kube context) or a request; a value of any other shape is refused where it is read,
before it is used: `../../x` is not a region, and a newline cannot hide in a project ID.
"""

from __future__ import annotations

import re

# Nebius resource IDs start with their kind: tenant-e00…, project-e00…, vpcsubnet-e00….
IDENTITY_PREFIX = {"tenant_id": "tenant-", "project_id": "project-", "subnet_id": "vpcsubnet-"}
SERVICE_ACCOUNT_PREFIX = "serviceaccount-"

_ID_BODY = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
"""What follows the kind's prefix: lowercase letters and digits, single dashes between."""
MAX_ID_LENGTH = 128

REGION_RE = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
"""A region name: `eu-north1`, `us-central1`, `me-west1`."""
MAX_REGION_LENGTH = 63

PROFILE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]*")
"""A Nebius CLI profile name (a key in ~/.nebius/config.yaml): one word, no path."""
MAX_PROFILE_LENGTH = 128

SHAPES = {
    "region": "a region name: lowercase letters, digits and single dashes (e.g. eu-north1)",
    "id": "lowercase letters, digits and single dashes after it (e.g. {prefix}e00abc123)",
    "project": "a project ID (project-e00…) or the alias of a `projects:` section of "
    "config.yaml (one word of letters, digits and . _ @ + -)",
    "profile": "one word of letters, digits and . _ @ + - (a profile name in "
    "~/.nebius/config.yaml)",
}
"""What each kind of identifier must look like, for messages."""


def id_problem(field: str, value: str, prefix: str) -> str | None:
    """Why `value` is not an ID of the kind `prefix` names (None when it is one)."""
    if not value.startswith(prefix):
        return f"{field} {value!r} must start with {prefix!r}"
    body = value[len(prefix) :]
    if len(value) > MAX_ID_LENGTH or not _ID_BODY.fullmatch(body):
        return f"{field} {value!r} is not an ID: {SHAPES['id'].format(prefix=prefix)}"
    return None


def region_problem(field: str, value: str) -> str | None:
    """Why `value` is not a region name (None when it is one)."""
    if len(value) > MAX_REGION_LENGTH or not REGION_RE.fullmatch(value):
        return f"{field} {value!r} is not {SHAPES['region']}"
    return None


def profile_problem(field: str, value: str) -> str | None:
    """Why `value` is not a CLI profile name (None when it is one)."""
    if len(value) > MAX_PROFILE_LENGTH or not PROFILE_RE.fullmatch(value):
        return f"{field} {value!r} is not {SHAPES['profile']}"
    return None


def project_problem(field: str, value: str) -> str | None:
    """Why `value` is neither a project ID nor a project alias (None when it may be one)."""
    if len(value) > MAX_ID_LENGTH or not PROFILE_RE.fullmatch(value):
        return f"{field} {value!r} is not {SHAPES['project']}"
    return None


def identifier_problem(field: str, value: object) -> str | None:
    """Why `value` cannot be the identifier `field` names (None when it can): `region`,
    `tenant_id`, `project_id`, `subnet_id`, `service_account_id`, `profile` or `project` (an
    ID or an alias; any field ending in one of those, such as `state.region`)."""
    if not isinstance(value, str):
        return f"{field} must be text, got {type(value).__name__}"
    kind = field.rsplit(".", 1)[-1]
    if kind == "region":
        return region_problem(field, value)
    if kind == "profile":
        return profile_problem(field, value)
    if kind == "project":
        return project_problem(field, value)
    if kind == "service_account_id":
        return id_problem(field, value, SERVICE_ACCOUNT_PREFIX)
    if kind in IDENTITY_PREFIX:
        return id_problem(field, value, IDENTITY_PREFIX[kind])
    raise KeyError(field)


def identity_shape_problems(values: dict[str, str | None]) -> list[tuple[str, str]]:
    """(field, message) for each identity value in `values` (region, tenant, project,
    subnet) that is set but not of its shape."""
    out: list[tuple[str, str]] = []
    for name in ("region", *IDENTITY_PREFIX):
        value = values.get(name)
        problem = identifier_problem(name, value) if value is not None else None
        if problem is not None:
            out.append((name, problem))
    return out
