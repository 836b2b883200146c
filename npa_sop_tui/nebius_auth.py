"""How npa signs in to Nebius: the official SDK's keyword arguments for the user's credentials.

One place for every caller of the SDK — the cloud reads (cloud/nebius_sdk.py), the state
bucket's setup and its minted access keys (state/) — so they all accept the same credentials
in the same order, as the Nebius CLI does:

1. an IAM token held in memory by the caller (the sandbox's);
2. `NEBIUS_IAM_TOKEN` in the environment;
3. a service-account credentials file (`NPA_NEBIUS_CREDENTIALS_FILE`);
4. the Nebius CLI profile (`--profile`, `NEBIUS_PROFILE`, else the config's default) in
   `~/.nebius/config.yaml`.

Credentials are handed to the SDK where the user keeps them; nothing is copied. The SDK is
imported only inside these functions.
"""

from __future__ import annotations

import ipaddress
import os
import sys
from pathlib import Path
from typing import Any

from npa_sop_tui.errors import UsageError

ENDPOINT_ENV = "NPA_NEBIUS_ENDPOINT"  # host:port serving every service (tests, the sandbox)
SA_CREDENTIALS_ENV = "NPA_NEBIUS_CREDENTIALS_FILE"  # a service-account credentials JSON file
PROFILE_ENV = "NEBIUS_PROFILE"  # the Nebius CLI's own variable
TOKEN_ENV = "NEBIUS_IAM_TOKEN"  # the Nebius CLI's own variable
CLI_CONFIG = Path("~/.nebius/config.yaml")


class CloudCredentialsMissing(UsageError):
    """No way to authenticate: no token, no key file, no usable CLI profile."""


def is_loopback(endpoint: str | None) -> bool:
    """True for a `host:port` on this machine (a local server, reached without TLS)."""
    if not endpoint:
        return False
    host = endpoint.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def sdk_credentials(
    *,
    iam_token: str | None = None,
    credentials_file: Path | None = None,
    profile: str | None = None,
    cli_config: Path = CLI_CONFIG,
) -> dict[str, Any]:
    """The SDK's credential arguments, in the order above (`CloudCredentialsMissing` if none)."""
    if iam_token:
        return {"credentials": iam_token}
    if (os.environ.get(TOKEN_ENV) or "").strip():
        return {"credentials": os.environ[TOKEN_ENV].strip()}
    if credentials_file is not None:
        if not credentials_file.is_file():
            raise CloudCredentialsMissing(
                f"service-account credentials file {credentials_file} does not exist",
                hint="point it at the JSON file `nebius iam auth-public-key generate` wrote",
            )
        return {"credentials_file_name": str(credentials_file)}
    config = cli_config.expanduser()
    if not config.is_file():
        raise CloudCredentialsMissing(
            f"no Nebius credentials: no {TOKEN_ENV}, no service-account file and no "
            f"Nebius CLI config at {config}",
            hint=f"run `nebius profile create`, or export {TOKEN_ENV}="
            "$(nebius iam get-access-token)",
        )
    from nebius.aio.cli_config import Config

    try:
        reader = Config(config_file=config, profile=profile, no_parent_id=True)
    except Exception as exc:  # the SDK raises several types for a bad or missing profile
        raise CloudCredentialsMissing(
            f"the Nebius CLI profile {profile or '(default)'} in {config} is not usable: {exc}",
            hint=f"pick another with --profile or {PROFILE_ENV}, or `nebius profile list`",
        ) from None
    return {
        "config_reader": reader,
        "federation_invitation_no_browser_open": True,
        "federation_invitation_writer": sys.stderr,
    }


def sdk_endpoint(endpoint: str | None) -> dict[str, Any]:
    """The SDK's arguments that send every call to `endpoint` (host:port), if one is set;
    plaintext only on loopback."""
    if not endpoint:
        return {}
    from nebius.base.resolver import Constant

    kwargs: dict[str, Any] = {"resolver": Constant(endpoint)}
    if is_loopback(endpoint):
        from nebius.base.options import INSECURE

        kwargs["options"] = [(INSECURE, True)]
        kwargs["keepalive"] = False
    return kwargs


def sdk_from_env(*, profile: str | None = None) -> Any:
    """An SDK signed in with the user's credentials from the environment, in the order above
    (`profile` None: `NEBIUS_PROFILE`, then the config's default); `NPA_NEBIUS_ENDPOINT`
    sends every call to one address. Close it with `await sdk.close()`."""
    from npa_sop_tui import __version__

    warming = sys.modules.get("npa_sop_tui.cloud.client")
    if warming is not None:  # never import gRPC beside the cloud package's background import
        warming.wait_for_warm_up()
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")  # gRPC core logs INFO lines otherwise
    from nebius.sdk import SDK

    key_file = (os.environ.get(SA_CREDENTIALS_ENV) or "").strip()
    kwargs: dict[str, Any] = {"user_agent_prefix": f"npa-sop-tui/{__version__}"}
    kwargs.update(
        sdk_credentials(
            credentials_file=Path(key_file).expanduser() if key_file else None,
            profile=profile or (os.environ.get(PROFILE_ENV) or "").strip() or None,
        )
    )
    kwargs.update(sdk_endpoint((os.environ.get(ENDPOINT_ENV) or "").strip() or None))
    try:
        return SDK(**kwargs)
    except Exception as exc:
        raise CloudCredentialsMissing(
            f"cannot set up the Nebius SDK: {exc}",
            hint="check NEBIUS_IAM_TOKEN, the service-account file or the CLI profile",
        ) from None


def request_failure(exc: Exception) -> tuple[str, str]:
    """(status code name, message) of an SDK request error."""
    status = getattr(exc, "status", None)
    code = getattr(status, "code", None)
    return str(getattr(code, "name", code)), str(getattr(status, "message", None) or exc)
