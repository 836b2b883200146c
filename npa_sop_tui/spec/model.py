"""The `npa.soperator/v0.0.1` cluster spec: models, and loading with positions.

The spec is the single source of truth for what a cluster is; every front door (CLI, TUI,
SDK, fleet) builds a `SoperatorSpec`. Field names and defaults follow npa's contract so that
its specs keep working, but the reading is strict where npa was sloppy: booleans must be
real YAML booleans, numbers real numbers, and unknown keys are errors with a did-you-mean.
The YAML dump is spec/yaml_dump.py; where the models' fields are, spec/model_fields.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    FieldSerializationInfo,
    SecretStr,
    ValidationError,
    field_serializer,
    field_validator,
)

from npa_sop_tui.spec.catalog import SUPPORTED_VERSIONS
from npa_sop_tui.spec.derived import (
    API_VERSION,
    DEFAULT_K8S_VERSION,
    DEFAULT_NODE_GROUP_VERSION,
    DEFAULT_OPERATOR_VERSION,
    VERSION_FIELDS,
    CapacityMode,
    PoolFacts,
    SelectorKind,
    SpecFacts,
    SystemFacts,
    blank_to_none,
    capacity_mode_of,
    kube_context,
    recipe_generation,
    strip_secret,
)
from npa_sop_tui.spec.findings import Finding
from npa_sop_tui.spec.model_fields import ModelFields
from npa_sop_tui.spec.reading import (
    LoadedSpec,
    SpecError,
    SpecReader,
    build_spec,
    findings_from_errors,
    load_spec_file,
)
from npa_sop_tui.spec.reading import parse_spec_text as _parse_with
from npa_sop_tui.spec.yaml_dump import REVEAL_SECRETS
from npa_sop_tui.spec.yaml_positions import Positions

# Re-exported: these lived here first and callers import them from here.
__all__ = [
    "API_VERSION",
    "DEFAULT_K8S_VERSION",
    "DEFAULT_NODE_GROUP_VERSION",
    "DEFAULT_OPERATOR_VERSION",
    "SUPPORTED_VERSIONS",
    "VERSION_FIELDS",
    "CapacityMode",
    "ControlPlaneSpec",
    "LoadedSpec",
    "LoginSpec",
    "RoleSpec",
    "SelectorKind",
    "SoperatorSpec",
    "SpecError",
    "SystemSpec",
    "WorkerPoolSpec",
    "capacity_mode_of",
    "findings_from_validation_error",
    "kube_context",
    "load_spec",
    "parse_spec_text",
    "recipe_generation",
    "spec_from_mapping",
]


class _Model(BaseModel):
    # strict: "false" is not a boolean and "2" is not a number; say so instead of guessing.
    model_config = ConfigDict(extra="forbid", strict=True, validate_default=False)


class _NamedModel(_Model):
    """A model that may also be built positionally, in the field order of npa's SDK
    dataclasses (`positional`): `SoperatorSpec("demo", "eu-north1")`,
    `WorkerPoolSpec("cpu", "cpu-d3", "8vcpu-32gb", 2)`. Values are validated exactly like the
    keywords (strict: a non-string name is an error)."""

    positional: ClassVar[tuple[str, ...]] = ("name",)

    # `self` positional-only, as in pydantic's own __init__: a spec key named `self` is a
    # field error like any other unknown key, not a clash with the argument
    def __init__(self, /, *args: Any, **data: Any) -> None:
        cls = type(self).__name__
        if len(args) > len(self.positional):
            raise TypeError(
                f"{cls}() takes at most {len(self.positional)} positional arguments "
                f"({len(args)} given)"
            )
        for field_name, value in zip(self.positional, args, strict=False):
            if field_name in data:
                raise TypeError(f"{cls}() got multiple values for argument {field_name!r}")
            data[field_name] = value
        super().__init__(**self._flat_keywords(data))

    @classmethod
    def _flat_keywords(cls, data: dict[str, Any]) -> dict[str, Any]:
        return data


# Derived values (properties, summaries) live in the `derived.py` mixins, shared with the lean
# validator; validators are plain functions from there for the same reason.


class SystemSpec(_Model, SystemFacts):
    """System node group: autoscales between min_size and max_size."""

    min_size: int = 3
    max_size: int | None = Field(default=None, description="None → max(min_size, 24)")
    preset: str | None = Field(default=None, description="None → the sizing tier decides")


class RoleSpec(_Model):
    """Controller / accounting node: cpu-d3, preset chosen by the sizing tier unless set."""

    preset: str | None = None


class LoginSpec(_Model):
    preset: str = "16vcpu-64gb"


class ControlPlaneSpec(_Model):
    system: SystemSpec = Field(default_factory=SystemSpec)
    controller: RoleSpec = Field(default_factory=RoleSpec)
    login: LoginSpec = Field(default_factory=LoginSpec)
    accounting: RoleSpec = Field(default_factory=RoleSpec)


class WorkerPoolSpec(_NamedModel, PoolFacts):
    """One pool of identical Slurm worker nodes (one `slurm_nodeset_workers` entry)."""

    positional: ClassVar[tuple[str, ...]] = (
        "name",
        "platform",
        "preset",
        "size",
        "boot_disk_gib",
        "fabric",
        "preemptible",
        "docker_cache",
        "docker_cache_gib",
        "docker_cache_disk_type",
        "capacity_block_group",
        "capacity_block_group_name",
    )

    name: str
    platform: str = "cpu-d3"
    preset: str = "8vcpu-32gb"
    size: int = Field(default=1, description="fixed node count; autoscaling is off")
    boot_disk_gib: int = 512
    fabric: str | None = Field(default=None, description="InfiniBand fabric (GPU pools)")
    preemptible: bool = False
    docker_cache: bool = False
    docker_cache_gib: int = 372
    docker_cache_disk_type: str = "NETWORK_SSD_IO_M3"
    # A secret: masked in repr, str and JSON dumps; `reveal_secrets` in the serialization
    # context (dump_spec_yaml(include_secrets=True), the wizard's own mapping) shows it.
    capacity_block_group: SecretStr | None = Field(
        default=None, description="capacity block group ID; prefer supplying it at run time"
    )
    capacity_block_group_name: str | None = Field(
        default=None, description="capacity block group name; resolved to an ID before render"
    )
    # gpu-gb300 workers get local NVMe (the recipe turns it on for that platform), and the
    # recipe needs the device layout to size ephemeral storage.
    local_nvme_device_count: int | None = Field(default=None, description="gpu-gb300 only")
    local_nvme_device_gb: int | None = Field(default=None, description="gpu-gb300 only, in GB")

    _strip = field_validator("fabric", "capacity_block_group_name")(blank_to_none)
    _strip_secret = field_validator("capacity_block_group", mode="before")(strip_secret)

    @field_serializer("capacity_block_group")
    def _dump_secret(self, value: SecretStr | None, info: FieldSerializationInfo) -> Any:
        if value is None:
            return None
        if info.context and info.context.get(REVEAL_SECRETS):
            return value.get_secret_value()
        # Python dumps keep the SecretStr, so a model built from them is the same model.
        return value if info.mode == "python" else str(value)


class SoperatorSpec(_NamedModel, SpecFacts):
    """A Slurm-on-Kubernetes cluster, in npa's compact `npa.soperator/v0.0.1` form."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)

    # npa's SDK dataclass field order (new fields were appended there, so old positional
    # calls keep their meaning); the control-plane ones are its flat names.
    positional: ClassVar[tuple[str, ...]] = (
        "name",
        "region",
        "tenant_id",
        "project_id",
        "subnet_id",
        "ssh_public_keys",
        "system_min_size",
        "system_preset",
        "controller_preset",
        "login_preset",
        "workers",
        "accounting",
        "telemetry",
        "use_default_apparmor_profile",
        "jail_size_gib",
        "slurm_operator_version",
        "k8s_version",
        "node_group_version",
        "root_login_ssh_public_key",
        "system_max_size",
        "accounting_preset",
        "slurm_rest_enabled",
    )

    api_version: Literal["npa.soperator/v0.0.1"] = Field(default=API_VERSION, alias="apiVersion")
    name: str
    region: str | None = None
    tenant_id: str | None = None
    project_id: str | None = None
    subnet_id: str | None = None
    root_login_ssh_public_key: str | None = None
    ssh_public_keys: list[str] = Field(default_factory=list, description="legacy alias, ≤1")
    control_plane: ControlPlaneSpec = Field(default_factory=ControlPlaneSpec)
    workers: list[WorkerPoolSpec] = Field(default_factory=list)
    accounting: bool = False
    telemetry: bool = False
    slurm_rest_enabled: bool | None = Field(default=None, description="None → follows accounting")
    use_default_apparmor_profile: bool | None = Field(
        default=None, description="None → the recipe's default (true)"
    )
    jail_size_gib: int = 512
    slurm_operator_version: str = DEFAULT_OPERATOR_VERSION
    k8s_version: str | None = Field(default=None, description="None → the recipe's default")
    node_group_version: str | None = Field(default=None, description="None → recipe default")

    _strip = field_validator(
        "region", "tenant_id", "project_id", "subnet_id", "root_login_ssh_public_key"
    )(blank_to_none)

    @classmethod
    def _flat_keywords(cls, data: dict[str, Any]) -> dict[str, Any]:
        """npa's flat control-plane keywords (`system_min_size=`, `login_preset=`, …) moved
        into `control_plane`; giving both forms of one value is an error."""
        flat = {k: data.pop(k) for k in list(data) if k in FLAT_CONTROL_PLANE}
        if not flat:
            return data
        plane = data.get("control_plane")
        if isinstance(plane, ControlPlaneSpec):
            plane = plane.model_dump(exclude_unset=True)
        plane = {k: dict(v) for k, v in (plane or {}).items()}
        for key, value in flat.items():
            role, field_name = FLAT_CONTROL_PLANE[key]
            if field_name in plane.get(role, {}):
                raise TypeError(f"SoperatorSpec() got {key} and control_plane.{role}.{field_name}")
            if value is None and (role, field_name) in _REQUIRED_FLAT:
                continue  # npa's dataclass default; ours is the same
            plane.setdefault(role, {})[field_name] = value
        data["control_plane"] = plane
        return data

    # npa's dataclass methods, for code written against it.
    def validate(self) -> None:  # type: ignore[override]
        """Run every cluster rule; `SpecError` (a `ValueError`) lists each problem."""
        from npa_sop_tui.spec.findings import errors_of
        from npa_sop_tui.spec.validate import validate_spec

        found = validate_spec(self)
        if errors_of(found):
            raise SpecError(found, source=f"spec {self.name!r}")

    def effective_system_max_size(self) -> int:
        return self.control_plane.system.effective_max_size

    def effective_slurm_rest_enabled(self) -> bool:
        return bool(self.rest_enabled)

    def explicit_root_login_ssh_public_key(self) -> str:
        return self.root_login_ssh_public_key or (
            self.ssh_public_keys[0] if self.ssh_public_keys else ""
        )

    # npa's flat names, read-only here (the nested `control_plane` is the one place).
    @property
    def system_min_size(self) -> int:
        return self.control_plane.system.min_size

    @property
    def system_max_size(self) -> int | None:
        return self.control_plane.system.max_size

    @property
    def system_preset(self) -> str | None:
        return self.control_plane.system.preset

    @property
    def controller_preset(self) -> str | None:
        return self.control_plane.controller.preset

    @property
    def accounting_preset(self) -> str | None:
        return self.control_plane.accounting.preset

    @property
    def login_preset(self) -> str:
        return self.control_plane.login.preset


_REQUIRED_FLAT = {("system", "min_size"), ("login", "preset")}
FLAT_CONTROL_PLANE: dict[str, tuple[str, str]] = {
    "system_min_size": ("system", "min_size"),
    "system_max_size": ("system", "max_size"),
    "system_preset": ("system", "preset"),
    "controller_preset": ("controller", "preset"),
    "login_preset": ("login", "preset"),
    "accounting_preset": ("accounting", "preset"),
}


def findings_from_validation_error(
    exc: ValidationError, root: type[BaseModel], positions: Positions | None
) -> list[Finding]:
    """Turn pydantic's errors into user-facing findings, placed at their YAML position."""
    return findings_from_errors(exc, ModelFields(root), positions)


# --- loading --------------------------------------------------------------------------------


def _validate(data: Any) -> SoperatorSpec:
    return SoperatorSpec.model_validate(data)  # looked up per call: tests replace it


READER = SpecReader(_validate, ModelFields(SoperatorSpec))


def parse_spec_text(
    text: str,
    *,
    source: str = "<string>",
    validate: bool = True,
    capacity: dict[str, str] | None = None,
) -> LoadedSpec:
    """Parse and validate spec YAML; raise `SpecError` listing every problem with positions.

    `capacity` ({pool: reservation id}, supplied at run time) counts as reserved capacity.
    """
    return _parse_with(text, READER, source=source, validate=validate, capacity=capacity)


def load_spec(
    path: str | Path, *, validate: bool = True, capacity: dict[str, str] | None = None
) -> LoadedSpec:
    """Read a spec file; problems (missing file, bad YAML, bad fields) raise `SpecError`."""
    return load_spec_file(path, READER, validate=validate, capacity=capacity)


def spec_from_mapping(
    data: Any, *, source: str = "<mapping>", validate: bool = True
) -> SoperatorSpec:
    """Build a spec from Python data (SDK, fleet); `SpecError` on any problem."""
    spec, _ = build_spec(data, READER, source=source, positions=None, run_validation=validate)
    return spec  # type: ignore[no-any-return]
