"""Which clusters a fleet target owns: its folder, the ownership marker written before its
first deploy, the identity it runs under (from the project and fleet envelope), and which
of the fleet's clusters a project still holds."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from npa_sop_tui.errors import UsageError
from npa_sop_tui.fleet import network as net
from npa_sop_tui.fleet.model import FleetTarget
from npa_sop_tui.fleet.state import load_state
from npa_sop_tui.home import inventory
from npa_sop_tui.home.fsutil import SECRET_MODE, atomic_write_text
from npa_sop_tui.home.paths import cluster_dir

if TYPE_CHECKING:
    from npa_sop_tui.home.settings import Settings

MARKER = "target.json"


def target_dir(target: FleetTarget) -> Path:
    return net.project_root(target.fleet, target.project_key) / target.name


def read_marker(target: FleetTarget) -> dict[str, Any] | None:
    try:
        data = json.loads((target_dir(target) / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # missing or damaged: not a marker this fleet can trust
        return None
    return data if isinstance(data, dict) else None


def write_marker(target: FleetTarget, subnet_id: str | None) -> None:
    data = {
        "fleet": target.fleet,
        "project_key": target.project_key,
        "name": target.name,
        "backend": target.backend,
        "subnet_id": subnet_id,
        "inventory": str(cluster_dir(target.name)),
        "created": time.time(),
    }
    atomic_write_text(
        target_dir(target) / MARKER, json.dumps(data, indent=2) + "\n", mode=SECRET_MODE
    )


def check_owned(target: FleetTarget) -> None:
    """A cluster of the same name that this fleet target did not create is not ours."""
    entry = inventory.get(target.name)
    if entry is None or entry.state == "destroyed":
        return  # the name is free
    marker = read_marker(target)
    if marker is None or marker.get("fleet") != target.fleet:
        raise UsageError(
            f"{target.key}: a cluster named {target.name!r} already exists in the local "
            "inventory and was not created by this fleet target",
            hint="soperator names (and kube contexts) are global; rename the target or "
            "destroy the other cluster first",
        )


def require_soperator(targets: Sequence[FleetTarget], operation: str) -> None:
    other = [t for t in targets if t.backend != "soperator"]
    if other:
        listed = ", ".join(f"{t.key} (backend {t.backend}, {t.path})" for t in other)
        raise UsageError(
            f"cannot {operation} {listed}: npa-sop-tui runs soperator targets only",
            hint="narrow the selection with --select backend=soperator, or use the mk8s "
            "fleet tool for those targets",
        )


def target_identity(target: FleetTarget, settings: Settings, subnet_id: str | None) -> Any:
    """Identity from the fleet envelope; settings fill tenant/region only (never project)."""
    from npa_sop_tui.home.config import Identity
    from npa_sop_tui.spec.identity import identity_shape_problems

    values = {
        "tenant_id": target.tenant_id or settings["tenant_id"],
        "region": target.region or settings["region"],
        "project_id": target.project_id,
        "subnet_id": subnet_id,
    }
    where = {
        "tenant_id": "the fleet's tenant_id (or tenant_id in ~/.npa/config.yaml)",
        "region": f"projects[{target.project_index}].region or the fleet's region",
        "project_id": f"projects[{target.project_index}].project_id "
        "(this tool does not create projects)",
        "subnet_id": f"projects[{target.project_index}].subnet_id",
    }
    problems = [f"{k} is not set: add {where[k]}" for k, v in values.items() if not v]
    problems += [message for _, message in identity_shape_problems(values)]
    if problems:
        raise UsageError(
            f"{target.key}: identity is incomplete:\n  " + "\n  ".join(problems),
            hint="identity of fleet targets comes from the project and fleet envelope",
        )
    return Identity(**values)


def deployed_in_project(fleet: str, project_key: str) -> list[str]:
    """Cluster names the fleet ran in `project_key` that the inventory still holds (in any
    state but destroyed): a network is only released when this is empty."""
    names = {
        record.name
        for record in load_state(fleet).targets.values()
        if record.project_key == project_key
    }
    root = net.project_root(fleet, project_key)
    if root.is_dir():
        names |= {marker.parent.name for marker in root.glob(f"*/{MARKER}")}
    remaining = []
    for name in sorted(names):
        try:
            entry = inventory.get(name)
        except Exception:  # an unreadable record may still be a deployed cluster: keep the net
            remaining.append(name)
            continue
        if entry is not None and entry.state != "destroyed":
            remaining.append(name)
    return remaining
