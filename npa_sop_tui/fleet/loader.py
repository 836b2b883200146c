"""Read a fleet file into resolved targets, or explain every problem with file:line.

Everything that can be known before touching Terraform is checked here, so a fleet never
starts half its targets and then trips over a typo in the last one: the file shape, the
identity rule for embedded soperator blocks, fleet-wide unique soperator names, and every
embedded spec through the same spec core the standalone CLI uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from npa_sop_tui.errors import UsageError
from npa_sop_tui.fleet.model import (
    DNS_LABEL,
    FLEET_API_VERSION,
    IDENTITY_FIELDS,
    SPEC_API_VERSION,
    FleetCluster,
    FleetFile,
    FleetTarget,
    deep_merge,
    slugify,
)
from npa_sop_tui.spec.findings import Finding, did_you_mean, error, errors_of
from npa_sop_tui.spec.yaml_positions import Positions, YamlProblem, load_yaml_mapping


class FleetError(UsageError):
    """The fleet file is wrong; `findings` say where (exit 2, nothing has run)."""

    def __init__(self, findings: list[Finding], *, source: str) -> None:
        errors = errors_of(findings) or findings
        head = f"{source}: {len(errors)} problem(s) in the fleet file"
        super().__init__(
            head + "\n" + "\n".join(f"  {f.render()}" for f in errors),
            hint="fix the fields named above; nothing was planned or deployed",
        )
        self.findings = errors
        self.source = source

    def json_extra(self) -> dict[str, object]:
        return {"findings": [f.to_dict() for f in self.findings]}


@dataclass
class LoadedFleet:
    file: FleetFile
    name: str
    source: str
    targets: list[FleetTarget]
    positions: Positions | None = None


def load_fleet(path: str | Path) -> LoadedFleet:
    path = Path(path)
    from npa_sop_tui.home.bounded_read import Unreadable, read_regular_text
    from npa_sop_tui.spec.yaml_positions import MAX_BYTES

    try:  # a regular file of at most 1 MiB: a device or FIFO is refused before any read
        text = read_regular_text(path, limit=MAX_BYTES, what="fleet file")
    except Unreadable as exc:
        if exc.missing:
            raise UsageError(
                f"fleet file {str(path)!r} does not exist", hint="pass the path with --file"
            ) from None
        raise UsageError(f"{path}: {exc.reason}", hint=exc.hint) from None
    return parse_fleet_text(text, source=str(path))


def parse_fleet_text(text: str, *, source: str = "<fleet>") -> LoadedFleet:
    try:
        doc = load_yaml_mapping(text, source=source, what="fleet file")
    except YamlProblem as exc:
        raise FleetError(exc.findings, source=source) from None
    return fleet_from_mapping(doc.data, source=source, positions=doc.positions)


def fleet_from_mapping(
    data: dict[str, Any], *, source: str = "<fleet>", positions: Positions | None = None
) -> LoadedFleet:
    placer = _Placer(positions, source)
    findings: list[Finding] = []
    _check_envelope_fields(data, findings)
    try:
        file = FleetFile.model_validate(data)
    except ValidationError as exc:
        findings.extend(_pydantic_findings(exc))
        raise FleetError([placer.place(f) for f in findings], source=source) from None

    name = slugify(file.name)
    if not DNS_LABEL.match(name):
        findings.append(
            error(
                "name",
                f"fleet name {file.name!r} is not a DNS-1123 label once slugged ({name!r})",
                "use 1-63 lowercase letters, digits and dashes",
            )
        )
    targets = _targets(file, name, findings)
    _check_unique(targets, findings, placer)
    for target in targets:
        if target.backend == "soperator":
            _build_spec(target, file, findings, placer)
    placed = [placer.place(f) for f in findings]
    if errors_of(placed):
        raise FleetError(placed, source=source)
    return LoadedFleet(file=file, name=name, source=source, targets=targets, positions=positions)


# ---------------------------------------------------------------------------------------


class _Placer:
    """Attach file:line to findings using the positions of the fleet file."""

    def __init__(self, positions: Positions | None, source: str) -> None:
        self.positions = positions
        self.source = source

    def exact(self, path: str) -> bool:
        if self.positions is None:
            return False
        return path in self.positions.keys or path in self.positions.values

    def where(self, path: str) -> str:
        """`projects[0].clusters[1] at fleet.yaml:14` for naming a second place."""
        pos = self.positions.lookup(f"{path}.name", prefer_key=True) if self.positions else None
        return f"{path} at {self.source}:{pos[0]}" if pos else path

    def place(self, finding: Finding) -> Finding:
        if self.positions is None:
            return finding if finding.file else finding.at(self.source, None, None)
        return self.positions.place(finding, prefer_key=True)


def _check_envelope_fields(data: dict[str, Any], findings: list[Finding]) -> None:
    """Anchor rules pydantic can't phrase well: the identity envelope of soperator blocks."""
    blocks: list[tuple[str, Any]] = []
    defaults = data.get("defaults")
    if isinstance(defaults, dict):
        blocks.append(("defaults.soperator", defaults.get("soperator")))
    projects = data.get("projects")
    for p, project in enumerate(projects if isinstance(projects, list) else []):
        clusters = project.get("clusters") if isinstance(project, dict) else None
        for c, cluster in enumerate(clusters if isinstance(clusters, list) else []):
            if isinstance(cluster, dict):
                blocks.append((f"projects[{p}].clusters[{c}].soperator", cluster.get("soperator")))
    for base, block in blocks:
        if not isinstance(block, dict):
            continue
        for key in IDENTITY_FIELDS:
            if key in block:
                findings.append(
                    error(
                        f"{base}.{key}",
                        f"a fleet soperator block must not set target identity field {key!r}",
                        "set it on the project (region, project_id, subnet_id) or the fleet "
                        "(tenant_id, region) instead",
                    )
                )
        if "apiVersion" in block:
            findings.append(
                error(
                    f"{base}.apiVersion",
                    "apiVersion is not allowed inside a fleet soperator block",
                    f"the fleet sets {SPEC_API_VERSION} itself; remove this line",
                )
            )


_FIELD_HINTS = {
    "cluster": "a soperator target allows name, backend, labels and soperator; "
    "place backend-specific settings under 'soperator'",
}


def _pydantic_findings(exc: ValidationError) -> list[Finding]:
    out: list[Finding] = []
    for err in exc.errors():
        loc = [part for part in err["loc"] if not isinstance(part, str) or part]
        path = ""
        for part in loc:
            path = (
                f"{path}[{part}]"
                if isinstance(part, int)
                else (f"{path}.{part}" if path else str(part))
            )
        kind = err["type"]
        if kind == "extra_forbidden":
            field = str(loc[-1])
            model = _model_at(loc[:-1])
            hint = did_you_mean(field, model.model_fields) if model else None
            if model is FleetCluster and hint is None:
                hint = _FIELD_HINTS["cluster"]
            out.append(error(path, f"unknown field {field!r}", hint))
        elif kind == "missing":
            out.append(error(path, "this field is required"))
        elif kind == "literal_error" and path == "apiVersion":
            out.append(
                error(
                    path,
                    f"unsupported apiVersion {err.get('input')!r}",
                    f"expected {FLEET_API_VERSION}",
                )
            )
        elif kind == "too_short" and path == "projects":
            out.append(error(path, "a fleet needs at least one project"))
        else:
            out.append(error(path, err["msg"]))
    return out


def _model_at(loc: list[Any]) -> Any:
    from npa_sop_tui.fleet import model as m

    names = [part for part in loc if isinstance(part, str)]
    if not names:
        return FleetFile
    return {
        "defaults": m.FleetDefaults,
        "projects": m.FleetProject,
        "clusters": m.FleetCluster,
    }.get(names[-1])


def _targets(file: FleetFile, fleet: str, findings: list[Finding]) -> list[FleetTarget]:
    targets: list[FleetTarget] = []
    for p, project in enumerate(file.projects):
        raw_key = project.name or project.project_id
        if not raw_key:
            findings.append(
                error(
                    f"projects[{p}]",
                    "a project needs a name or a project_id",
                    "name: the project key (created as prefix+name); project_id: an existing one",
                )
            )
            continue
        key = slugify(raw_key)
        clusters = project.clusters if project.clusters is not None else [FleetCluster()]
        if not clusters:
            findings.append(error(f"projects[{p}].clusters", "clusters is empty"))
        for c, cluster in enumerate(clusters):
            default_name = "cluster" if len(clusters) == 1 else f"cluster-{c}"
            name = slugify(cluster.name) if cluster.name else default_name
            backend = cluster.backend or file.defaults.backend or "mk8s"
            targets.append(
                FleetTarget(
                    fleet=fleet,
                    project_key=key,
                    project_index=p,
                    cluster_index=c,
                    name=name,
                    backend=backend,
                    labels=dict(cluster.labels),
                    region=project.region or file.region,
                    tenant_id=file.tenant_id,
                    project_id=project.project_id,
                    subnet_id=project.subnet_id,
                )
            )
            if backend == "soperator" and cluster.mk8s is not None:
                findings.append(
                    error(
                        f"projects[{p}].clusters[{c}].mk8s",
                        "a soperator target cannot carry an mk8s block",
                        "remove it, or set backend: mk8s",
                    )
                )
    return targets


def _check_unique(targets: list[FleetTarget], findings: list[Finding], placer: _Placer) -> None:
    """Soperator names are fleet-wide unique: the kube context `nebius-<name>-slurm` and
    the local inventory are global. Within a project every name is unique."""
    seen_soperator: dict[str, FleetTarget] = {}
    seen_in_project: dict[tuple[str, str], FleetTarget] = {}
    for target in targets:
        first = seen_in_project.get((target.project_key, target.name))
        if first is not None:
            findings.append(
                error(
                    f"{target.path}.name",
                    f"duplicate cluster name {target.name!r} in project {target.project_key!r} "
                    f"(also at {placer.where(first.path)})",
                    "give each cluster of a project its own name",
                )
            )
            continue
        seen_in_project[(target.project_key, target.name)] = target
        if target.backend != "soperator":
            continue
        other = seen_soperator.get(target.name)
        if other is not None:
            findings.append(
                error(
                    f"{target.path}.name",
                    f"duplicate soperator cluster name {target.name!r} across the fleet: "
                    f"{other.key} ({placer.where(other.path)}) and {target.key} "
                    f"({placer.where(target.path)}); the kube "
                    f"context nebius-{target.name}-slurm and the local inventory are global",
                    "soperator names must be unique across all projects; rename one of them",
                )
            )
            continue
        seen_soperator[target.name] = target


def _build_spec(
    target: FleetTarget, file: FleetFile, findings: list[Finding], placer: _Placer
) -> None:
    from npa_sop_tui.errors import NpaError
    from npa_sop_tui.spec.model import spec_from_mapping

    project = file.projects[target.project_index]
    cluster = project.clusters[target.cluster_index] if project.clusters is not None else None
    own = dict(cluster.soperator or {}) if cluster is not None else {}
    own_path = f"{target.path}.soperator" if cluster is not None else "defaults.soperator"
    explicit = own.pop("name", None)
    if explicit is not None and slugify(str(explicit)) != target.name:
        findings.append(
            error(
                f"{own_path}.name",
                f"soperator.name {explicit!r} must match the fleet target name {target.name!r}",
                "remove soperator.name; the target name is used",
            )
        )
        return
    merged = deep_merge(dict(file.defaults.soperator or {}), own)
    # Identity and apiVersion were reported by _check_envelope_fields; drop them here so
    # the remaining fields are still checked in the same run.
    for key in ("name", "apiVersion", *IDENTITY_FIELDS):
        merged.pop(key, None)
    mapping = {"apiVersion": SPEC_API_VERSION, "name": target.name, **merged}
    target.mapping = mapping

    def relocate(finding: Finding) -> Finding:
        # Point at the block that set the value: the target's own, else the defaults.
        sub = finding.path
        for base in (own_path, "defaults.soperator"):
            full = f"{base}.{sub}" if sub else base
            if placer.exact(full):
                return Finding(finding.level, full, finding.message, finding.hint)
        full = f"{own_path}.{sub}" if sub else own_path
        return Finding(finding.level, full, f"{target.key}: {finding.message}", finding.hint)

    try:
        # The same parse + rule check the standalone CLI runs on cluster.yaml.
        target.spec = spec_from_mapping(mapping, source=f"{target.key}")
    except NpaError as exc:
        inner = getattr(exc, "findings", None) or [error("", exc.message, exc.hint)]
        findings.extend(relocate(f) for f in errors_of(inner))
