"""The local record of clusters: `~/.npa/soperator/<name>/`.

Layout per cluster:
  inventory.json          name, region, context, recipe, install dir, operations (0600)
  spec.yaml               the spec of the last deploy (0600)
  operations/<id>.ndjson  the redacted event log of each operation (0600)
  .lock                   see locks.py
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from npa_sop_tui.errors import UsageError
from npa_sop_tui.fsutil import SECRET_MODE, atomic_write_text
from npa_sop_tui.paths import CLUSTER_NAME_RE, cluster_dir, soperator_root

INVENTORY_FILE = "inventory.json"
SPEC_FILE = "spec.yaml"
MAX_OPERATIONS = 200  # older records are dropped; their NDJSON logs stay on disk

ClusterState = Literal[
    "planned",
    "deploying",
    "deployed",
    "degraded-validation",
    "failed",
    "interrupted",
    "destroying",
    "destroyed",
    "destroy-incomplete",
]


class OperationRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    kind: Literal["plan", "deploy", "destroy"]
    started: float
    ended: float | None = None
    result: Literal["running", "ok", "failed", "interrupted"] = "running"
    summary: str = ""
    log: str | None = None


class RecipeInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    origin: str
    path: str
    ref: str | None = None
    version: str | None = None


class InventoryEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    region: str | None = None
    kube_context: str
    state: ClusterState = "planned"
    recipe: RecipeInfo | None = None
    install_dir: str | None = None
    created: float = Field(default_factory=time.time)
    updated: float = Field(default_factory=time.time)
    outputs: dict[str, object] = Field(default_factory=dict)
    # The last deploy's post-deploy result: status, validation, gpu_creation_checks.
    validation: dict[str, object] | None = None
    operations: list[OperationRecord] = Field(default_factory=list)

    @property
    def last_operation(self) -> OperationRecord | None:
        return self.operations[-1] if self.operations else None

    def record(self, op: OperationRecord) -> None:
        """Insert or update an operation record, keeping the list bounded."""
        for i, existing in enumerate(self.operations):
            if existing.id == op.id:
                self.operations[i] = op
                break
        else:
            self.operations.append(op)
        del self.operations[:-MAX_OPERATIONS]
        self.updated = time.time()


def operations_dir(name: str) -> Path:
    return cluster_dir(name) / "operations"


class InventoryDamaged(UsageError):
    """`inventory.json` cannot be read or does not hold a valid record (exit 2: a file the
    user has to repair, like a broken config)."""

    def __init__(self, path: Path, problems: list[str]) -> None:
        shown = "; ".join(problems[:5]) + ("; …" if len(problems) > 5 else "")
        super().__init__(
            f"{path}: the inventory record is damaged: {shown}",
            hint="restore it from a backup, or remove the folder if the cluster is gone "
            "(its Terraform state is in the install_dir the record names)",
        )
        self.path = path
        self.problems = problems

    def json_extra(self) -> dict[str, object]:
        return {"path": str(self.path), "problems": self.problems}


def _problems(exc: ValidationError) -> list[str]:
    out = []
    for err in exc.errors():
        where = ".".join(str(part) for part in err["loc"])
        out.append(f"{where}: {err['msg']}" if where else str(err["msg"]))
    return out


def get(name: str) -> InventoryEntry | None:
    """The inventory entry of `name`, or None if there is none."""
    path = cluster_dir(name) / INVENTORY_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InventoryDamaged(path, [f"cannot read it: {exc}"]) from None
    try:
        entry = InventoryEntry.model_validate_json(text)
    except ValidationError as exc:
        # For broken JSON pydantic's message carries the line and column.
        raise InventoryDamaged(path, _problems(exc)) from None
    if entry.name != name:
        raise InventoryDamaged(
            path, [f"name: the record is for {entry.name!r}, but it is in the folder of {name!r}"]
        )
    return entry


def require(name: str) -> InventoryEntry:
    entry = get(name)
    if entry is None:
        known = ", ".join(e.name for e in list_clusters()) or "none"
        raise UsageError(
            f"no cluster named {name!r} in the inventory ({soperator_root()})",
            hint=f"known clusters: {known}; `npa soperator list` shows them",
        )
    return entry


def save(entry: InventoryEntry) -> None:
    entry.updated = time.time()
    atomic_write_text(
        cluster_dir(entry.name) / INVENTORY_FILE,
        entry.model_dump_json(indent=2) + "\n",
        mode=SECRET_MODE,
    )


def save_spec(name: str, spec_yaml: str) -> None:
    atomic_write_text(cluster_dir(name) / SPEC_FILE, spec_yaml, mode=SECRET_MODE)


def list_clusters() -> list[InventoryEntry]:
    """Every cluster with an inventory record, sorted by name; damaged records are skipped
    (`damaged_records()` names them, so callers can say so)."""
    return scan()[0]


def damaged_records() -> list[InventoryDamaged]:
    return scan()[1]


def scan() -> tuple[list[InventoryEntry], list[InventoryDamaged]]:
    """Good entries and damaged records of every cluster folder, sorted by name."""
    root = soperator_root()
    if not root.is_dir():
        return [], []
    entries: list[InventoryEntry] = []
    damaged: list[InventoryDamaged] = []
    for child in sorted(root.iterdir()):
        if not (child / INVENTORY_FILE).exists() or not CLUSTER_NAME_RE.fullmatch(child.name):
            continue  # not a cluster folder npa could have made
        try:
            entry = get(child.name)
        except InventoryDamaged as exc:
            damaged.append(exc)
            continue
        if entry is not None:
            entries.append(entry)
    return entries, damaged


class EventLog:
    """Append-only NDJSON log of one operation; lines are written already redacted."""

    def __init__(self, name: str, operation_id: str) -> None:
        self.path = operations_dir(name) / f"{operation_id}.ndjson"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Created 0600 before anything is written to it.
        self.path.touch(mode=SECRET_MODE, exist_ok=True)
        self.path.chmod(SECRET_MODE)
        self._handle = self.path.open("a", encoding="utf-8")

    def write(self, data: dict[str, object]) -> None:
        if self._handle.closed:
            return
        self._handle.write(json.dumps(data, default=str) + "\n")
        self._handle.flush()

    def close(self) -> None:
        if not self._handle.closed:
            self._handle.close()
