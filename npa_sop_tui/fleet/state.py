"""The fleet's own inventory: `npa_home()/fleet/<fleet>/fleet-state.json`.

One row per target with what the fleet last did to it. When the existing npa's aggregate
already has that name, ours is kept beside it (`fleet-state.npa-sop.json`) and npa's is
only read (fleet/npa_records.py). The cluster's own inventory
(`~/.npa/soperator/<name>/`) stays the lifecycle's; this file only ties targets to their
project, network and last fleet operation so `npa fleet status` can show the whole fleet.
A fleet-wide flock keeps two fleet commands from interleaving their writes.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from npa_sop_tui.errors import UsageError
from npa_sop_tui.fleet.npa_records import is_npa_state
from npa_sop_tui.fleet.records import damage, fleet_root
from npa_sop_tui.home.files import open_private
from npa_sop_tui.home.fsutil import SECRET_MODE, atomic_write_text

STATE_FILE = "fleet-state.json"
# Ours, when the existing npa's aggregate has the name above (fleet/npa_records.py).
BESIDE_NPA = "fleet-state.npa-sop.json"

TargetState = Literal[
    "planned",
    "deployed",
    "failed",
    "interrupted",
    "destroyed",
    "destroy-incomplete",
    "skipped",
]


class TargetRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str
    project_key: str
    name: str
    backend: str
    region: str | None = None
    project_id: str | None = None
    subnet_id: str | None = None
    kube_context: str | None = None
    state: TargetState
    operation: Literal["plan", "deploy", "destroy"]
    message: str = ""
    updated: float = Field(default_factory=time.time)


class FleetState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    source: str | None = None
    targets: dict[str, TargetRecord] = Field(default_factory=dict)
    updated: float = Field(default_factory=time.time)


def state_path(fleet: str) -> Path:
    """Our records: `fleet-state.json`, or beside it when that one is the existing npa's."""
    path = fleet_root(fleet) / STATE_FILE
    try:
        head = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return path  # missing (ours from now on) or unreadable (load_state says so)
    try:
        doc = json.loads(head)
    except ValueError:
        return path
    return path.with_name(BESIDE_NPA) if is_npa_state(doc) else path


def load_state(fleet: str) -> FleetState:
    path = state_path(fleet)
    try:
        return FleetState.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return FleetState(name=fleet)
    except (OSError, UnicodeDecodeError, ValidationError) as exc:
        # A file the user must repair (exit 2), named with what is wrong in it; pydantic's
        # message carries the line and column of broken JSON.
        raise UsageError(
            f"{path}: the fleet state file is damaged: {damage(exc)}",
            hint="restore it from a backup; the clusters' own inventories are untouched",
        ) from None


def save_state(state: FleetState) -> None:
    state.updated = time.time()
    atomic_write_text(
        state_path(state.name), state.model_dump_json(indent=2) + "\n", mode=SECRET_MODE
    )


@contextlib.contextmanager
def fleet_lock(fleet: str, operation: str) -> Iterator[None]:
    """Exclusive for the duration of one fleet command; released by the kernel on exit."""
    path = fleet_root(fleet) / ".lock"
    fd = open_private(path, os.O_RDWR | os.O_CREAT)  # 0600, 0700 folders, no symlinks
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(
                f"fleet {fleet!r} is busy: another fleet command is running on it",
                hint=f"wait for it to finish, then run `npa fleet {operation}` again",
            ) from None
        yield
    finally:
        os.close(fd)
