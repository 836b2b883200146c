"""The `npa.soperator/v0.0.1` cluster spec: models, loading with positions, dumping.

The spec is the single source of truth for what a cluster is; every front door (CLI, TUI,
SDK, fleet) builds a `SoperatorSpec`. Field names and defaults follow npa's contract so that
its specs keep working, but the reading is strict where npa was sloppy: booleans must be
real YAML booleans, numbers real numbers, and unknown keys are errors with a did-you-mean.
"""

from __future__ import annotations

import functools
import operator
import re
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

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

from npa_sop_tui.errors import UsageError
from npa_sop_tui.spec.catalog import SUPPORTED_VERSIONS
from npa_sop_tui.spec.findings import Finding, did_you_mean, error, errors_of, summary_line, warning
from npa_sop_tui.spec.yaml_positions import (
    MAX_BYTES,
    Positions,
    YamlProblem,
    join_path,
    load_yaml_mapping,
)

API_VERSION = "npa.soperator/v0.0.1"
DEFAULT_OPERATOR_VERSION = "4.1.6"
# Per recipe generation: the k8s / node-group versions of upstream's example tfvars
# (`installations/example/terraform.tfvars`).
DEFAULT_K8S_VERSION = {"4.1.6": "1.34", "4.1.12": "1.36"}
DEFAULT_NODE_GROUP_VERSION = {"4.1.6": "72", "4.1.12": "75"}
VERSION_FIELDS = ("slurm_operator_version", "k8s_version", "node_group_version")

CapacityMode = Literal["reserved", "preemptible", "on-demand"]
SelectorKind = Literal["id", "name", ""]


class _NoName:
    """Marks "no positional name given" (None is a value pydantic must see and reject)."""

    def __repr__(self) -> str:
        return "<or name=...>"


_NO_NAME: Any = _NoName()


class _Model(BaseModel):
    # strict: "false" is not a boolean and "2" is not a number; say so instead of guessing.
    model_config = ConfigDict(extra="forbid", strict=True, validate_default=False)


REVEAL_SECRETS = "reveal_secrets"  # serialization context key: dump secret values as they are


class _NamedModel(_Model):
    """A model whose `name` may also be given first, positionally, as npa's SDK allows:
    `SoperatorSpec("demo", region=...)`, `WorkerPoolSpec("cpu", size=2)`. The value is
    validated exactly like the keyword (strict: a non-string name is an error)."""

    def __init__(self, name: str = _NO_NAME, /, **data: Any) -> None:
        if name is not _NO_NAME:
            if "name" in data:
                raise TypeError(f"{type(self).__name__}() got the name twice")
            data["name"] = name
        super().__init__(**data)


def _blank_to_none(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    return value or None


class SystemSpec(_Model):
    """System node group: autoscales between min_size and max_size."""

    min_size: int = 3
    max_size: int | None = Field(default=None, description="None → max(min_size, 24)")
    preset: str | None = Field(default=None, description="None → the sizing tier decides")

    @property
    def effective_max_size(self) -> int:
        return self.max_size if self.max_size is not None else max(self.min_size, 24)


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


def capacity_mode_of(*, reserved: bool, preemptible: bool) -> CapacityMode:
    """How a pool's nodes are obtained: a reservation wins over preemptible."""
    if reserved:
        return "reserved"
    return "preemptible" if preemptible else "on-demand"


class WorkerPoolSpec(_NamedModel):
    """One pool of identical Slurm worker nodes (one `slurm_nodeset_workers` entry)."""

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

    _strip = field_validator("fabric", "capacity_block_group_name")(_blank_to_none)

    @field_validator("capacity_block_group", mode="before")
    @classmethod
    def _strip_secret(cls, value: Any) -> Any:
        if isinstance(value, SecretStr):
            value = value.get_secret_value()
        return _blank_to_none(value) if isinstance(value, str) or value is None else value

    @field_serializer("capacity_block_group")
    def _dump_secret(self, value: SecretStr | None, info: FieldSerializationInfo) -> Any:
        if value is None:
            return None
        if info.context and info.context.get(REVEAL_SECRETS):
            return value.get_secret_value()
        # Python dumps keep the SecretStr, so a model built from them is the same model.
        return value if info.mode == "python" else str(value)

    @property
    def capacity_block_group_id(self) -> str | None:
        """The reservation ID itself (render only; never show it)."""
        cbg = self.capacity_block_group
        return cbg.get_secret_value() if cbg is not None else None

    @property
    def is_gpu(self) -> bool:
        return self.platform.startswith("gpu-")

    @property
    def gpus_per_node(self) -> int:
        """GPU count from the preset name (`8gpu-…` → 8); 0 for CPU pools."""
        match = re.match(r"^(\d+)gpu-", self.preset)
        return int(match.group(1)) if self.is_gpu and match else 0

    def capacity_mode(self, capacity: dict[str, str] | None = None) -> CapacityMode:
        return capacity_mode_of(
            reserved=bool(self.reservation_selector_kind(capacity)), preemptible=self.preemptible
        )

    def reservation_selector_kind(self, capacity: dict[str, str] | None = None) -> SelectorKind:
        """`id`, `name` or "": the kind only, never the value (which must not be shown)."""
        if (capacity and self.name in capacity) or self.capacity_block_group:
            return "id"
        return "name" if self.capacity_block_group_name else ""

    def summary(self, capacity: dict[str, str] | None = None) -> dict[str, Any]:
        return {
            "name": self.name,
            "platform": self.platform,
            "preset": self.preset,
            "size": self.size,
            "gpus_per_node": self.gpus_per_node,
            "preemptible": self.preemptible,
            "docker_cache": self.docker_cache,
            "capacity_mode": self.capacity_mode(capacity),
            "reservation_selector": self.reservation_selector_kind(capacity) or None,
        }


class SoperatorSpec(_NamedModel):
    """A Slurm-on-Kubernetes cluster, in npa's compact `npa.soperator/v0.0.1` form."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)

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
    )(_blank_to_none)

    # --- derived values the front doors share ----------------------------------------------
    @property
    def kube_context(self) -> str:
        return kube_context(self.name)

    @property
    def worker_count(self) -> int:
        """Sum of pool sizes: what the recipe's sizing tier counts."""
        return sum(max(pool.size, 0) for pool in self.workers)

    @property
    def sizing_tier(self) -> str:
        from npa_sop_tui.spec.catalog import load_catalog

        return load_catalog().sizing_tier(self.worker_count).name

    @property
    def rest_enabled(self) -> bool:
        return self.accounting if self.slurm_rest_enabled is None else self.slurm_rest_enabled

    @property
    def has_gpu(self) -> bool:
        return any(pool.is_gpu for pool in self.workers)

    @property
    def recipe_generation(self) -> str:
        """`4.1.6` for 4.1.6/4.1.7 variable shapes, `4.1.12` for 4.1.12+ (else unknown)."""
        return recipe_generation(self.slurm_operator_version) or "unknown"

    @property
    def effective_k8s_version(self) -> str:
        return self.k8s_version or DEFAULT_K8S_VERSION.get(self.recipe_generation, "1.34")

    @property
    def effective_node_group_version(self) -> str:
        return self.node_group_version or DEFAULT_NODE_GROUP_VERSION.get(
            self.recipe_generation, "72"
        )

    def pool(self, name: str) -> WorkerPoolSpec | None:
        return next((p for p in self.workers if p.name == name), None)

    def summary(self, capacity: dict[str, str] | None = None) -> dict[str, Any]:
        """A stable, secret-free description for plan output and `validate --output json`."""
        system = self.control_plane.system
        return {
            "name": self.name,
            "region": self.region,
            "kube_context": self.kube_context,
            "sizing_tier": self.sizing_tier,
            "worker_count": self.worker_count,
            "slurm_operator_version": self.slurm_operator_version,
            "k8s_version": self.effective_k8s_version,
            "node_group_version": self.effective_node_group_version,
            "accounting": self.accounting,
            "slurm_rest_enabled": self.rest_enabled,
            "telemetry": self.telemetry,
            "control_plane": {
                "system_min_size": system.min_size,
                "system_max_size": system.effective_max_size,
                "system_preset": system.preset,
                "controller_preset": self.control_plane.controller.preset,
                "login_preset": self.control_plane.login.preset,
                "accounting_preset": self.control_plane.accounting.preset,
            },
            "workers": [pool.summary(capacity) for pool in self.workers],
        }


def kube_context(name: str) -> str:
    """The kube context the recipe writes: `nebius-<name>-slurm`."""
    return f"nebius-{name.lower().replace(' ', '-')}-slurm"


def recipe_generation(version: str) -> str | None:
    """Which variable shapes a Soperator version uses, or None: 4.1.6 and 4.1.7 share one,
    4.1.12 and 4.1.13 another."""
    return SUPPORTED_VERSIONS.get(version)


# --- errors ---------------------------------------------------------------------------------


class SpecError(UsageError):
    """A spec that cannot be used; `.findings` lists every problem (and the warnings).

    `source` names the file in the head of a many-error message; a lone finding names its own.
    """

    def __init__(self, findings: list[Finding], *, source: str | None = None) -> None:
        # errors first, each group in file order, so the output reads top to bottom
        self.findings = sorted(findings, key=lambda f: (not f.is_error, f.line or 0, f.column or 0))
        findings = self.findings
        errors = errors_of(findings)
        where = f"{source}: " if source else ""
        if len(errors) == 1:
            head = f"invalid spec: {errors[0].render()}"  # the finding names its own file
        elif errors:
            head = f"{where}invalid spec ({summary_line(findings)})"
        else:
            head = f"{where}invalid spec"
        super().__init__(head)

    def render(self) -> str:
        errors = errors_of(self.findings)
        if len(errors) <= 1:
            return self.message
        return "\n".join([self.message, *(f"  {f.render()}" for f in self.findings)])

    def json_extra(self) -> dict[str, Any]:
        return {"findings": [f.to_dict() for f in self.findings]}


# --- pydantic errors → findings -------------------------------------------------------------


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model class reached by following `loc` from `model` (for did-you-mean lists), or
    None where the path leaves the models (a dict's keys, a union's member tags)."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        info = next(
            (f for n, f in current.model_fields.items() if part in (n, f.alias)),
            None,
        )
        if info is None:
            return None
        current = info.annotation
        # unwrap list[Model] / Model | None / dict[str, …] down to the first argument
        while not _is_model(current):
            args = [a for a in typing.get_args(current) if a is not type(None)]
            if not args:
                return None
            current = args[0]
    return current


def _field_names(model: type[BaseModel]) -> list[str]:
    return [f.alias or n for n, f in model.model_fields.items()]


def _loc_path(loc: tuple[str | int, ...]) -> str:
    return functools.reduce(join_path, loc, "")


def _show(value: Any) -> str:
    try:
        text = repr(value)
    except RecursionError:  # a value nested deeper than repr can follow (Python callers)
        return f"a {type(value).__name__} nested too deeply"
    return text if len(text) <= 60 else text[:57] + "..."


def findings_from_validation_error(
    exc: ValidationError, root: type[BaseModel], positions: Positions | None
) -> list[Finding]:
    """Turn pydantic's errors into user-facing findings, placed at their YAML position."""
    out: list[Finding] = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        path = _loc_path(loc)
        kind = err["type"]
        value = err.get("input")
        hint: str | None = None
        if kind == "extra_forbidden":
            key = str(loc[-1])  # an unknown key always has a name
            parent = _model_at(root, loc[:-1])
            choices = _field_names(parent) if parent else []
            hint = did_you_mean(key, choices) or (
                f"allowed fields: {', '.join(choices)}" if choices else None
            )
            message = f"unknown field {key!r}"
        elif kind == "missing":
            message = "required field is missing"
        elif kind == "bool_type":
            message = f"must be true or false, got {_show(value)}"
            hint = "write a YAML boolean without quotes: true or false"
        elif kind in ("int_type", "int_parsing", "int_from_float"):
            message = f"must be a whole number, got {_show(value)}"
            hint = "write a number without quotes, e.g. 2"
        elif kind == "string_type":
            message = f"must be a string, got {_show(value)}"
            hint = "quote the value"
        elif kind == "literal_error" and path == "apiVersion":
            # Other files (workflows) reuse this; name the version *their* model expects.
            field = next(f for n, f in root.model_fields.items() if path in (n, f.alias))
            expected = " or ".join(typing.get_args(field.annotation))
            message = f"unsupported apiVersion {_show(value)}; expected {expected}"
            hint = f"use apiVersion: {expected}"
        elif kind in ("list_type", "model_type", "dict_type"):
            expected = "a list" if kind == "list_type" else "a mapping (key: value)"
            message = f"must be {expected}, got {_show(value)}"
        else:
            message = str(err["msg"])
        finding = error(path, message, hint)
        if positions is not None:
            # an unknown key is shown where the key is written, not at its value
            finding = positions.place(finding, prefer_key=kind == "extra_forbidden")
        out.append(finding)
    return out


# --- loading --------------------------------------------------------------------------------


@dataclass
class LoadedSpec:
    """A spec that loaded and validated without errors, with its warnings and positions."""

    spec: SoperatorSpec
    path: Path | None
    source: str
    findings: list[Finding] = field(default_factory=list)
    positions: Positions | None = None

    def position(self, path: str) -> tuple[int, int] | None:
        return self.positions.lookup(path) if self.positions else None


def _coerce_versions(data: dict[str, Any], positions: Positions | None) -> list[Finding]:
    """Read unquoted version numbers as written (`1.30` stays "1.30", not 1.3) and warn."""
    out: list[Finding] = []
    for name in VERSION_FIELDS:
        value = data.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        text = positions.numeric_text.get(name) if positions else None
        if text is None and isinstance(value, float):
            continue  # ambiguous (1.3 or 1.30?); the model reports "must be a string"
        data[name] = text if text is not None else str(value)
        out.append(
            warning(
                name,
                f"unquoted version {data[name]} read as the string {data[name]!r}",
                f'quote it: {name}: "{data[name]}" (YAML would read 1.30 as 1.3)',
            )
        )
    return out


def _build(
    data: Any,
    *,
    source: str,
    positions: Positions | None,
    run_validation: bool,
    capacity: dict[str, str] | None = None,
) -> tuple[SoperatorSpec, list[Finding]]:
    if not isinstance(data, dict):
        raise SpecError([Finding("error", "", "spec must be a mapping (key: value)", None, source)])
    data = dict(data)
    pre = _coerce_versions(data, positions)
    if positions is not None:
        pre = [positions.place(f) for f in pre]
    try:
        spec = SoperatorSpec.model_validate(data)
    except ValidationError as exc:
        found = findings_from_validation_error(exc, SoperatorSpec, positions)
        if run_validation:
            found += _rules_despite_model_errors(data, exc, positions, capacity)
        raise SpecError([*errors_of(pre), *found, *_warnings(pre)], source=source) from None
    except (TypeError, ValueError, RecursionError) as exc:  # exotic inputs from Python callers
        raise SpecError([Finding("error", "", f"cannot read spec: {exc}", None, source)]) from None
    findings = list(pre)
    if run_validation:
        from npa_sop_tui.spec.validate import validate_spec

        rules = validate_spec(spec, capacity=capacity)
        findings += [positions.place(f) for f in rules] if positions else rules
    if errors_of(findings):
        ordered = [*errors_of(findings), *_warnings(findings)]
        raise SpecError(ordered, source=source)
    return spec, findings


def _rules_despite_model_errors(
    data: dict[str, Any],
    exc: ValidationError,
    positions: Positions | None,
    capacity: dict[str, str] | None,
) -> list[Finding]:
    """Rule findings for the parts of a spec the model could read, so a user sees every
    problem in one go rather than one layer per run.

    Fields the model rejected are dropped (falling back to defaults; a missing or unreadable
    name gets a placeholder), the rest is validated, and findings about the dropped fields are
    left out.
    """
    import copy
    import difflib

    from npa_sop_tui.spec.validate import validate_spec

    failed: list[str] = []
    # best effort only: the model errors are what the user must fix first, so anything odd
    # here (an exotic Python value that will not copy, say) just means no rule findings
    try:
        patched = copy.deepcopy(data)
        for err in exc.errors():
            loc = tuple(err["loc"])
            failed.append(_loc_path(loc))
            if err["type"] == "extra_forbidden":
                # `fabrc:` is a misspelt `fabric:`; do not also report fabric as missing
                model = _model_at(SoperatorSpec, loc[:-1])
                close = difflib.get_close_matches(
                    str(loc[-1]), _field_names(model) if model else [], n=1
                )
                failed += [_loc_path((*loc[:-1], close[0]))] if close else []
            parent: Any = functools.reduce(operator.getitem, loc[:-1], patched)
            if isinstance(parent, list):
                return []  # a whole list item is unreadable; its siblings' indexes would shift
            if err["type"] == "missing" or loc == ("name",):
                # the name is required: a stand-in lets the rest of the spec be checked
                parent[loc[-1]] = "placeholder"
            else:
                del parent[loc[-1]]
        spec = SoperatorSpec.model_validate(patched)
        rules = validate_spec(spec, capacity=capacity)
    except Exception:
        return []

    def covered(path: str) -> bool:
        return any(path == bad or path.startswith((f"{bad}.", f"{bad}[")) for bad in failed)

    # warnings are left for the next run: they may be about the dropped fields' defaults
    kept = [f for f in rules if f.is_error and not covered(f.path)]
    return [positions.place(f) for f in kept] if positions else kept


def _warnings(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if not f.is_error]


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
    if not isinstance(text, str):
        raise SpecError([Finding("error", "", "spec text must be a string", None, source)])
    try:
        doc = load_yaml_mapping(text, source=source, what="spec")
    except YamlProblem as exc:
        raise SpecError(exc.findings, source=source) from None
    spec, findings = _build(
        doc.data,
        source=source,
        positions=doc.positions,
        run_validation=validate,
        capacity=capacity,
    )
    return LoadedSpec(
        spec=spec, path=None, source=source, findings=findings, positions=doc.positions
    )


def load_spec(
    path: str | Path, *, validate: bool = True, capacity: dict[str, str] | None = None
) -> LoadedSpec:
    """Read a spec file; problems (missing file, bad YAML, bad fields) raise `SpecError`."""
    source = str(path)
    path = Path(path)
    try:
        if path.is_dir():
            raise SpecError([Finding("error", "", "is a folder, not a spec file", None, source)])
        if path.stat().st_size > MAX_BYTES:
            raise SpecError(
                [
                    Finding(
                        "error", "", "spec is larger than 1 MiB", "is this the right file?", source
                    )
                ]
            )
        raw = path.read_bytes()
    except FileNotFoundError:
        raise SpecError(
            [
                Finding(
                    "error",
                    "",
                    f"spec file not found (looked for {path.resolve()})",
                    "check the path; relative paths start from the current folder",
                    source,
                )
            ]
        ) from None
    except OSError as exc:
        raise SpecError(
            [Finding("error", "", f"cannot read spec file: {exc.strerror}", None, source)]
        ) from None
    try:
        text = raw.decode()  # UTF-8
    except UnicodeDecodeError as exc:
        raise SpecError(
            [Finding("error", "", f"spec is not UTF-8 text (byte {exc.start})", None, source)]
        ) from None
    loaded = parse_spec_text(text, source=source, validate=validate, capacity=capacity)
    loaded.path = path
    return loaded


def spec_from_mapping(
    data: Any, *, source: str = "<mapping>", validate: bool = True
) -> SoperatorSpec:
    """Build a spec from Python data (SDK, fleet); `SpecError` on any problem."""
    spec, _ = _build(data, source=source, positions=None, run_validation=validate)
    return spec


def dump_spec_yaml(spec: SoperatorSpec, *, include_secrets: bool = False) -> str:
    """YAML for `spec`, keeping every field that was set.

    Capacity block group IDs are secrets (they must not land in a committed cluster.yaml),
    so they are left out unless `include_secrets` is true; supply them at run time instead.
    """
    import yaml

    data = spec.model_dump(
        mode="json",
        by_alias=True,
        exclude_unset=True,
        context={REVEAL_SECRETS: include_secrets},
    )
    ordered = {"apiVersion": API_VERSION, "name": spec.name}
    ordered.update({k: v for k, v in data.items() if k not in ordered})
    if not include_secrets:
        for pool in ordered.get("workers", []):
            pool.pop("capacity_block_group", None)
    for key in VERSION_FIELDS:
        if isinstance(ordered.get(key), str):
            ordered[key] = _Quoted(ordered[key])
    return yaml.dump(ordered, Dumper=_make_dumper(), sort_keys=False)


class _Quoted(str):
    """A version string: always written quoted, so `1.30` never becomes the number 1.3."""


@functools.cache
def _make_dumper() -> type:
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    Dumper.add_representer(
        _Quoted, lambda dumper, value: dumper.represent_scalar("tag:yaml.org,2002:str", value, '"')
    )
    return Dumper
