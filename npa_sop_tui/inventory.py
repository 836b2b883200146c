"""The record of clusters: one `InventoryEntry` per cluster, kept by the state store.

With the local backend (the default) the records are files in `~/.npa/soperator/<name>/`;
with the s3 backend the same documents live in the team's bucket (state/location.py).
Layout per cluster (local):
  inventory.json          name, region, context, recipe, install dir, operations (0600)
  spec.yaml               the spec of the last deploy (0600)
  operations/<id>.ndjson  the redacted event log of each operation (0600)
  .lock                   see locks.py
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from npa_sop_tui.errors import UsageError
from npa_sop_tui.fsutil import SECRET_MODE
from npa_sop_tui.paths import cluster_dir

if TYPE_CHECKING:
    from npa_sop_tui.state.store import StateStore

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
    user: str | None = None  # who ran it (login name) and where: shown to the team
    host: str | None = None


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


class InventoryDamaged(UsageError):
    """`inventory.json` cannot be read or does not hold a valid record (exit 2: a file the
    user has to repair, like a broken config). `path` is a file, or an object's s3:// URL."""

    def __init__(self, path: Path | str, problems: list[str]) -> None:
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


def parse_entry(text: str, name: str, where: Path | str) -> InventoryEntry:
    """The record in `text` (read from `where`), checked to be the record of `name`."""
    try:
        entry = InventoryEntry.model_validate_json(text)
    except ValidationError as exc:
        # For broken JSON pydantic's message carries the line and column.
        raise InventoryDamaged(where, _problems(exc)) from None
    if entry.name != name:
        raise InventoryDamaged(
            where, [f"name: the record is for {entry.name!r}, but it is in the folder of {name!r}"]
        )
    return entry


# The functions below go through the state store the settings select (local files, or the
# team's bucket): every reader of the inventory, whatever the backend, uses them or a store.


def _store(store: StateStore | None) -> StateStore:
    if store is not None:
        return store
    from npa_sop_tui.state import default_store

    return default_store()


def get(name: str, *, store: StateStore | None = None) -> InventoryEntry | None:
    """The inventory entry of `name`, or None if there is none."""
    return _store(store).get(name)


def require(name: str, *, store: StateStore | None = None) -> InventoryEntry:
    store = _store(store)
    entry = store.get(name)
    if entry is None:
        known = ", ".join(e.name for e in store.scan()[0]) or "none"
        raise UsageError(
            f"no cluster named {name!r} in the inventory ({store.describe()})",
            hint=f"known clusters: {known}; `npa soperator list` shows them",
        )
    return entry


def save(entry: InventoryEntry, *, store: StateStore | None = None) -> None:
    _store(store).save(entry)


def save_spec(name: str, spec_yaml: str, *, store: StateStore | None = None) -> None:
    _store(store).save_spec(name, spec_yaml)


def list_clusters(*, store: StateStore | None = None) -> list[InventoryEntry]:
    """Every cluster with an inventory record, sorted by name; damaged records are skipped
    (`damaged_records()` names them, so callers can say so)."""
    return scan(store=store)[0]


def damaged_records(*, store: StateStore | None = None) -> list[InventoryDamaged]:
    return scan(store=store)[1]


def scan(*, store: StateStore | None = None) -> tuple[list[InventoryEntry], list[InventoryDamaged]]:
    """Good entries and damaged records of every cluster, sorted by name."""
    return _store(store).scan()


class EventLog:
    """Append-only NDJSON log of one operation; lines are written already redacted."""

    def __init__(
        self, name: str, operation_id: str, *, on_close: Callable[[Path], None] | None = None
    ) -> None:
        self.path = operations_dir(name) / f"{operation_id}.ndjson"
        self._on_close = on_close  # the s3 store uploads the finished log
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
            if self._on_close is not None:
                self._on_close(self.path)
