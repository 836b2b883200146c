"""The state bucket's access key: from the AWS_* environment, or minted from the Nebius profile.

Precedence (first that applies wins):

1. `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` in the environment;
2. `AWS_PROFILE` (a profile of the shared AWS credentials file);
3. the Nebius credentials npa's cloud calls use (`NEBIUS_IAM_TOKEN`, a service-account key
   file, the Nebius CLI profile / `--profile`; cloud/signin.py): npa mints a short-lived
   Object Storage key of a service account through Nebius IAM (access_keys.py);
4. none of these: boto3's own default chain (which ends in a clear "no access key" error).

A minted key lives in this process's memory only, handed to boto3 and to Terraform's
environment (never to a file of ours); it is reused while it has hours left, deleted when the
CLI or the app exits (`release_minted_keys`), and expires on its own after `KEY_LIFETIME`
anyway (a process that dies cannot delete it; the Python SDK leaves its key to expire).
Terraform holds the key for a whole plan or apply, so a key is renewed before an operation
whenever less than `RENEW_BEFORE` of it remains.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from npa_sop_tui.state.errors import StateCredentialsMissing

if TYPE_CHECKING:
    from npa_sop_tui.home.settings import Settings
    from npa_sop_tui.state.access_keys import MintedKey

AWS_KEY_ENV = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
AWS_PROFILE_ENV = "AWS_PROFILE"
KEY_LIFETIME = 6 * 3600.0  # covers the longest operation (two 90-minute applies and a plan)
RENEW_BEFORE = 4 * 3600.0
_CALL_TIMEOUT = 30.0
_DESCRIPTION = "npa state bucket (temporary; deleted when npa exits)"

KeyKind = Literal["aws-env", "aws-profile", "nebius", "aws-default"]
AWS_HINT = (
    "export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (an access key of a Nebius service "
    "account that may use the bucket), or AWS_PROFILE naming a profile that has them"
)


@dataclass(frozen=True)
class KeySource:
    """Where the bucket's access key comes from (never the key itself)."""

    kind: KeyKind = "aws-default"
    detail: str = "boto3's default chain (no AWS_* keys, no AWS_PROFILE, no Nebius credentials)"
    profile: str | None = None  # Nebius CLI profile (None: NEBIUS_PROFILE, then the default)
    service_account_id: str | None = None
    parent_id: str | None = None  # where a minted key is created (the project)
    # seconds each call minting a key may take (`--cloud-timeout`); one key per source still
    timeout: float = field(default=_CALL_TIMEOUT, compare=False)

    @property
    def minted(self) -> bool:
        return self.kind == "nebius"


def key_source(settings: Settings, env: Mapping[str, str] | None = None) -> KeySource:
    """The source the precedence above selects; nothing is minted here."""
    from npa_sop_tui.cloud.signin import CLI_CONFIG, SA_CREDENTIALS_ENV, TOKEN_ENV

    env = os.environ if env is None else env
    given = [name for name in AWS_KEY_ENV if (env.get(name) or "").strip()]
    if given:
        return KeySource("aws-env", " / ".join(given) + " in the environment")
    aws_profile = (env.get(AWS_PROFILE_ENV) or "").strip()
    if aws_profile:
        return KeySource("aws-profile", f"AWS_PROFILE={aws_profile} (shared AWS credentials)")
    profile = settings["profile"]
    account = settings["state.service_account_id"]
    key_file = (env.get(SA_CREDENTIALS_ENV) or "").strip()
    if (env.get(TOKEN_ENV) or "").strip():
        via = TOKEN_ENV
    elif key_file:
        via = f"the service-account key file {key_file}"
    elif CLI_CONFIG.expanduser().is_file():
        via = f"the Nebius CLI profile {profile or '(default)'} in {CLI_CONFIG}"
    else:
        return KeySource()
    whose = f"service account {account}" if account else "the signed-in service account"
    return KeySource(
        "nebius",
        f"minted from {via} for {whose} (in memory only, expires within {KEY_LIFETIME / 3600:g}h)",
        profile=profile,
        service_account_id=account,
        parent_id=settings["project_id"],
        timeout=float(settings["cloud_timeout"] or _CALL_TIMEOUT),
    )


# -- minted keys: one per source and process ---------------------------------------------------

_MINTED: dict[KeySource, MintedKey] = {}
_RETIRED: list[tuple[KeySource, MintedKey]] = []  # renewed, still to delete
_LOCK = threading.Lock()


def _run_async(make: Any) -> Any:
    """Run the coroutine `make()` returns on its own loop in a helper thread: callers are
    sync (boto3), and may themselves be running inside an event loop."""
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="npa-access-key") as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


def _mint(source: KeySource) -> MintedKey:
    from npa_sop_tui.cloud.signin import sdk_from_env
    from npa_sop_tui.errors import NpaError
    from npa_sop_tui.state.access_keys import mint_access_key

    async def mint() -> MintedKey:
        sdk = sdk_from_env(profile=source.profile)
        try:
            return await mint_access_key(
                sdk,
                parent_id=source.parent_id,
                service_account_id=source.service_account_id,
                lifetime_seconds=KEY_LIFETIME,
                description=_DESCRIPTION,
                timeout=source.timeout,
            )
        finally:
            await _close(sdk)

    try:
        return _run_async(mint)  # type: ignore[no-any-return]
    except NpaError as exc:
        reason, fix = exc.message, exc.hint
    except Exception as exc:  # the SDK's own failures (channel, config): still a clear error
        reason, fix = f"{type(exc).__name__}: {exc}", None
    profile_fix = "fix the Nebius credentials" + (f" ({fix})" if fix else "")
    from npa_sop_tui.cloud.signin import ENDPOINT_ENV

    endpoint = os.environ.get(ENDPOINT_ENV)
    where = f" at {endpoint}" if endpoint else ""
    raise StateCredentialsMissing(
        f"no Object Storage access key for the state bucket: minting one from the Nebius "
        f"credentials failed{where}: {reason}",
        hint=f"{AWS_HINT}; or {profile_fix}",
    ) from None


async def _close(sdk: Any) -> None:
    with contextlib.suppress(Exception):  # closing never turns a result into a failure
        await asyncio.wait_for(sdk.close(), 10)


def current_key(source: KeySource) -> MintedKey:
    """The process's key for `source`, minted on first use and renewed when it runs low."""
    with _LOCK:
        key = _MINTED.get(source)
        if key is not None and key.expires_at - time.time() >= RENEW_BEFORE:
            return key
        fresh = _mint(source)
        if key is not None:
            _RETIRED.append((source, key))
        _MINTED[source] = fresh
        return fresh


def boto3_keys(source: KeySource) -> dict[str, str]:
    """Explicit keys for a boto3 client ({} lets boto3 read the AWS sources itself)."""
    if not source.minted:
        return {}
    key = current_key(source)
    return {"aws_access_key_id": key.aws_access_key_id, "aws_secret_access_key": key.secret}


def terraform_env(source: KeySource) -> dict[str, str]:
    """What Terraform's S3 backend needs added to its environment ({} when it reads the
    user's own AWS_* variables, which pass through to it)."""
    if not source.minted:
        return {}
    key = current_key(source)
    return {"AWS_ACCESS_KEY_ID": key.aws_access_key_id, "AWS_SECRET_ACCESS_KEY": key.secret}


def release_minted_keys(timeout: float = 5.0) -> list[str]:
    """Delete the keys this process minted (best effort: they expire anyway); returns the
    ids deleted. Called when the CLI exits."""
    with _LOCK:
        owned = [*_MINTED.items(), *_RETIRED]
        _MINTED.clear()
        _RETIRED.clear()
    if not owned:
        return []
    from npa_sop_tui.cloud.signin import sdk_from_env
    from npa_sop_tui.state.access_keys import delete_access_key

    async def delete_all() -> list[str]:
        deleted: list[str] = []
        for source, key in owned:
            with contextlib.suppress(Exception):
                sdk = sdk_from_env(profile=source.profile)
                try:
                    await delete_access_key(sdk, key.id, timeout)
                    deleted.append(key.id)
                finally:
                    await _close(sdk)
        return deleted

    try:
        return _run_async(delete_all)  # type: ignore[no-any-return]
    except Exception:  # never turn a finished command into a failure
        return []
