"""The shapes of Nebius IDs a spec (or config.yaml) may carry."""

from __future__ import annotations

# Nebius resource IDs start with their kind: tenant-e00…, project-e00…, vpcsubnet-e00….
IDENTITY_PREFIX = {"tenant_id": "tenant-", "project_id": "project-", "subnet_id": "vpcsubnet-"}


def identity_shape_problems(values: dict[str, str | None]) -> list[tuple[str, str]]:
    """(field, message) for each ID in `values` that does not have its kind's prefix."""
    out: list[tuple[str, str]] = []
    for name, prefix in IDENTITY_PREFIX.items():
        value = values.get(name)
        if value is not None and not value.startswith(prefix):
            out.append((name, f"{name} {value!r} must start with {prefix!r}"))
    return out
