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

import time
from typing import TYPE_CHECKING

from npa_sop_tui.errors import NpaError, UsageError
from npa_sop_tui.home.inventory_records import (  # the documents, re-exported for every reader
    ADOPTED_VARIABLES,
    INVENTORY_FILE,
    MAX_OPERATIONS,
    SPEC_FILE,
    Adoption,
    ClusterState,
    EventLog,
    InventoryDamaged,
    InventoryEntry,
    OperationRecord,
    RecipeInfo,
    operations_dir,
    parse_entry,
)
from npa_sop_tui.home.paths import cluster_dir

if TYPE_CHECKING:
    from npa_sop_tui.state.store import StateStore

# The functions below go through the state store the settings select (local files, or the
# team's bucket): every reader of the inventory, whatever the backend, uses them or a store.


def _store(store: StateStore | None) -> StateStore:
    if store is not None:
        return store
    from npa_sop_tui.state.stores import default_store

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


def read_spec(name: str, *, store: StateStore | None = None) -> str | None:
    """The spec of `name`'s last deploy as YAML text, or None if there is none."""
    return _store(store).read_spec(name)


# What a record left `running` by a dead process becomes, and what to do next.
_AFTER_DEATH: dict[str, ClusterState] = {
    "deploying": "interrupted",
    "destroying": "destroy-incomplete",
}


def next_step(entry: InventoryEntry) -> str:
    """The command that moves a cluster on from where its last operation left it."""
    sandbox = " --sandbox" if entry.recipe is not None and entry.recipe.origin == "sandbox" else ""
    last = entry.last_operation
    if entry.state in ("destroying", "destroy-incomplete") or (last and last.kind == "destroy"):
        return f"`npa soperator destroy --name {entry.name}{sandbox}` finishes the teardown"
    spec = cluster_dir(entry.name) / SPEC_FILE
    return (
        f"`npa soperator deploy --spec {spec}{sandbox}` converges (pass capacity block groups "
        f"again), or `npa soperator destroy --name {entry.name}{sandbox}` removes it"
    )


def settle_dead_operation(entry: InventoryEntry) -> str | None:
    """Mark a last operation still `running` as interrupted; only call with the cluster lock
    held (or known free), which proves its process is gone. Returns the note, else None."""
    last = entry.last_operation
    if last is None or last.result != "running":
        return None
    who = f"pid {last.pid}" if last.pid else "its npa process"
    if last.host:
        who += f" on {last.host}"
    last.result = "interrupted"
    last.ended = time.time()
    entry.state = _AFTER_DEATH.get(entry.state, entry.state)
    note = (
        f"{last.kind} {last.id} did not finish: npa ({who}) stopped before recording a result "
        f"(killed or crashed). Next: {next_step(entry)}"
    )
    last.summary = note[:300]
    entry.record(last)
    return note


def _settle_if_unlocked(entry: InventoryEntry, store: StateStore) -> InventoryEntry:
    """`scan` shows the truth: a `running` record nobody holds the lock for is settled."""
    last = entry.last_operation
    if last is None or last.result != "running":
        return entry
    lock = store.lock(entry.name, operation="list")
    try:
        lock.acquire()
    except (NpaError, OSError):
        return entry  # really running (or cannot tell): leave it
    try:
        fresh = store.get(entry.name) or entry
        if settle_dead_operation(fresh) is not None:
            store.save(fresh)
        return fresh
    except (OSError, NpaError):
        return entry  # a read-only or full disk: show the record as it is
    finally:
        lock.release()


def list_clusters(*, store: StateStore | None = None) -> list[InventoryEntry]:
    """Every cluster with an inventory record, sorted by name; damaged records are skipped
    (`damaged_records()` names them, so callers can say so)."""
    return scan(store=store)[0]


def damaged_records(*, store: StateStore | None = None) -> list[InventoryDamaged]:
    return scan(store=store)[1]


def scan(*, store: StateStore | None = None) -> tuple[list[InventoryEntry], list[InventoryDamaged]]:
    """Good entries and damaged records of every cluster, sorted by name; a record left
    `running` by a process that is gone is settled on the way (`settle_dead_operation`)."""
    store = _store(store)
    entries, damaged = store.scan()
    return [_settle_if_unlocked(e, store) for e in entries], damaged


__all__ = [
    "ADOPTED_VARIABLES",
    "INVENTORY_FILE",
    "MAX_OPERATIONS",
    "SPEC_FILE",
    "Adoption",
    "ClusterState",
    "EventLog",
    "InventoryDamaged",
    "InventoryEntry",
    "OperationRecord",
    "RecipeInfo",
    "operations_dir",
    "parse_entry",
]
