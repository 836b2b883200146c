"""`~/.npa/config.yaml`: defaults shared by every front door, and identity resolution.

A missing file means all defaults. Identity (region, tenant, project, subnet) resolves in
this order: the spec, then the environment (`NPA_REGION`, `NPA_TENANT_ID`, `NPA_PROJECT_ID`,
`NPA_SUBNET_ID`), then this config file: our top-level keys, then the existing npa's project
section (`projects.<alias>`, see npa_config.py), which shares the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home import paths
from npa_sop_tui.home.npa_config import NpaProject
from npa_sop_tui.spec.findings import Finding, summary_line
from npa_sop_tui.spec.identity import identifier_problem, identity_shape_problems
from npa_sop_tui.spec.yaml_positions import YamlProblem, load_yaml_mapping

DEFAULT_STATUS_INTERVAL = 10.0
"""Seconds between status refreshes, whatever the front door."""
STATUS_INTERVAL_RANGE = (1.0, 3600.0)
"""The refresh interval a person may set (flag, environment, config.yaml), in seconds: each
refresh runs sinfo over SSH, so a shorter one only loads the login node (and a tiny or
`nan` one would spin); the dashboard's fastest choice is the lower bound."""
LEASE_SECONDS_RANGE = (2.0, 3600.0)
"""How long a state-bucket lock lease may be, in seconds."""

IDENTITY_ENV = {
    "region": "NPA_REGION",
    "tenant_id": "NPA_TENANT_ID",
    "project_id": "NPA_PROJECT_ID",
    "subnet_id": "NPA_SUBNET_ID",
}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


def _identifier(value: str | None, info: ValidationInfo) -> str | None:
    """A field that names a Nebius ID or a region holds one (`spec.identity`): checked as
    the file is read, so the finding names its line, before the value reaches a path."""
    problem = identifier_problem(info.field_name or "", value) if value is not None else None
    if problem is not None:
        raise PydanticCustomError("identifier", problem)
    return value


class RecipeSource(_Model):
    """Where the recipe comes from; unset fields take the recipe module's defaults."""

    url: str | None = None
    ref: str | None = Field(default=None, description="a 40-hex commit; default: the pinned one")
    path: str | None = Field(default=None, description="a local checkout instead of cloning")

    @field_validator("ref")
    @classmethod
    def _immutable(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if len(value) != 40 or any(c not in "0123456789abcdef" for c in value.lower()):
            raise ValueError(
                "recipe ref must be an immutable 40-character commit SHA; branches and tags "
                "are not accepted"
            )
        return value.lower()


class LoginConfig(_Model):
    host: str | None = None
    port: int = Field(default=22, ge=1, le=65535)
    user: str = "root"


class StatusConfig(_Model):
    interval_seconds: float = Field(
        default=DEFAULT_STATUS_INTERVAL,
        ge=STATUS_INTERVAL_RANGE[0],
        le=STATUS_INTERVAL_RANGE[1],
        allow_inf_nan=False,
    )

    @field_validator("interval_seconds", mode="before")
    @classmethod
    def _int_ok(cls, value: Any) -> Any:
        return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


class TuiConfig(_Model):
    theme: str | None = None
    keys: dict[str, str] = Field(default_factory=dict, description="binding id → key")


class StateConfig(_Model):
    """Where clusters' Terraform state and npa's records live (see docs/lifecycle.md)."""

    backend: Literal["local", "s3"] = "local"
    bucket: str | None = Field(default=None, description="Object Storage bucket (s3 backend)")
    prefix: str = Field(default="npa", description="key prefix of every object npa writes")
    endpoint: str | None = Field(
        default=None, description="S3 endpoint; default https://storage.<region>.nebius.cloud"
    )
    region: str | None = Field(default=None, description="the bucket's region; default `region`")
    lease_seconds: float = Field(
        default=120.0, ge=LEASE_SECONDS_RANGE[0], le=LEASE_SECONDS_RANGE[1], allow_inf_nan=False
    )
    service_account_id: str | None = Field(
        default=None,
        description="service account whose Object Storage key npa mints when no AWS_* "
        "keys are set; default: the one the Nebius credentials sign in as",
    )

    _identifiers = field_validator("region", "service_account_id")(_identifier)

    @field_validator("lease_seconds", mode="before")
    @classmethod
    def _int_ok(cls, value: Any) -> Any:
        return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


class NpaConfig(_Model):
    region: str | None = None
    tenant_id: str | None = None
    project_id: str | None = None
    subnet_id: str | None = None
    ssh_public_key_path: str | None = None
    ssh_private_key_path: str | None = None
    recipe: RecipeSource = Field(default_factory=RecipeSource)
    terraform_bin: str | None = None
    plugin_cache_dir: str | None = None  # Terraform's provider cache (terraform/plugin_cache.py)
    login: LoginConfig = Field(default_factory=LoginConfig)
    status: StatusConfig = Field(default_factory=StatusConfig)
    tui: TuiConfig = Field(default_factory=TuiConfig)
    state: StateConfig = Field(default_factory=StateConfig)
    # The existing npa's sections of the same file (home/npa_config.py reads them for
    # identity; the rest are accepted as npa wrote them and never written back).
    projects: dict[str, NpaProject] = Field(default_factory=dict)
    default_project: str | None = None
    default_workbench: str | None = None
    workbenches: dict[str, Any] = Field(default_factory=dict)
    workbench: dict[str, Any] | None = None
    skypilot: dict[str, Any] | None = None
    container_registry: str | None = None
    workflows: dict[str, Any] | None = None

    _identifiers = field_validator("region", "tenant_id", "project_id", "subnet_id")(_identifier)


class IdentityError(UsageError):
    """Deploy-time identity (tenant, project, subnet, region) is missing or malformed."""


class ConfigError(UsageError):
    """The config file is unusable; `.findings` lists every problem with its position."""

    def __init__(self, findings: list[Finding], *, source: str) -> None:
        self.findings = findings = sorted(findings, key=lambda f: (f.line or 0, f.column or 0))
        first = findings[0].render() if findings else "invalid config"
        head = (
            first if len(findings) == 1 else f"{source}: invalid config ({summary_line(findings)})"
        )
        super().__init__(f"invalid config: {head}" if len(findings) == 1 else head)

    def render(self) -> str:
        if len(self.findings) <= 1:
            return self.message
        return "\n".join([self.message, *(f"  {f.render()}" for f in self.findings)])

    def json_extra(self) -> dict[str, Any]:
        return {"findings": [f.to_dict() for f in self.findings]}


def load_config(path: str | Path | None = None) -> NpaConfig:
    """The config at `path` (default `paths.config_path()`); defaults when it does not exist."""
    from npa_sop_tui.spec.model import findings_from_validation_error

    cfg_path = Path(path) if path is not None else paths.config_path()
    source = str(cfg_path)
    from npa_sop_tui.home.bounded_read import Unreadable, read_regular_text
    from npa_sop_tui.spec.yaml_positions import MAX_BYTES

    try:  # a regular file of at most 1 MiB: a device or FIFO is refused before any read,
        # and so is a config another account wrote or could write (its terraform_bin runs)
        text = read_regular_text(
            cfg_path, limit=MAX_BYTES, what="config file", subject="config", own=True
        )
    except Unreadable as exc:
        if exc.missing:
            return NpaConfig()
        raise ConfigError(
            [Finding("error", "", f"cannot read: {exc.reason}", exc.hint, source)], source=source
        ) from None
    if not text.strip():
        return NpaConfig()
    try:
        doc = load_yaml_mapping(text, source=source, what="config")
    except YamlProblem as exc:
        raise ConfigError(exc.findings, source=source) from None
    try:
        return NpaConfig.model_validate(doc.data)
    except ValidationError as exc:
        findings = findings_from_validation_error(exc, NpaConfig, doc.positions)
        raise ConfigError(findings, source=source) from None


class Identity(BaseModel):
    """Where a cluster lives in Nebius. Fields are None until resolved."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    region: str | None = None
    tenant_id: str | None = None
    project_id: str | None = None
    subnet_id: str | None = None

    def missing(self) -> list[str]:
        return [name for name in IDENTITY_ENV if getattr(self, name) is None]


def require_identity(identity: Identity, config_file: Path | None = None) -> Identity:
    """`identity` if it is complete and well-formed; else `UsageError` naming each problem
    and every place the value can be set (`config_file`, the config the settings read, among
    them)."""
    config_file = config_file or paths.config_path()
    problems: list[str] = []
    for name in identity.missing():
        problems.append(
            f"{name} is not set: put `{name}:` in the spec, export {IDENTITY_ENV[name]}, or "
            f"add `{name}:` to {config_file}"
        )
    problems += [message for _, message in identity_shape_problems(identity.model_dump())]
    if problems:
        raise IdentityError(
            "cluster identity is incomplete:\n  " + "\n  ".join(problems),
            hint="validate and render work without identity; deploy-time operations need it, "
            "or use the sandbox, which needs none",
        )
    return identity


def seconds_in(raw: str, name: str, bounds: tuple[float, float]) -> float:
    """`raw` as a number of seconds within `bounds`; `UsageError` naming `name` (a flag or
    a variable) otherwise, `nan` and `inf` included."""
    import math

    low, high = bounds
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(f"{name} {raw!r} is not a number of seconds") from None
    if not math.isfinite(value) or not low <= value <= high:
        raise UsageError(
            f"{name} {raw!r} must be between {low:g} and {high:g} seconds",
            hint=f"for example {name} 10" if name.startswith("-") else f"for example {name}=10",
        )
    return value
