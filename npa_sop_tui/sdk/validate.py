"""The SDK's spec inputs and `validate`: a spec, a mapping or a path in, a typed result out
(spec problems are findings with positions, never exceptions)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from npa_sop_tui.errors import UsageError
from npa_sop_tui.spec.findings import Finding
from npa_sop_tui.spec.model import SoperatorSpec, SpecError, WorkerPoolSpec

SoperatorSpecError = SpecError
"""The anchor SDK's name for a spec problem (a `ValueError`); it carries positioned findings."""

SpecLike = SoperatorSpec | Mapping[str, Any] | str | os.PathLike[str]


class WorkerSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    platform: str
    preset: str
    size: int
    preemptible: bool
    capacity_mode: Literal["reserved", "preemptible", "on-demand"]


class ValidationResult(BaseModel):
    """What `validate` found. `ok` is false when any finding is an error."""

    model_config = ConfigDict(extra="forbid")

    ok: bool
    api_version: str = "npa.soperator/v0.0.1"
    name: str | None = None
    source: str
    kube_context: str | None = None
    workers: list[WorkerSummary] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)


def load(spec: SpecLike) -> SoperatorSpec:
    """A `SoperatorSpec` from a spec, a mapping, or a path; `SpecError` with positions."""
    from npa_sop_tui.spec.model import load_spec, spec_from_mapping

    if isinstance(spec, SoperatorSpec):
        return spec
    if isinstance(spec, Mapping):
        return spec_from_mapping(dict(spec))
    if isinstance(spec, str | os.PathLike):
        return load_spec(Path(spec)).spec
    raise UsageError(
        f"spec must be a SoperatorSpec, a mapping or a path, not {type(spec).__name__}"
    )


def source_name(spec: SpecLike) -> str:
    if isinstance(spec, str | os.PathLike):
        return str(spec)
    return "<mapping>" if isinstance(spec, Mapping) else "<spec>"


def validate(spec: SpecLike) -> ValidationResult:
    """Parse and check a spec; never raises for spec problems: they are in `findings`."""
    from npa_sop_tui.spec.validate import validate_spec

    source = source_name(spec)
    try:
        model = load(spec)
    except SpecError as exc:
        return ValidationResult(ok=False, source=source, findings=list(exc.findings))
    findings = validate_spec(model)
    return ValidationResult(
        ok=not any(f.level == "error" for f in findings),
        name=model.name,
        source=source,
        kube_context=_kube_context(model.name),
        workers=[_worker(w) for w in model.workers],
        findings=list(findings),
    )


def _kube_context(name: str) -> str:
    from npa_sop_tui.spec.model import kube_context

    return kube_context(name)


def _worker(pool: WorkerPoolSpec) -> WorkerSummary:
    return WorkerSummary(
        name=pool.name,
        platform=pool.platform,
        preset=pool.preset,
        size=pool.size,
        preemptible=pool.preemptible,
        capacity_mode=pool.capacity_mode(),
    )
