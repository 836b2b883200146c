"""The local backend: records in `~/.npa/soperator/<name>/`, state in the installation folder.

Layout per cluster:
  inventory.json          name, region, context, recipe, install dir, operations (0600)
  spec.yaml               the spec of the last deploy (0600)
  operations/<id>.ndjson  the redacted event log of each operation (0600)
  .lock                   see locks.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home.bounded_read import Unreadable, read_regular_text
from npa_sop_tui.home.fsutil import SECRET_MODE, atomic_write_text
from npa_sop_tui.home.inventory_records import (
    INVENTORY_FILE,
    SPEC_FILE,
    EventLog,
    InventoryDamaged,
    InventoryEntry,
    parse_entry,
)
from npa_sop_tui.home.locks import ClusterLock, is_locked
from npa_sop_tui.home.paths import CLUSTER_NAME_RE, cluster_dir, soperator_root
from npa_sop_tui.state.location import StateLocation
from npa_sop_tui.state.store import StateStore
from npa_sop_tui.terraform.state import STATE_FILE, read_state

# An inventory record is a few KiB (at most 200 operations); a spec is a few KiB too.
MAX_RECORD_BYTES = 8 * 1024 * 1024


class LocalStore(StateStore):
    def __init__(self, location: StateLocation | None = None) -> None:
        self.location = location or StateLocation()

    def describe(self) -> str:
        return str(soperator_root())

    # -- inventory ---------------------------------------------------------------------------

    def get(self, name: str) -> InventoryEntry | None:
        path = cluster_dir(name) / INVENTORY_FILE
        try:  # a FIFO, a device or a sparse 3 GB file there is refused, not waited on or read
            text = read_regular_text(
                path, limit=MAX_RECORD_BYTES, what="record file", subject="inventory record"
            )
        except Unreadable as exc:
            if exc.missing:
                return None
            raise InventoryDamaged(path, [exc.reason]) from None
        return parse_entry(text, name, path)

    def save(self, entry: InventoryEntry) -> None:
        import time

        entry.updated = time.time()
        atomic_write_text(
            cluster_dir(entry.name) / INVENTORY_FILE,
            entry.model_dump_json(indent=2) + "\n",
            mode=SECRET_MODE,
        )

    def scan(self) -> tuple[list[InventoryEntry], list[InventoryDamaged]]:
        root = soperator_root()
        if not root.is_dir():
            return [], []
        entries: list[InventoryEntry] = []
        damaged: list[InventoryDamaged] = []
        for child in sorted(root.iterdir()):
            if not (child / INVENTORY_FILE).exists() or not CLUSTER_NAME_RE.fullmatch(child.name):
                continue  # not a cluster folder npa could have made
            try:
                entry = self.get(child.name)
            except InventoryDamaged as exc:
                damaged.append(exc)
                continue
            if entry is not None:
                entries.append(entry)
        return entries, damaged

    def remove_records(self, name: str) -> None:
        # Kept beside, not deleted: a record moved to the bucket is still there to compare.
        for item in (INVENTORY_FILE, SPEC_FILE):
            path = cluster_dir(name) / item
            if path.exists():
                os.replace(path, path.with_name(f"{item}.moved"))

    # -- spec and logs -----------------------------------------------------------------------

    def save_spec(self, name: str, spec_yaml: str) -> None:
        atomic_write_text(cluster_dir(name) / SPEC_FILE, spec_yaml, mode=SECRET_MODE)

    def read_spec(self, name: str) -> str | None:
        try:
            return read_regular_text(cluster_dir(name) / SPEC_FILE, limit=MAX_RECORD_BYTES)
        except Unreadable:
            return None

    def spec_file(self, name: str) -> Path | None:
        path = cluster_dir(name) / SPEC_FILE
        return path if path.is_file() else None

    def event_log(self, name: str, operation_id: str) -> EventLog:
        return EventLog(name, operation_id)

    # -- Terraform state ---------------------------------------------------------------------

    def tfstate_path(self, name: str, install_dir: Path | None = None) -> Path | None:
        """The installation's terraform.tfstate: `install_dir`, the inventory's installation
        folder, else any under the cluster's folder."""
        candidates: list[Path] = []
        if install_dir is not None:
            candidates.append(Path(install_dir) / STATE_FILE)
        else:
            from npa_sop_tui.errors import NpaError

            try:  # the inventory knows the installation folder
                entry = self.get(name)
            except NpaError:  # a damaged record is reported by `list`
                entry = None
            from npa_sop_tui.home.recorded_paths import trusted

            recorded = trusted(entry.install_dir) if entry is not None else None
            if recorded is not None:  # a record's path is used only inside this home
                candidates.append(recorded / STATE_FILE)
            root = cluster_dir(name)
            if root.is_dir():
                candidates.extend(sorted(root.glob(f"**/{STATE_FILE}")))
        return next((c for c in candidates if c.is_file()), None)

    def read_tfstate(self, name: str, install_dir: Path | None = None) -> dict[str, Any] | None:
        path = self.tfstate_path(name, install_dir)
        return read_state(path) if path is not None else None

    # -- locks -------------------------------------------------------------------------------

    def lock(self, name: str, *, operation: str) -> ClusterLock:
        return ClusterLock(name, operation=operation)

    def lock_holder(self, name: str) -> dict[str, Any] | None:
        if not is_locked(name):
            return None
        try:
            raw = read_regular_text(cluster_dir(name) / ".lock", limit=64 * 1024)
            data = json.loads(raw or "null")
        except (Unreadable, ValueError, RecursionError):
            return {}
        return data if isinstance(data, dict) else {}

    def break_lock(self, name: str, expected: dict[str, Any] | None = None) -> dict[str, Any]:
        raise UsageError(
            f"cluster {name!r} uses a local lock, which cannot be left behind: the system "
            "releases it when the process holding it exits",
            hint="stop that npa process (`npa soperator list` names it), or wait for it",
        )
