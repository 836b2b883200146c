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

from npa_sop_tui.errors import OperationError, UsageError
from npa_sop_tui.fsutil import SECRET_MODE, atomic_write_text
from npa_sop_tui.paths import cluster_dir, soperator_root

INVENTORY_FILE = "inventory.json"
SPEC_FILE = "spec.yaml"
MAX_OPERATIONS = 200  # older records are dropped; their NDJSON logs stay on disk

ClusterState = Literal[
    "planned",
    "deploying",
    "deployed",
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


def get(name: str) -> InventoryEntry | None:
    """The inventory entry of `name`, or None if there is none."""
    path = cluster_dir(name) / INVENTORY_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        return InventoryEntry.model_validate_json(text)
    except ValidationError as exc:
        raise OperationError(
            f"{path}: the inventory record is damaged ({exc.error_count()} problem(s))",
            hint="restore it from a backup or remove the folder if the cluster is gone",
        ) from None


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
    """Every cluster with an inventory record, sorted by name; damaged records are skipped."""
    root = soperator_root()
    if not root.is_dir():
        return []
    entries: list[InventoryEntry] = []
    for child in sorted(root.iterdir()):
        if not (child / INVENTORY_FILE).is_file():
            continue
        try:
            entry = get(child.name)
        except OperationError:
            continue
        if entry is not None:
            entries.append(entry)
    return entries


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
