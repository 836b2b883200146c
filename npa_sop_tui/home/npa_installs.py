"""Clusters the existing npa deployed, found where it keeps them (read only).

The existing npa (`npa soperator deploy`) clones the recipe into
`<npa home>/soperator/nebius-solutions-library[-<ref12>]/` and runs Terraform in
`soperator/installations/<name>/` of that clone, with a local `terraform.tfstate` and the
sidecar `.npa-soperator-env.json` (0600) that pins the cluster's identity:

    {region, tenant_id, project_id, subnet_id, o11y_profile, auth_profile, backend: "soperator",
     cluster_id, cluster_name, provider_cluster_name, owned_filesystem_ids,
     owned_allocation_ids, owned_auxiliary_resources}

`npa fleet` does the same per target under
`<npa home>/fleet/<fleet>/<project>/<cluster>/soperator/`. The folders are found by that
layout alone (a path written inside one of npa's files never steers where we look), links
are not followed, and nothing here writes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home.paths import CLUSTER_NAME_RE, npa_home, soperator_root

SIDECAR = ".npa-soperator-env.json"
CLONE_GLOB = "nebius-solutions-library*"
IDENTITY_FIELDS = ("region", "tenant_id", "project_id", "subnet_id")
_SIDECAR_LIMIT = 256 * 1024
_REGION = re.compile(r"[a-z][a-z0-9-]{1,62}")
_STATE_FILE = "terraform.tfstate"


@dataclass(frozen=True)
class NpaInstall:
    """One installation the existing npa made (`problem` says why it cannot be used)."""

    name: str
    install_dir: Path
    recipe_dir: Path  # the clone's soperator/ folder (installations/example beside it)
    sidecar: dict[str, Any] = field(default_factory=dict)
    problem: str | None = None
    fleet: str | None = None
    project_key: str | None = None

    @property
    def has_state(self) -> bool:
        return (self.install_dir / _STATE_FILE).is_file()

    @property
    def recipe_ref(self) -> str | None:
        """The 12-hex ref prefix in the clone's folder name (`…-<ref12>`), if any."""
        clone = self.recipe_dir.parent.name
        _, _, ref = clone.partition("nebius-solutions-library-")
        return ref or None

    def identity(self) -> dict[str, str]:
        """The pinned region, tenant, project and subnet (only the non-empty ones)."""
        return {k: v for k in IDENTITY_FIELDS if isinstance(v := self.sidecar.get(k), str) and v}

    def missing_identity(self) -> list[str]:
        present = self.identity()
        return [k for k in IDENTITY_FIELDS if k not in present]

    def describe(self) -> str:
        where = f"fleet {self.fleet}/{self.project_key}" if self.fleet else "npa soperator"
        return f"{self.install_dir} ({where})"


def _real_dirs(pattern_root: Path, pattern: str) -> list[Path]:
    """Folders matching `pattern` under `pattern_root`, never through a link."""
    if not pattern_root.is_dir() or pattern_root.is_symlink():
        return []
    return sorted(p for p in pattern_root.glob(pattern) if p.is_dir() and not p.is_symlink())


def _installs_under(work_root: Path) -> list[tuple[str, Path, Path]]:
    """(name, install dir, recipe dir) below one of npa's work roots."""
    found = []
    for clone in _real_dirs(work_root, CLONE_GLOB):
        recipe = clone / "soperator"
        installations = recipe / "installations"
        if recipe.is_symlink() or installations.is_symlink():
            continue
        for install in _real_dirs(installations, "*"):
            name = install.name
            if name == "example" or not CLUSTER_NAME_RE.fullmatch(name):
                continue
            if (install / SIDECAR).is_file() or (install / _STATE_FILE).is_file():
                found.append((name, install, recipe))
    return found


def read_sidecar(install_dir: Path) -> tuple[dict[str, Any], str | None]:
    """The sidecar's content and, when it cannot be used, why (npa fails closed on it too)."""
    from npa_sop_tui.home.bounded_read import Unreadable, read_regular_text

    path = install_dir / SIDECAR
    if path.is_symlink():
        return {}, f"{path} is a link; npa writes it as a file"
    try:
        text = read_regular_text(path, limit=_SIDECAR_LIMIT, what="npa sidecar")
    except Unreadable as exc:
        if exc.missing:
            return {}, f"{path} is missing: the identity this cluster was deployed with is unknown"
        return {}, f"{path}: {exc.reason}"
    try:
        data = json.loads(text)
    except ValueError as exc:
        return {}, f"{path} is not JSON ({exc})"
    if not isinstance(data, dict):
        return {}, f"{path} is not a JSON object"
    backend = data.get("backend")
    if backend not in (None, "", "soperator"):
        return data, f"{path} belongs to backend {backend!r}, not soperator"
    if not all(isinstance(data.get(k, ""), str) for k in IDENTITY_FIELDS):
        return data, f"{path}: region, tenant_id, project_id and subnet_id must be strings"
    shape = _identity_shape(data)
    if shape:
        return data, f"{path}: {shape}"
    return data, None


def _identity_shape(data: dict[str, Any]) -> str | None:
    """What is wrong with the sidecar's identity values (they become Terraform's)."""
    from npa_sop_tui.spec.identity import identity_shape_problems

    values = {k: data.get(k) or None for k in IDENTITY_FIELDS}
    problems = [message for _, message in identity_shape_problems(values)]
    region = values["region"]
    if region is not None and not _REGION.fullmatch(region):
        problems.append(f"region {region!r} is not a region name")
    return "; ".join(problems) or None


def _install(name: str, install: Path, recipe: Path, fleet: str | None, key: str | None):  # type: ignore[no-untyped-def]
    sidecar, problem = read_sidecar(install)
    if problem is None:
        missing = [k for k in IDENTITY_FIELDS if not sidecar.get(k)]
        if missing:
            problem = (
                f"{install / SIDECAR} does not pin {', '.join(missing)}: npa refuses to act on "
                "an installation whose identity is incomplete, and so does npa-sop-tui"
            )
    return NpaInstall(name, install, recipe, sidecar, problem, fleet, key)


def install_at(install_dir: Path) -> NpaInstall:
    """The installation in `install_dir`, read where it is (its sidecar checked as npa
    checks it): for a folder already known to be npa's, or named by the user."""
    return _install(install_dir.name, install_dir, install_dir.parent.parent, None, None)


def discover() -> list[NpaInstall]:
    """Every installation of the existing npa in this npa home, standalone and fleet."""
    found = [
        _install(name, install, recipe, None, None)
        for name, install, recipe in _installs_under(soperator_root())
    ]
    fleets = npa_home() / "fleet"
    for target in _real_dirs(fleets, "*/*/*"):
        work_root = target / "soperator"
        if work_root.is_symlink():
            continue
        fleet, project_key = target.parent.parent.name, target.parent.name
        for name, install, recipe in _installs_under(work_root):
            if name == target.name:  # npa's layout: the target's own cluster only
                found.append(_install(name, install, recipe, fleet, project_key))
    return sorted(found, key=lambda i: (i.name, str(i.install_dir)))


def find(name: str, ref: str | None = None) -> NpaInstall | None:
    """npa's installation of cluster `name` (in the clone of recipe commit `ref`, as npa's
    `--ref` picks it); more than one is an error (as in npa)."""
    matches = [install for install in discover() if install.name == name]
    if ref:
        matches = [m for m in matches if m.recipe_ref and ref.lower().startswith(m.recipe_ref)]
    if len(matches) > 1:
        listed = "\n  ".join(str(m.install_dir) for m in matches)
        raise UsageError(
            f"the existing npa has more than one installation of {name!r}:\n  {listed}",
            hint="name the recipe commit of the one you mean (--ref SHA), or adopt it with "
            "`npa soperator adopt --install-dir DIR`",
        )
    return matches[0] if matches else None
