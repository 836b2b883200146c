"""The cluster record's documents: `InventoryEntry` (inventory.json), its parsing, and the
operation event log. No state-store code here: the stores (state/local.py, state/s3.py) build
on these, and `inventory.py` reads and writes them through a store.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_core import PydanticCustomError

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home.files import open_private
from npa_sop_tui.home.paths import CLUSTER_NAME_RE, cluster_dir

INVENTORY_FILE = "inventory.json"
SPEC_FILE = "spec.yaml"
ADOPTED_VARIABLES = "adopted-variables.json"  # an adopted cluster's variables as deployed
MAX_OPERATIONS = 200  # older records are dropped; their NDJSON logs stay on disk
KUBE_CONTEXT_RE = re.compile(r"[^\s\x00-\x1f\x7f-\x9f]{1,253}")
"""A kube context's name: any word of kubeconfig's (npa's own are nebius-<name>-slurm)."""

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
    pid: int | None = None  # the npa process that ran it (names a killed run afterwards)
    user: str | None = None  # who ran it (login name) and where: shown to the team
    host: str | None = None

    @property
    def log_file(self) -> Path | None:
        """The recorded log, if it may be read: inside this npa home (a record is data: a
        copied home or a crafted file could name any file on the machine)."""
        from npa_sop_tui.home.recorded_paths import trusted

        return trusted(self.log)


class RecipeInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    origin: str
    path: str
    ref: str | None = None
    version: str | None = None


class Adoption(BaseModel):
    """A cluster this product did not deploy, taken over where it is (lifecycle/adopt.py):
    Terraform keeps running in its own installation folder (`InventoryEntry.install_dir`),
    with its own state; the variables it was deployed with are kept beside the record
    (`ADOPTED_VARIABLES`) and every render starts from them."""

    model_config = ConfigDict(extra="forbid")

    origin: Literal["npa", "recipe"]  # the existing npa's, or made with the recipe directly
    adopted: float = Field(default_factory=time.time)
    # What the cluster is pinned to: a spec or --project that disagrees is refused.
    identity: dict[str, str] = Field(default_factory=dict)
    # The TF_VAR_* it runs with beside the identity (o11y tenant and profile).
    env: dict[str, str] = Field(default_factory=dict)
    kept: list[str] = Field(default_factory=list)  # spec paths kept as deployed
    fleet: str | None = None  # an `npa fleet` target: its fleet and project key
    project_key: str | None = None


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
    adoption: Adoption | None = None

    # A record is a file anyone with the home (or the team's bucket) may have written: its
    # identifiers are checked as it is read, and one of another shape makes it damaged
    # (`list` names it) before the value reaches a path, a kube lookup or a line.
    @field_validator("name", "region", "kube_context")
    @classmethod
    def _identifier(cls, value: str | None, info: ValidationInfo) -> str | None:
        problem = None if value is None else _identifier_problem(info.field_name or "", value)
        if problem is not None:
            raise PydanticCustomError("identifier", problem)
        return value

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


def _identifier_problem(field: str, value: str) -> str | None:
    """Why `value` cannot be the record's `field` (None when it can)."""
    if field == "region":
        from npa_sop_tui.spec.identity import region_problem

        return region_problem(field, value)
    pattern, shape = {
        "name": (CLUSTER_NAME_RE, "a cluster name (lowercase letters, digits, -)"),
        "kube_context": (KUBE_CONTEXT_RE, "a kube context name (one word, no controls)"),
    }[field]
    return None if pattern.fullmatch(value) else f"{value!r} is not {shape}"


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


class EventLog:
    """Append-only NDJSON log of one operation; lines are written already redacted.

    A full disk does not stop the operation: the log stops (`failed` says why) and the
    operation goes on. It leaves the disk reserve alone: that is for Terraform's state and
    the inventory record, which matter more than the rest of the log.
    """

    def __init__(
        self, name: str, operation_id: str, *, on_close: Callable[[Path], None] | None = None
    ) -> None:
        self.path = operations_dir(name) / f"{operation_id}.ndjson"
        self._on_close = on_close  # the s3 store uploads the finished log
        # Created 0600 before anything is written to it; never through a symlink.
        self._fd: int | None = open_private(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        self.failed: OSError | None = None

    def write(self, data: dict[str, object]) -> None:
        if self._fd is None:
            return
        try:
            _write_all(self._fd, (json.dumps(data, default=str) + "\n").encode())
        except OSError as exc:
            self.failed = exc
            self.close()

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
            if self._on_close is not None:
                self._on_close(self.path)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
