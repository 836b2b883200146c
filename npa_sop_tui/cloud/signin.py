"""How npa signs in to Nebius: the official SDK's keyword arguments for the user's credentials.

One place for every caller of the SDK — the cloud reads (cloud/nebius_sdk.py), the state
bucket's setup and its minted access keys (state/) — so they all accept the same credentials
in the same order, the SDK's own (`nebius.aio.channel.Channel`: a credentials file first, then
the CLI config reader, which itself puts `NEBIUS_IAM_TOKEN` before the profile):

1. an IAM token held in memory by the caller (the sandbox's);
2. a service-account credentials file (`NPA_NEBIUS_CREDENTIALS_FILE`), read and checked here
   with the SDK's own reader, so a malformed file is named before any call;
3. `NEBIUS_IAM_TOKEN` in the environment;
4. the Nebius CLI profile (`--profile`, `NEBIUS_PROFILE`, else the config's default) in
   `~/.nebius/config.yaml`. A federation (browser) profile is used through the token the
   Nebius CLI cached for it; when there is none, npa says so at once instead of waiting for
   a browser login nobody will see.

A sign-in that fails — a malformed key file, a token exchange or a token the API refuses, an
expired profile token — is `SignInFailed` (exit 2): what failed, which source, what to do.
Credentials are handed to the SDK where the user keeps them; nothing is copied. The SDK is
imported only inside these functions, and its loggers stay silent unless `--debug` set up
logging.
"""

from __future__ import annotations

import ipaddress
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home.settings import NEBIUS_PROFILE_ENV as PROFILE_ENV

ENDPOINT_ENV = "NPA_NEBIUS_ENDPOINT"  # where the API is: host:port, or address=host:port,…
SA_CREDENTIALS_ENV = "NPA_NEBIUS_CREDENTIALS_FILE"  # a service-account credentials JSON file
TOKEN_ENV = "NEBIUS_IAM_TOKEN"  # the Nebius CLI's own variable
CLI_CONFIG = Path("~/.nebius/config.yaml")
CLI_TOKEN_CACHE = "credentials.yaml"  # beside the CLI config: the CLI's cached tokens


class CloudCredentialsMissing(UsageError):
    """No way to authenticate: no token, no key file, no usable CLI profile."""


class SignInFailed(CloudCredentialsMissing):
    """Credentials were found but signing in with them failed (exit 2)."""


@dataclass(frozen=True)
class SignIn:
    """The SDK's credential arguments and, for error messages, where they came from."""

    kwargs: dict[str, Any] = field(repr=False)
    source: str  # "token (NEBIUS_IAM_TOKEN)", "key file /p/sa.json", "profile 'dev' (…)"
    fix: str  # what to do when the API refuses it

    def refused(self, message: str) -> SignInFailed:
        return SignInFailed(f"signing in to Nebius with the {self.source} failed: {message}",
                            hint=self.fix)  # fmt: skip


def is_loopback(endpoint: str | None) -> bool:
    """True for a `host:port` on this machine (a local server, reached without TLS); for an
    address map, when every address in it is."""
    if not endpoint:
        return False
    if "=" in endpoint:
        addresses = parse_endpoint(endpoint).values()
        return bool(addresses) and all(is_loopback(a) for a in addresses)
    host = endpoint.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_endpoint(endpoint: str) -> dict[str, str]:
    """`quota-dispatcher.billing-cpl=127.0.0.1:5001,compute=…` → {address: host:port}; the
    keys are the addresses the SDK's resolver gives services, without `.{domain}`."""
    pairs = [p.strip() for p in endpoint.split(",") if p.strip()]
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, addr = pair.partition("=")
        if not sep or not name.strip() or not addr.strip():
            raise UsageError(
                f"{ENDPOINT_ENV}: {pair!r} is not address=host:port",
                hint="give one host:port for every service, or address=host:port pairs",
            )
        out[name.strip()] = addr.strip()
    return out


def _key_file(path: Path) -> SignIn:
    fix = (
        "create a new key file with `nebius iam auth-public-key generate "
        "--service-account-id <id> --output <file>` and point "
        f"{SA_CREDENTIALS_ENV} at it"
    )
    if not path.is_file():
        raise SignInFailed(f"service-account key file {path} does not exist", hint=fix)
    from nebius.base.service_account.credentials_file import Reader

    try:
        reader = Reader(path)
    except Exception as exc:  # json, key or field errors: the SDK raises several types
        reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        raise SignInFailed(
            f"signing in to Nebius with the key file {path} failed: the file is not a "
            f"service-account credentials file ({reason})",
            hint=fix,
        ) from None
    return SignIn({"credentials": reader}, f"key file {path}", fix)


def _profile_entry(config: Path, name: str | None) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
        entry = data["profiles"][name]
    except Exception:
        return {}
    return entry if isinstance(entry, dict) else {}


def _cached_federation_token(config: Path, profile: str, entry: dict[str, Any]) -> str | None:
    """The token the Nebius CLI cached for a federation profile, if it has not expired
    (the SDK's cache: `credentials.yaml` beside the config, keyed
    `federation/<endpoint>/<federation id>/<profile>`)."""
    import yaml
    from nebius.aio.token.token import Token

    name = f"federation/{entry.get('federation-endpoint')}/{entry.get('federation-id')}/{profile}"
    try:
        data = yaml.safe_load((config.parent / CLI_TOKEN_CACHE).read_text(encoding="utf-8"))
        token = Token.from_dict(data["tokens"][name])
    except Exception:
        return None
    return None if token.is_expired() or not token.token else token.token


def _profile(config: Path, profile: str | None) -> SignIn:
    from nebius.aio.cli_config import Config

    try:
        reader = Config(config_file=config, profile=profile, no_parent_id=True)
    except Exception as exc:  # the SDK raises several types for a bad or missing profile
        raise SignInFailed(
            f"the Nebius CLI profile {profile or '(default)'} in {config} is not usable: {exc}",
            hint=f"pick another with --profile or {PROFILE_ENV}, or `nebius profile list`",
        ) from None
    name = reader.profile_name() or "(default)"
    entry = _profile_entry(config, reader.profile_name())
    auth = entry.get("auth-type", "token file" if "token-file" in entry else "")
    source = f"profile {name!r} ({auth or 'no auth-type'}) in {config}"
    relogin = f"sign in again with `nebius iam whoami --profile {name}`, then retry"
    if auth == "federation" and "token-file" not in entry and "token-endpoint" not in entry:
        token = _cached_federation_token(config, name, entry)
        if token is None:
            raise SignInFailed(
                f"the Nebius CLI profile {name!r} signs in through a browser and holds no "
                "current token (never signed in, or it expired); npa does not open a browser",
                hint=f"{relogin} (it opens the login page), or export {TOKEN_ENV}",
            )
        return SignIn({"credentials": token}, source, relogin)
    kwargs = {
        "config_reader": reader,
        "federation_invitation_no_browser_open": True,
        "federation_invitation_writer": None,
    }
    return SignIn(kwargs, source, relogin)


def sign_in(
    *,
    iam_token: str | None = None,
    credentials_file: Path | None = None,
    profile: str | None = None,
    cli_config: Path = CLI_CONFIG,
) -> SignIn:
    """The SDK's credential arguments in the order above (`CloudCredentialsMissing` if
    none, `SignInFailed` for a key file or profile that cannot be used)."""
    if iam_token:
        return SignIn({"credentials": iam_token}, "in-memory token", "restart the sandbox")
    if credentials_file is not None:
        return _key_file(credentials_file)
    env_token = (os.environ.get(TOKEN_ENV) or "").strip()
    if env_token:
        fix = f"get a fresh one with `nebius iam get-access-token` and put it in {TOKEN_ENV}"
        return SignIn({"credentials": env_token}, f"token in {TOKEN_ENV}", fix)
    config = cli_config.expanduser()
    if not config.is_file():
        raise CloudCredentialsMissing(
            f"no Nebius credentials: no {TOKEN_ENV}, no service-account file and no "
            f"Nebius CLI config at {config}",
            hint=f"run `nebius profile create`, or export {TOKEN_ENV}="
            "$(nebius iam get-access-token)",
        )
    return _profile(config, profile)


def sdk_credentials(
    *,
    iam_token: str | None = None,
    credentials_file: Path | None = None,
    profile: str | None = None,
    cli_config: Path = CLI_CONFIG,
) -> dict[str, Any]:
    """The SDK's credential arguments alone (see `sign_in`)."""
    return sign_in(
        iam_token=iam_token, credentials_file=credentials_file, profile=profile,
        cli_config=cli_config,
    ).kwargs  # fmt: skip


def profile_parent_id(profile: str | None = None, cli_config: Path = CLI_CONFIG) -> str | None:
    """The CLI profile's `parent-id` (the project the Nebius CLI works in), if it has one."""
    config = cli_config.expanduser()
    if not config.is_file():
        return None
    from nebius.aio.cli_config import Config

    try:
        return Config(config_file=config, profile=profile).parent_id
    except Exception:  # no profile, no parent-id: the caller asks for it instead
        return None


def sdk_endpoint(endpoint: str | None) -> dict[str, Any]:
    """The SDK's arguments that send calls to `endpoint`: one `host:port` for every service,
    or `address=host:port,…` keyed by the addresses the SDK's own resolver gives services
    (`Conventional`, e.g. `compute`, `tokens.iam`); plaintext only on loopback."""
    if not endpoint:
        return {}
    from nebius.base.resolver import Constant, Conventional, Resolver

    resolver: Resolver
    if "=" in endpoint:
        table = parse_endpoint(endpoint)

        class _Table(Resolver):
            def resolve(self, service_id: str) -> str:
                address = Conventional().resolve(service_id).removesuffix(".{domain}")
                if address not in table:
                    from nebius.base.error import SDKError

                    raise SDKError(f"{ENDPOINT_ENV} has no address for {address} ({service_id})")
                return table[address]

        resolver = _Table()
    else:
        resolver = Constant(endpoint)
    kwargs: dict[str, Any] = {"resolver": resolver}
    if is_loopback(endpoint):
        from nebius.base.options import INSECURE

        kwargs["options"] = [(INSECURE, True)]
        kwargs["keepalive"] = False
    return kwargs


def service_address(service: Any, endpoint: str | None, sign: SignIn | None) -> str:
    """The address calls of `service` (a generated client class) go to: the `endpoint`
    npa was given (one `host:port`, or the map's entry), else `<api service>.<domain>` with
    the profile's endpoint or the SDK's default domain, as the SDK routes them."""
    from nebius.base.constants import DOMAIN
    from nebius.base.resolver import Conventional

    name = str(getattr(service, "__service_name__", "") or "")
    conventional = Conventional().resolve(name).removesuffix(".{domain}") if name else ""
    if endpoint:
        if "=" not in endpoint:
            return endpoint
        return parse_endpoint(endpoint).get(conventional, f"{conventional} (not in {ENDPOINT_ENV})")
    domain = ""
    reader = sign.kwargs.get("config_reader") if sign is not None else None
    if reader is not None:
        try:
            domain = str(reader.endpoint() or "")
        except Exception:  # a profile without an endpoint: the SDK's default
            domain = ""
    api = str(getattr(service, "__api_service_name__", "") or conventional)
    return f"{api}.{domain or DOMAIN}"


_quieted: list[bool] = []


def quiet_sdk() -> dict[str, Any]:
    """Keep the SDK's log records (its deprecation notes included) and its event loop's stray
    errors off stderr: they go to the `--debug` log when logging is set up, nowhere
    otherwise. Returns the SDK argument that routes its loop's errors to its logger."""
    import logging

    logger = logging.getLogger("nebius")
    if not _quieted:
        # A handler on the SDK's loggers keeps Python's last-resort stderr handler away;
        # records still propagate to the `--debug` file handler when there is one. The SDK
        # reports deprecated services, messages and fields on a logger of its own,
        # `deprecation` (`nebius/base/protos/direct.py`): those go the same way.
        logger.addHandler(logging.NullHandler())
        logging.getLogger("deprecation").addHandler(logging.NullHandler())
        _quieted.append(True)

    def loop_errors(_loop: Any, context: dict[str, Any]) -> None:
        logger.debug(
            "SDK event loop: %s", context.get("message"), exc_info=context.get("exception")
        )

    return {"loop_exception_handler": loop_errors}


def new_sdk(sign: SignIn, endpoint: str | None) -> Any:
    """The SDK, signed in as `sign` says, calls sent to `endpoint` (None: Nebius)."""
    from npa_sop_tui import __version__

    warming = sys.modules.get("npa_sop_tui.cloud.connection")
    if warming is not None:  # never import gRPC beside the cloud package's background import
        warming.wait_for_warm_up()
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")  # gRPC core logs INFO lines otherwise
    from nebius.sdk import SDK

    kwargs: dict[str, Any] = {"user_agent_prefix": f"npa-sop-tui/{__version__}"}
    kwargs.update(sign.kwargs)
    kwargs.update(sdk_endpoint(endpoint))
    kwargs.update(quiet_sdk())
    try:
        return SDK(**kwargs)
    except Exception as exc:
        raise sign.refused(f"the SDK could not start: {exc}") from None


def sign_in_from_env(*, profile: str | None = None) -> SignIn:
    """`sign_in` with the environment's key file and profile (`NEBIUS_PROFILE`)."""
    key_file = (os.environ.get(SA_CREDENTIALS_ENV) or "").strip()
    return sign_in(
        credentials_file=Path(key_file).expanduser() if key_file else None,
        profile=profile or (os.environ.get(PROFILE_ENV) or "").strip() or None,
    )


def sdk_from_env(*, profile: str | None = None) -> Any:
    """An SDK signed in with the user's credentials from the environment, in the order above
    (`profile` None: `NEBIUS_PROFILE`, then the config's default); `NPA_NEBIUS_ENDPOINT`
    says where the API is. Close it with `await sdk.close()`."""
    return new_sdk(
        sign_in_from_env(profile=profile), (os.environ.get(ENDPOINT_ENV) or "").strip() or None
    )


def fail_fast() -> dict[str, Any]:
    """A request's `auth_options` that make a failed sign-in (a refused token exchange) fail
    that request at once instead of being retried in the background until its deadline
    (`nebius/aio/token/options.py`, OPTION_REPORT_ERROR)."""
    from nebius.aio.token.options import OPTION_REPORT_ERROR

    return {"auth_options": {OPTION_REPORT_ERROR: "1"}}


def refused(exc: Exception, sign: SignIn) -> SignInFailed | None:
    """The sign-in error an SDK failure amounts to, or None when it is something else: the
    API refusing the credentials (UNAUTHENTICATED) or the token exchange failing."""
    code, message = request_failure(exc)
    if code == "UNAUTHENTICATED":
        return sign.refused(f"the API refused the credentials ({message})")
    module = type(exc).__module__
    if module.startswith("nebius.aio.token") or module.startswith("nebius.base.service_account"):
        return sign.refused(f"{type(exc).__name__}: {exc}")
    return None


def request_failure(exc: Exception) -> tuple[str, str]:
    """(status code name, message) of an SDK request error."""
    status = getattr(exc, "status", None)
    code = getattr(status, "code", None)
    return str(getattr(code, "name", code)), str(getattr(status, "message", None) or exc)
