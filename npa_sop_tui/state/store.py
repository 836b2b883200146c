"""The one interface to a cluster's records and Terraform state, whatever the backend.

Every reader — the inventory, operation logs, the spec as deployed, the Terraform state that
status and the sandbox read — goes through a `StateStore`: `LocalStore` (files in the npa
home) or `S3Store` (the team's bucket). Nobody else reads a local `terraform.tfstate`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from npa_sop_tui.state.location import StateLocation
from npa_sop_tui.terraform.standin_addresses import real_address
from npa_sop_tui.terraform.state import address, instances

if TYPE_CHECKING:
    from npa_sop_tui.home.inventory_records import EventLog, InventoryDamaged, InventoryEntry


class Lock(Protocol):
    """A cluster lock: `acquire()` raises `locks.ClusterBusy` at once when someone holds it."""

    def acquire(self) -> Any: ...

    def release(self) -> None: ...

    @property
    def lost(self) -> str | None:
        """Why the lock stopped being ours while held (broken by someone), else None."""
        ...


class StateStore(ABC):
    location: StateLocation

    @property
    def shared(self) -> bool:
        """True when the records are the team's (a bucket), not this machine's alone."""
        return self.location.shared

    @abstractmethod
    def describe(self) -> str: ...

    def check(self) -> None:
        """Raise `StateUnreachable` (or another clear error) when the store cannot be used."""
        return None  # local files: nothing to reach

    def terraform_env(self) -> dict[str, str]:
        """What Terraform's environment needs to reach this store's state (a minted access
        key); kept in memory, never written to a file."""
        return {}

    # -- inventory ---------------------------------------------------------------------------

    @abstractmethod
    def get(self, name: str) -> InventoryEntry | None: ...

    @abstractmethod
    def save(self, entry: InventoryEntry) -> None: ...

    @abstractmethod
    def scan(self) -> tuple[list[InventoryEntry], list[InventoryDamaged]]: ...

    @abstractmethod
    def remove_records(self, name: str) -> None:
        """Forget a cluster's record and spec here (after they were moved elsewhere)."""

    # -- spec and logs -----------------------------------------------------------------------

    @abstractmethod
    def save_spec(self, name: str, spec_yaml: str) -> None: ...

    @abstractmethod
    def read_spec(self, name: str) -> str | None: ...

    def spec_file(self, name: str) -> Path | None:
        """A local file holding the spec as last deployed (a cached copy for a bucket)."""
        from npa_sop_tui.home.fsutil import SECRET_MODE, atomic_write_text
        from npa_sop_tui.home.inventory_records import SPEC_FILE
        from npa_sop_tui.home.paths import cluster_dir

        path = cluster_dir(name) / SPEC_FILE
        text = self.read_spec(name)
        if text is None:
            return None
        try:
            current = path.read_text(encoding="utf-8")
        except OSError:
            current = None
        if current != text:
            atomic_write_text(path, text, mode=SECRET_MODE)
        return path

    @abstractmethod
    def event_log(self, name: str, operation_id: str) -> EventLog: ...

    # -- Terraform state ---------------------------------------------------------------------

    @abstractmethod
    def read_tfstate(self, name: str, install_dir: Path | None = None) -> dict[str, Any] | None:
        """The cluster's Terraform state document, or None when there is none (yet)."""

    def resource_addresses(
        self, name: str, install_dir: Path | None = None, *, managed_only: bool = False
    ) -> list[str] | None:
        """Sorted resource addresses in the cluster's state (a stand-in's at the real
        recipe's addresses, its in-place parts not counted apart); None when it has no
        state."""
        state = self.read_tfstate(name, install_dir)
        if state is None:
            return None
        return sorted(
            {
                real_address(address(res, inst))[0]
                for res, inst in instances(state)
                if not managed_only or res.get("mode") == "managed"
            }
        )

    # -- locks -------------------------------------------------------------------------------

    @abstractmethod
    def lock(self, name: str, *, operation: str) -> Lock: ...

    @abstractmethod
    def lock_holder(self, name: str) -> dict[str, Any] | None:
        """Who holds the cluster's lock now (None when nobody does)."""

    @abstractmethod
    def break_lock(self, name: str, expected: dict[str, Any] | None = None) -> dict[str, Any]:
        """Remove the cluster's lock; returns the holder it broke. With `expected`, only that
        holder's lock is broken (it changed since it was shown → `UsageError`)."""
