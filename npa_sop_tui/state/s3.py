"""The s3 backend: the team's records and Terraform state in one Object Storage bucket.

Layout: see state/location.py. The client is boto3, imported only when a bucket is used.
Access keys come from the standard AWS sources — `AWS_ACCESS_KEY_ID` /
`AWS_SECRET_ACCESS_KEY` in the environment, or `AWS_PROFILE` and the shared credentials file —
the same ones Terraform's S3 backend reads; npa never writes them to a file.

Every failure to reach the bucket raises `StateUnreachable`: an operation stops there, it never
falls back to local files.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from npa_sop_tui.inventory import EventLog, InventoryDamaged, InventoryEntry, parse_entry
from npa_sop_tui.state.errors import (
    StateAccessDenied,
    StateBucketMissing,
    StateCredentialsMissing,
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

T = TypeVar("T")
_CONNECT_TIMEOUT = 5
_READ_TIMEOUT = 30


class ConditionFailed(Exception):
    """A conditional write or delete lost (If-None-Match / If-Match): someone else changed it."""


class Bucket:
    """Thin boto3 wrapper: one place that turns botocore's errors into ours."""

    def __init__(self, location: StateLocation) -> None:
        import boto3
        from botocore.config import Config

        self.location = location
        self.name = str(location.bucket)
        config = Config(
            s3={"addressing_style": "path"},  # S3-compatible stores serve buckets by path
            connect_timeout=_CONNECT_TIMEOUT,
            read_timeout=_READ_TIMEOUT,
            retries={"max_attempts": 3, "mode": "standard"},
            # Newer botocore adds CRC checksums by default; S3-compatible stores may not.
            request_checksum_calculation="when_required",
            response_checksum_validation="when_required",
        )
        self.client = boto3.session.Session().client(
            "s3", endpoint_url=location.endpoint, region_name=location.region, config=config
        )

    def where(self, key: str | None = None) -> str:
        return f"s3://{self.name}/{key}" if key else f"s3://{self.name}"

    def call(self, what: str, fn: Callable[[], T]) -> T:
        from botocore import exceptions as bx

        try:
            return fn()
        except (bx.NoCredentialsError, bx.PartialCredentialsError):
            raise StateCredentialsMissing(
                f"no Object Storage access key to {what} (state bucket {self.where()})",
                hint="export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (an access key of a "
                "Nebius service account), or AWS_PROFILE naming a profile that has them",
            ) from None
        except (bx.EndpointConnectionError, bx.ConnectionError, bx.HTTPClientError) as exc:
            raise StateUnreachable(
                f"the state bucket {self.where()} at {self.location.endpoint} cannot be "
                f"reached ({what}): {exc}",
                hint="check the network and state.endpoint; npa does not fall back to local "
                "state, so nothing runs until the bucket answers",
            ) from None
        except bx.ClientError as exc:
            error = exc.response.get("Error", {})
            code = str(error.get("Code", ""))
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if code in ("PreconditionFailed", "ConditionalRequestConflict") or status in (
                409,
                412,
            ):
                raise ConditionFailed(code) from None
            if code == "NoSuchBucket":
                raise StateBucketMissing(
                    f"the state bucket {self.name!r} does not exist at {self.location.endpoint}",
                    hint=f"create it with `npa soperator state init --bucket {self.name}`",
                ) from None
            if code in ("AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch") or (
                status == 403
            ):
                raise StateAccessDenied(
                    f"the state bucket {self.where()} refused access ({what}): {code}",
                    hint="check the access key (AWS_ACCESS_KEY_ID / AWS_PROFILE) and that its "
                    "service account may read and write the bucket",
                ) from None
            raise StateUnreachable(
                f"the state bucket {self.where()} failed to {what}: {code or status}: "
                f"{error.get('Message', '')}"
            ) from None

    # -- objects -------------------------------------------------------------------------

    def get(self, key: str) -> tuple[bytes, dict[str, Any]] | None:
        """(body, response) of an object, None when there is none."""
        from botocore import exceptions as bx

        def fetch() -> tuple[bytes, dict[str, Any]] | None:
            try:
                response = self.client.get_object(Bucket=self.name, Key=key)
            except bx.ClientError as exc:
                if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                    return None
                raise
            return response["Body"].read(), response

        return self.call(f"read {key}", fetch)

    def put(
        self,
        key: str,
        body: bytes,
        *,
        if_none_match: bool = False,
        if_match: str | None = None,
        content_type: str = "application/json",
    ) -> str:
        """Write an object; returns its ETag. A lost condition raises `ConditionFailed`."""
        kwargs: dict[str, Any] = {}
        if if_none_match:
            kwargs["IfNoneMatch"] = "*"
        if if_match is not None:
            kwargs["IfMatch"] = if_match
        response = self.call(
            f"write {key}",
            lambda: self.client.put_object(
                Bucket=self.name, Key=key, Body=body, ContentType=content_type, **kwargs
            ),
        )
        return str(response.get("ETag", ""))

    def delete(self, key: str, *, if_match: str | None = None) -> None:
        kwargs: dict[str, Any] = {"IfMatch": if_match} if if_match is not None else {}
        self.call(
            f"delete {key}", lambda: self.client.delete_object(Bucket=self.name, Key=key, **kwargs)
        )

    def folders(self, prefix: str) -> list[str]:
        """The names one level below `prefix/` (the clusters)."""

        def listing() -> list[str]:
            names: list[str] = []
            paginator = self.client.get_paginator("list_objects_v2")
            for page in paginator.paginate(Bucket=self.name, Prefix=f"{prefix}/", Delimiter="/"):
                for common in page.get("CommonPrefixes") or []:
                    names.append(common["Prefix"][len(prefix) + 1 :].rstrip("/"))
            return names

        return self.call(f"list {prefix}/", listing)

    def check(self) -> None:
        """Fail now, with a clear error, if the bucket is unreachable or missing."""
        self.call("reach the bucket", lambda: self.client.head_bucket(Bucket=self.name))


_BUCKETS: dict[StateLocation, Bucket] = {}


def bucket_for(location: StateLocation) -> Bucket:
    """One client per location and process (building one costs tens of milliseconds)."""
    bucket = _BUCKETS.get(location)
    if bucket is None:
        bucket = _BUCKETS[location] = Bucket(location)
    return bucket


class S3Store(StateStore):
    def __init__(self, location: StateLocation) -> None:
        self.location = location
        self.bucket = bucket_for(location)

    def describe(self) -> str:
        return f"s3://{self.location.bucket}/{self.location.prefix}/"

    def check(self) -> None:
        self.bucket.check()

    def _key(self, name: str, *parts: str) -> str:
        from npa_sop_tui.paths import check_cluster_name

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
        from npa_sop_tui.paths import CLUSTER_NAME_RE

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
