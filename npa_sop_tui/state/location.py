"""Where a team's records live: `local` (this machine's npa home) or `s3` (a bucket).

Built once from the resolved settings. With `s3`, every object npa writes sits under
`<prefix>/<cluster>/` in the bucket:

    <prefix>/<cluster>/inventory.json          the cluster's record (who ran what, when, result)
    <prefix>/<cluster>/spec.yaml               the spec as last deployed
    <prefix>/<cluster>/operations/<id>.ndjson  the redacted event log of each operation
    <prefix>/<cluster>/terraform.tfstate       Terraform's state (its S3 backend's key)
    <prefix>/<cluster>/npa.lock                the cluster lock (holder and lease)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from npa_sop_tui.errors import UsageError
from npa_sop_tui.state.credentials import KeySource, key_source

if TYPE_CHECKING:
    from npa_sop_tui.home.settings import Settings

Backend = Literal["local", "s3"]
INVENTORY_KEY = "inventory.json"
SPEC_KEY = "spec.yaml"
TFSTATE_KEY = "terraform.tfstate"
LOCK_KEY = "npa.lock"

# S3 bucket naming rules (also Nebius Object Storage's): 3-63 lowercase letters, digits, dots
# and dashes, starting and ending with a letter or digit.
_BUCKET_RE = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_PREFIX_RE = re.compile(r"^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$")
# Which source wins when the backend and the bucket disagree: the more explicit one.
_RANK = {"default": 0, "config": 1, "env": 2, "flag": 3, "caller": 3}


def default_endpoint(region: str) -> str:
    return f"https://storage.{region}.nebius.cloud"


@dataclass(frozen=True)
class StateLocation:
    backend: Backend = "local"
    bucket: str | None = None
    prefix: str = "npa"
    endpoint: str | None = None
    region: str | None = None
    lease_seconds: float = 120.0
    keys: KeySource = field(default_factory=KeySource)  # the bucket's key: credentials.py

    @property
    def shared(self) -> bool:
        return self.backend == "s3"

    def key(self, cluster: str, *parts: str) -> str:
        return "/".join((self.prefix, cluster, *parts))

    def describe(self) -> str:
        if self.backend == "local":
            return "local (this machine's npa home)"
        return f"s3://{self.bucket}/{self.prefix}/ at {self.endpoint}"


def _rank(source: str) -> int:
    return _RANK.get(source.split(" ", 1)[0], 0)


def location_from_settings(settings: Settings) -> StateLocation:
    """The state location the settings describe; a bad combination raises `UsageError`.

    A bucket given more explicitly than the backend (say `--state-bucket` over a config that
    does not name a backend) selects `s3`.
    """
    backend = settings["state.backend"]
    bucket = settings["state.bucket"]
    if bucket and _rank(settings.source("state.bucket")) > _rank(settings.source("state.backend")):
        backend = "s3"
    if backend not in ("local", "s3"):
        raise UsageError(
            f"state backend {backend!r} is not one of local, s3",
            hint="set state.backend (or NPA_STATE_BACKEND) to local or s3",
        )
    prefix = str(settings["state.prefix"] or "npa").strip("/")
    lease = float(settings["state.lease_seconds"] or 120.0)
    if backend == "local":
        return StateLocation(lease_seconds=lease)
    if not bucket:
        raise UsageError(
            "the state backend is s3 but no bucket is set",
            hint="pass --state-bucket, export NPA_STATE_BUCKET or add `state: {bucket: …}` to "
            "the npa config (`npa soperator state init --bucket B` creates one)",
        )
    if not _BUCKET_RE.fullmatch(bucket) or ".." in bucket:
        raise UsageError(
            f"state bucket {bucket!r} is not a valid bucket name",
            hint="3-63 lowercase letters, digits, dots and dashes",
        )
    if not _PREFIX_RE.fullmatch(prefix):
        raise UsageError(
            f"state prefix {prefix!r} is not a valid key prefix",
            hint="letters, digits, '.', '_', '-' in '/'-separated parts",
        )
    region = settings["state.region"] or settings["region"]
    endpoint = settings["state.endpoint"]
    if not endpoint:
        if not region:
            raise UsageError(
                "the state bucket's region is not set, so its endpoint is unknown",
                hint="set state.region (or region) in the npa config, export NPA_STATE_REGION, "
                "or set state.endpoint",
            )
        endpoint = default_endpoint(region)
    if not endpoint.startswith(("https://", "http://")):
        raise UsageError(
            f"state endpoint {endpoint!r} must be an http(s) URL",
            hint="for example https://storage.eu-north1.nebius.cloud",
        )
    return StateLocation(
        backend="s3",
        bucket=bucket,
        prefix=prefix,
        endpoint=endpoint.rstrip("/"),
        region=region or "eu-north1",
        lease_seconds=lease,
        keys=key_source(settings),
    )
