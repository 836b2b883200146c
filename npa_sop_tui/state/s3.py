"""The s3 backend: the team's records and Terraform state in one Object Storage bucket.

Layout: see state/location.py. The client is boto3, imported only when a bucket is used.
Access keys come from the standard AWS sources — `AWS_ACCESS_KEY_ID` /
`AWS_SECRET_ACCESS_KEY` in the environment, or `AWS_PROFILE` and the shared credentials file —
the same ones Terraform's S3 backend reads, else from a key minted with the Nebius
credentials (state/credentials.py); npa never writes them to a file.

Every failure to reach the bucket raises `StateUnreachable`: an operation stops there, it never
falls back to local files.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

from npa_sop_tui.home.inventory_records import (
    EventLog,
    InventoryDamaged,
    InventoryEntry,
    parse_entry,
)
from npa_sop_tui.state.bucket import bucket_for
from npa_sop_tui.state.errors import (
    StateAccessDenied,
    StateUnreachable,
)
from npa_sop_tui.state.location import (
    INVENTORY_KEY,
    LOCK_KEY,
    SPEC_KEY,
    TFSTATE_KEY,
    StateLocation,
)
from npa_sop_tui.state.store import StateStore


class S3Store(StateStore):
    def __init__(self, location: StateLocation) -> None:
        self.location = location
        self.bucket = bucket_for(location)

    def describe(self) -> str:
        return f"s3://{self.location.bucket}/{self.location.prefix}/"

    def check(self) -> None:
        self.bucket.check()

    def terraform_env(self) -> dict[str, str]:
        from npa_sop_tui.state.credentials import terraform_env

        return terraform_env(self.location.keys)

    def _key(self, name: str, *parts: str) -> str:
        from npa_sop_tui.home.paths import check_cluster_name

        return self.location.key(check_cluster_name(name, flag="cluster name"), *parts)

    # -- inventory ---------------------------------------------------------------------------

    def get(self, name: str) -> InventoryEntry | None:
        key = self._key(name, INVENTORY_KEY)
        found = self.bucket.get(key)
        if found is None:
            return None
        try:
            text = found[0].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InventoryDamaged(self.bucket.where(key), [f"cannot read it: {exc}"]) from None
        return parse_entry(text, name, self.bucket.where(key))

    def save(self, entry: InventoryEntry) -> None:
        entry.updated = time.time()
        body = (entry.model_dump_json(indent=2) + "\n").encode()
        self.bucket.put(self._key(entry.name, INVENTORY_KEY), body)

    def scan(self) -> tuple[list[InventoryEntry], list[InventoryDamaged]]:
        from npa_sop_tui.home.paths import CLUSTER_NAME_RE

        entries: list[InventoryEntry] = []
        damaged: list[InventoryDamaged] = []
        for name in sorted(self.bucket.folders(self.location.prefix)):
            if not CLUSTER_NAME_RE.fullmatch(name):
                continue  # not a folder npa could have made
            try:
                entry = self.get(name)
            except InventoryDamaged as exc:
                damaged.append(exc)
                continue
            if entry is not None:
                entries.append(entry)
        return entries, damaged

    def remove_records(self, name: str) -> None:
        for item in (INVENTORY_KEY, SPEC_KEY):
            self.bucket.delete(self._key(name, item))

    # -- spec and logs -----------------------------------------------------------------------

    def save_spec(self, name: str, spec_yaml: str) -> None:
        self.bucket.put(self._key(name, SPEC_KEY), spec_yaml.encode(), content_type="text/yaml")

    def read_spec(self, name: str) -> str | None:
        found = self.bucket.get(self._key(name, SPEC_KEY))
        return found[0].decode("utf-8", errors="replace") if found is not None else None

    def event_log(self, name: str, operation_id: str) -> EventLog:
        """Written locally as the operation runs, uploaded when it closes. An upload that
        fails leaves the local copy; the operation's final record reports the bucket."""
        key = self._key(name, "operations", f"{operation_id}.ndjson")

        def upload(path: Path) -> None:
            with contextlib.suppress(OSError, StateUnreachable, StateAccessDenied):
                self.bucket.put(key, path.read_bytes(), content_type="application/x-ndjson")

        return EventLog(name, operation_id, on_close=upload)

    # -- Terraform state ---------------------------------------------------------------------

    def tfstate_key(self, name: str) -> str:
        return self._key(name, TFSTATE_KEY)

    def read_tfstate(self, name: str, install_dir: Path | None = None) -> dict[str, Any] | None:
        found = self.bucket.get(self.tfstate_key(name))
        if found is None:
            return None
        try:
            doc = json.loads(found[0])
        except ValueError:
            return None
        return doc if isinstance(doc, dict) else None

    # -- locks -------------------------------------------------------------------------------

    def lock(self, name: str, *, operation: str) -> Any:
        from npa_sop_tui.state.bucket_lock import TeamLock

        return TeamLock(self.bucket, self._key(name, LOCK_KEY), name, operation, self.location)

    def lock_holder(self, name: str) -> dict[str, Any] | None:
        from npa_sop_tui.state.bucket_lock import read_lock

        current = read_lock(self.bucket, self._key(name, LOCK_KEY))
        return current.holder if current is not None else None

    def break_lock(self, name: str, expected: dict[str, Any] | None = None) -> dict[str, Any]:
        from npa_sop_tui.state.bucket_lock import break_lock

        return break_lock(self.bucket, self._key(name, LOCK_KEY), name, expected)
