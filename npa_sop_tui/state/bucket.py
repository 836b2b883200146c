"""The bucket itself: S3 calls through boto3, each failure turned into one of our errors.

Access keys come from the location's key source (credentials.py): the standard AWS sources
(`AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`, or `AWS_PROFILE`), the ones Terraform's S3
backend reads, else a key minted from the Nebius credentials and held in memory only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from npa_sop_tui.state import credentials
from npa_sop_tui.state.errors import (
    StateAccessDenied,
    StateBucketMissing,
    StateCredentialsMissing,
    StateUnreachable,
)
from npa_sop_tui.state.location import StateLocation

T = TypeVar("T")
_CONNECT_TIMEOUT = 5
_READ_TIMEOUT = 30


class ConditionFailed(Exception):
    """A conditional write or delete lost (If-None-Match / If-Match): someone else changed it."""


class Bucket:
    """Thin boto3 wrapper: one place that turns botocore's errors into ours."""

    def __init__(self, location: StateLocation) -> None:
        self.location = location
        self.name = str(location.bucket)
        self._client: Any = None
        self._keys: dict[str, str] = {}

    @property
    def client(self) -> Any:
        """The boto3 client, built on first use (minting a key first if that is the source)
        and rebuilt when a minted key was renewed."""
        keys = credentials.boto3_keys(self.location.keys)
        if self._client is None or keys != self._keys:
            self._client, self._keys = self._build(keys), keys
        return self._client

    def _build(self, keys: dict[str, str]) -> Any:
        import boto3
        from botocore.config import Config

        location = self.location
        config = Config(
            s3={"addressing_style": "path"},  # S3-compatible stores serve buckets by path
            connect_timeout=_CONNECT_TIMEOUT,
            read_timeout=_READ_TIMEOUT,
            retries={"max_attempts": 3, "mode": "standard"},
            # Newer botocore adds CRC checksums by default; S3-compatible stores may not.
            request_checksum_calculation="when_required",
            response_checksum_validation="when_required",
        )
        return boto3.session.Session().client(
            "s3",
            endpoint_url=location.endpoint,
            region_name=location.region,
            config=config,
            **keys,
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
                hint=f"{credentials.AWS_HINT}, or a Nebius profile or NEBIUS_IAM_TOKEN to mint "
                "one from",
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
                    f"the state bucket {self.where()} refused access ({what}): {code}; the "
                    f"key came from {self.location.keys.detail}",
                    hint="check that access key and that its service account may read and "
                    "write the bucket",
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

    def versioning(self) -> str:
        """The versioning status S3 reports: "Enabled", "Suspended", or "" (never set)."""
        return self.call(
            "read its versioning",
            lambda: str(self.client.get_bucket_versioning(Bucket=self.name).get("Status") or ""),
        )

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
