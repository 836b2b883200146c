"""nebius_auth.py: which credentials npa hands the official Nebius SDK, in the SDK's own order
(in-memory token, service-account file, NEBIUS_IAM_TOKEN, CLI profile), what each failure says,
and where calls go (`NPA_NEBIUS_ENDPOINT`: plaintext only on loopback). The SDK's own readers
are used for real (key files and CLI configs written as the Nebius CLI writes them); the
end-to-end sign-ins against the local Nebius server are in tests/cloud/test_cloud_sign_in.py."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from npa_sop_tui.cloud import signin as nebius_auth
from npa_sop_tui.cloud.signin import (
    CloudCredentialsMissing,
    SignIn,
    SignInFailed,
    is_loopback,
    parse_endpoint,
    profile_parent_id,
    refused,
    request_failure,
    sdk_endpoint,
    sign_in,
    sign_in_from_env,
)
from npa_sop_tui.errors import UsageError

from testkit.nebius_keys import key_file

FEDERATION = (
    "    auth-type: federation\n    federation-endpoint: auth.example.invalid\n"
    "    federation-id: federation-t\n"
)


def _cli_config(folder: Path, body: str, *, name: str = "t", parent: str | None = None) -> Path:
    config = folder / ".nebius" / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    extra = f"    parent-id: {parent}\n" if parent else ""
    config.write_text(
        f"default: {name}\nprofiles:\n  {name}:\n    endpoint: api.example.invalid\n{body}{extra}"
    )
    return config


@pytest.fixture(autouse=True)
def no_env_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (nebius_auth.TOKEN_ENV, nebius_auth.SA_CREDENTIALS_ENV, nebius_auth.PROFILE_ENV):
        monkeypatch.delenv(name, raising=False)


# -- the order of the sources --------------------------------------------------------------


def test_an_in_memory_token_goes_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(nebius_auth.TOKEN_ENV, "env-token")
    sign = sign_in(iam_token="memory-token", credentials_file=tmp_path / "absent.json")
    assert sign.kwargs == {"credentials": "memory-token"}
    assert sign.source == "in-memory token"


def test_a_key_file_goes_before_the_environment_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(nebius_auth.TOKEN_ENV, "env-token")
    path = key_file(tmp_path / "sa.json", None)
    sign = sign_in(credentials_file=path)
    from nebius.base.service_account.credentials_file import Reader

    assert isinstance(sign.kwargs["credentials"], Reader)
    assert sign.source == f"key file {path}"


def test_the_environment_token_goes_before_the_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(nebius_auth.TOKEN_ENV, "  env-token \n")
    config = _cli_config(tmp_path, "    token-file: /nonexistent\n")
    sign = sign_in(cli_config=config)
    assert sign.kwargs == {"credentials": "env-token"}  # stripped
    assert sign.source == f"token in {nebius_auth.TOKEN_ENV}"
    assert "nebius iam get-access-token" in sign.fix


def test_a_blank_environment_token_counts_as_unset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(nebius_auth.TOKEN_ENV, "   ")
    with pytest.raises(CloudCredentialsMissing) as caught:
        sign_in(cli_config=tmp_path / "none.yaml")
    assert not isinstance(caught.value, SignInFailed)


def test_no_credentials_at_all_says_how_to_get_some(tmp_path: Path) -> None:
    with pytest.raises(CloudCredentialsMissing) as caught:
        sign_in(cli_config=tmp_path / "none.yaml")
    assert not isinstance(caught.value, SignInFailed)  # nothing was tried
    assert str(tmp_path / "none.yaml") in str(caught.value)
    assert "nebius profile create" in caught.value.render()
    assert caught.value.exit_code == 2


# -- key files -------------------------------------------------------------------------------


def test_a_missing_key_file_is_a_failed_sign_in_naming_it(tmp_path: Path) -> None:
    with pytest.raises(SignInFailed) as caught:
        sign_in(credentials_file=tmp_path / "gone.json")
    assert f"service-account key file {tmp_path / 'gone.json'} does not exist" in str(caught.value)
    assert "nebius iam auth-public-key generate" in caught.value.render()


@pytest.mark.parametrize(
    "content",
    ["not json", "{}", json.dumps({"subject-credentials": {"type": "JWT", "alg": "RS256"}})],
    ids=["not-json", "empty-object", "no-key"],
)
def test_a_malformed_key_file_is_named_before_any_call(tmp_path: Path, content: str) -> None:
    path = tmp_path / "sa.json"
    path.write_text(content)
    with pytest.raises(SignInFailed) as caught:
        sign_in(credentials_file=path)
    message = str(caught.value)
    assert f"the key file {path} failed" in message
    assert "not a service-account credentials file" in message
    assert nebius_auth.SA_CREDENTIALS_ENV in caught.value.render()


# -- CLI profiles ----------------------------------------------------------------------------


def test_a_token_file_profile_is_read_by_the_sdk_and_never_opens_a_browser(
    tmp_path: Path,
) -> None:
    config = _cli_config(tmp_path, f"    token-file: {tmp_path / 'token'}\n", name="dev")
    sign = sign_in(cli_config=config)
    assert sign.kwargs["federation_invitation_no_browser_open"] is True
    assert sign.kwargs["federation_invitation_writer"] is None
    assert sign.kwargs["config_reader"].profile_name() == "dev"
    assert sign.source == f"profile 'dev' (token file) in {config}"
    assert sign.fix.startswith("sign in again with `nebius iam whoami --profile dev`")


def test_an_unknown_profile_is_a_failed_sign_in(tmp_path: Path) -> None:
    config = _cli_config(tmp_path, "    token-file: /x\n")
    with pytest.raises(SignInFailed) as caught:
        sign_in(cli_config=config, profile="nope")
    assert f"the Nebius CLI profile nope in {config} is not usable" in str(caught.value)
    assert "--profile" in caught.value.render()


def test_a_browser_profile_without_a_cached_token_fails_at_once(tmp_path: Path) -> None:
    config = _cli_config(tmp_path, FEDERATION)
    with pytest.raises(SignInFailed) as caught:
        sign_in(cli_config=config)
    assert "signs in through a browser and holds no current token" in str(caught.value)
    assert nebius_auth.TOKEN_ENV in caught.value.render()


def _cache(config: Path, token: str, expires_at: float) -> None:
    name = "federation/auth.example.invalid/federation-t/t"
    (config.parent / nebius_auth.CLI_TOKEN_CACHE).write_text(
        f"tokens:\n  {name}:\n    token: {token}\n    expires_at: {int(expires_at)}\n"
    )


def test_a_browser_profile_uses_the_token_the_cli_cached(tmp_path: Path) -> None:
    config = _cli_config(tmp_path, FEDERATION)
    _cache(config, "cached-token", time.time() + 3600)
    sign = sign_in(cli_config=config)
    assert sign.kwargs == {"credentials": "cached-token"}
    assert sign.source == f"profile 't' (federation) in {config}"


def test_an_expired_cached_token_is_not_used(tmp_path: Path) -> None:
    config = _cli_config(tmp_path, FEDERATION)
    _cache(config, "old-token", time.time() - 60)
    with pytest.raises(SignInFailed, match="holds no current token"):
        sign_in(cli_config=config)


def test_the_profile_s_project_is_its_parent_id(tmp_path: Path) -> None:
    config = _cli_config(tmp_path, "    token-file: /x\n", parent="project-e00abc")
    assert profile_parent_id(cli_config=config) == "project-e00abc"
    assert profile_parent_id("absent", cli_config=config) is None
    assert profile_parent_id(cli_config=tmp_path / "none.yaml") is None
    bare = _cli_config(tmp_path / "bare", "    token-file: /x\n")
    assert profile_parent_id(cli_config=bare) is None


def test_sign_in_from_env_takes_the_key_file_and_profile_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = key_file(tmp_path / "sa.json", None)
    monkeypatch.setenv(nebius_auth.SA_CREDENTIALS_ENV, f" {path} ")
    assert sign_in_from_env().source == f"key file {path}"
    monkeypatch.delenv(nebius_auth.SA_CREDENTIALS_ENV)
    monkeypatch.setenv("HOME", str(tmp_path))
    _cli_config(tmp_path, "    token-file: /x\n", name="mine")
    monkeypatch.setenv(nebius_auth.PROFILE_ENV, "nope")
    with pytest.raises(SignInFailed, match="profile nope"):
        sign_in_from_env()
    assert "'mine'" in sign_in_from_env(profile="mine").source  # the caller's wins


# -- where calls go --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("endpoint", "loopback"),
    [
        ("127.0.0.1:5000", True),
        ("localhost:443", True),
        ("[::1]:5000", True),
        ("127.0.0.2:1", True),
        ("10.0.0.1:443", False),
        ("api.nebius.cloud:443", False),
        ("", False),
        (None, False),
        ("compute=127.0.0.1:1,tokens.iam=localhost:2", True),
        ("compute=127.0.0.1:1,tokens.iam=api.nebius.cloud:443", False),
    ],
)
def test_is_loopback(endpoint: str | None, loopback: bool) -> None:
    assert is_loopback(endpoint) is loopback


def test_parse_endpoint_maps_addresses_and_refuses_half_pairs() -> None:
    assert parse_endpoint(" compute = 127.0.0.1:1 , tokens.iam=h:2,") == {
        "compute": "127.0.0.1:1",
        "tokens.iam": "h:2",
    }
    for bad in ("compute", "=h:1", "compute=", "a=h:1,b"):
        with pytest.raises(UsageError, match=r"is not address=host:port"):
            parse_endpoint(bad)


def test_sdk_endpoint_sends_every_service_to_one_address() -> None:
    from nebius.base.options import INSECURE

    assert sdk_endpoint(None) == {} and sdk_endpoint("") == {}
    local = sdk_endpoint("127.0.0.1:5000")
    assert local["resolver"].resolve("nebius.compute.v1.InstanceService") == "127.0.0.1:5000"
    assert local["options"] == [(INSECURE, True)] and local["keepalive"] is False
    remote = sdk_endpoint("api.example.invalid:443")
    assert set(remote) == {"resolver"}  # TLS and keepalive as the SDK sets them


def test_sdk_endpoint_table_resolves_by_the_sdk_s_service_address() -> None:
    from nebius.base.error import SDKError
    from nebius.base.resolver import Conventional

    service = "nebius.compute.v1.InstanceService"
    address = Conventional().resolve(service).removesuffix(".{domain}")
    kwargs = sdk_endpoint(f"{address}=127.0.0.1:7001,other=127.0.0.1:7002")
    assert kwargs["resolver"].resolve(service) == "127.0.0.1:7001"
    with pytest.raises(SDKError, match=nebius_auth.ENDPOINT_ENV):
        kwargs["resolver"].resolve("nebius.iam.v1.TokenExchangeService")


# -- what a failure amounts to ---------------------------------------------------------------


def _sdk_error(code: str, message: str) -> Exception:
    exc = RuntimeError("raw")
    exc.status = SimpleNamespace(code=SimpleNamespace(name=code), message=message)  # type: ignore[attr-defined]
    return exc


def test_an_unauthenticated_request_is_a_refused_sign_in_naming_the_source() -> None:
    sign = SignIn({}, "token in NEBIUS_IAM_TOKEN", "get a fresh one")
    failed = refused(_sdk_error("UNAUTHENTICATED", "token expired"), sign)
    assert isinstance(failed, SignInFailed)
    assert str(failed) == (
        "signing in to Nebius with the token in NEBIUS_IAM_TOKEN failed: the API refused "
        "the credentials (token expired)"
    )
    assert failed.hint == "get a fresh one" and failed.exit_code == 2


def test_other_request_failures_are_not_sign_in_failures() -> None:
    sign = SignIn({}, "x", "y")
    assert refused(_sdk_error("NOT_FOUND", "no such cluster"), sign) is None
    assert refused(ValueError("plain"), sign) is None


def test_a_token_exchange_error_is_a_refused_sign_in() -> None:
    exchange_error = type("ExchangeError", (Exception,), {"__module__": "nebius.aio.token.x"})
    failed = refused(exchange_error("denied"), SignIn({}, "key file /k", "new key"))
    assert failed is not None and "ExchangeError: denied" in str(failed)


def test_request_failure_reads_the_status_or_falls_back_to_the_text() -> None:
    assert request_failure(_sdk_error("PERMISSION_DENIED", "no")) == ("PERMISSION_DENIED", "no")
    assert request_failure(ValueError("boom")) == ("None", "boom")


def test_quiet_sdk_keeps_the_sdk_off_stderr_once_and_routes_loop_errors_to_its_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    logger = logging.getLogger("nebius")
    nebius_auth.quiet_sdk()
    handler = nebius_auth.quiet_sdk()["loop_exception_handler"]
    assert sum(isinstance(h, logging.NullHandler) for h in logger.handlers) == 1
    with caplog.at_level(logging.DEBUG, logger="nebius"):
        handler(None, {"message": "stray", "exception": None})
    assert "SDK event loop: stray" in caplog.text
