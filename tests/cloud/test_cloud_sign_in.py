"""Signing in: a key file exchanged for a token end to end, and every failed sign-in one clear
error (exit 2, which source, what to do) with nothing from the SDK on stderr.

The CLI runs as a real process against the local Nebius server (one port per service
address, the SDK's token exchange), so stderr is exactly what a user sees.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from npa_sop_tui.cloud.client import CloudSettings, connect
from npa_sop_tui.cloud.signin import SignInFailed
from npa_sop_tui.sandbox.fake_cloud_state import FakeCloudState
from npa_sop_tui.sandbox.fake_nebius import FakeNebius

from .conftest import PROJECT, REGION, TENANT, TOKEN
from testkit.nebius_keys import key_file

NPA = Path(sys.executable).parent / "npa"
SPEC = (
    "apiVersion: npa.soperator/v0.0.1\nname: signin\nworkers:\n"
    "  - {name: gpu, platform: gpu-h100-sxm, preset: 8gpu-128vcpu-1600gb, fabric: fabric-3,"
    " size: 1}\n"
)


def run_preflight(tmp_path: Path, fake: FakeNebius, env: dict[str, str]) -> tuple[int, str, float]:
    spec = tmp_path / "c.yaml"
    spec.write_text(SPEC)
    full = {
        **os.environ,
        "NPA_NEBIUS_ENDPOINT": fake.endpoint,
        "NPA_REGION": REGION,
        "NPA_TENANT_ID": TENANT,
        "NPA_PROJECT_ID": PROJECT,
        **env,
    }
    started = time.monotonic()
    done = subprocess.run(
        [str(NPA), "soperator", "preflight", "--spec", str(spec), "--cloud-timeout", "90"],
        capture_output=True, text=True, env=full, timeout=120, check=False,
    )  # fmt: skip
    return done.returncode, done.stderr, time.monotonic() - started


def assert_clean(stderr: str) -> None:
    assert "Traceback" not in stderr
    assert "nebius." not in stderr and "grpc" not in stderr.lower()


async def test_key_file_signs_in_through_the_token_exchange(
    tmp_path: Path, fake_nebius: FakeNebius, cloud_state: FakeCloudState
) -> None:
    path = key_file(tmp_path / "sa.json", cloud_state)
    client = connect(CloudSettings(endpoint=fake_nebius.endpoint, credentials_file=path))
    assert await client.quotas(TENANT, REGION)
    await client.close()
    methods = [m for m, _ in cloud_state.calls]
    assert methods[0] == "iam.v1.TokenExchangeService/Exchange"
    issued = {f"Bearer {t}" for t in cloud_state.issued_tokens}
    assert cloud_state.calls[-1][1] in issued


async def test_key_file_goes_before_the_environment_token(
    tmp_path: Path, fake_nebius: FakeNebius, cloud_state: FakeCloudState,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """The SDK's order (nebius/aio/channel.py): a credentials file before NEBIUS_IAM_TOKEN."""
    monkeypatch.setenv("NEBIUS_IAM_TOKEN", TOKEN)
    path = key_file(tmp_path / "sa.json", cloud_state)
    client = connect(CloudSettings(endpoint=fake_nebius.endpoint, credentials_file=path))
    await client.whoami()
    await client.close()
    assert cloud_state.calls[-1][1] != f"Bearer {TOKEN}"


async def test_a_refused_exchange_fails_at_once_naming_the_key_file(
    tmp_path: Path, fake_nebius: FakeNebius
) -> None:
    path = key_file(tmp_path / "sa.json", None)  # its public key was never uploaded
    settings = CloudSettings(endpoint=fake_nebius.endpoint, credentials_file=path, timeout=30)
    client = connect(settings)
    started = time.monotonic()
    with pytest.raises(SignInFailed, match=r"key file .*sa\.json.*unknown public key") as info:
        await client.quotas(TENANT, REGION)
    await client.close()
    assert time.monotonic() - started < 10  # not the 30 s timeout
    assert info.value.exit_code == 2 and "auth-public-key generate" in (info.value.hint or "")


def test_cli_malformed_key_file(tmp_path: Path, fake_nebius: FakeNebius) -> None:
    bad = tmp_path / "sa.json"
    bad.write_text('{"subject-credentials": {"alg": "RS256"}}')
    code, stderr, _ = run_preflight(
        tmp_path, fake_nebius, {"NPA_NEBIUS_CREDENTIALS_FILE": str(bad)}
    )
    assert code == 2, stderr
    assert f"key file {bad}" in stderr and "not a service-account credentials file" in stderr
    assert "auth-public-key generate" in stderr
    assert_clean(stderr)


def test_cli_key_file_the_api_refuses(
    tmp_path: Path, fake_nebius: FakeNebius, cloud_state: FakeCloudState
) -> None:
    path = key_file(tmp_path / "sa.json", None)
    code, stderr, took = run_preflight(
        tmp_path, fake_nebius, {"NPA_NEBIUS_CREDENTIALS_FILE": str(path)}
    )
    assert code == 2, stderr
    assert "signing in to Nebius with the key file" in stderr and "unknown public key" in stderr
    assert took < 60  # not the 90 s cloud timeout
    assert_clean(stderr)


def test_cli_bad_token(tmp_path: Path, fake_nebius: FakeNebius) -> None:
    code, stderr, _ = run_preflight(tmp_path, fake_nebius, {"NEBIUS_IAM_TOKEN": "wrong"})
    assert code == 2, stderr
    assert "signing in to Nebius with the token in NEBIUS_IAM_TOKEN failed" in stderr
    assert "nebius iam get-access-token" in stderr
    assert_clean(stderr)


def cli_profile(home: Path, body: str) -> None:
    config = home / ".nebius" / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"default: e2e\nprofiles:\n  e2e:\n{body}")


def test_cli_expired_profile_token(
    tmp_path: Path, fake_nebius: FakeNebius, cloud_state: FakeCloudState
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("old-profile-token")
    cloud_state.expired_tokens.add("old-profile-token")
    cli_profile(Path(os.environ["HOME"]), f"    token-file: {token_file}\n")
    code, stderr, _ = run_preflight(tmp_path, fake_nebius, {})
    assert code == 2, stderr
    assert "profile 'e2e'" in stderr and "has expired" in stderr
    assert "nebius iam whoami --profile e2e" in stderr
    assert_clean(stderr)


def test_cli_federation_profile_without_a_current_token_does_not_wait_for_a_browser(
    tmp_path: Path, fake_nebius: FakeNebius
) -> None:
    cli_profile(
        Path(os.environ["HOME"]),
        "    auth-type: federation\n    federation-endpoint: auth.example.invalid\n"
        "    federation-id: federation-e2e\n",
    )
    code, stderr, took = run_preflight(tmp_path, fake_nebius, {})
    assert code == 2, stderr
    assert "signs in through a browser" in stderr and "nebius iam whoami" in stderr
    assert took < 60  # no wait for a browser
    assert_clean(stderr)


async def test_federation_profile_uses_the_cli_cached_token(
    tmp_path: Path, fake_nebius: FakeNebius, cloud_state: FakeCloudState
) -> None:
    home = Path(os.environ["HOME"])
    cli_profile(
        home,
        "    auth-type: federation\n    federation-endpoint: auth.example.invalid\n"
        "    federation-id: federation-e2e\n",
    )
    name = "federation/auth.example.invalid/federation-e2e/e2e"
    (home / ".nebius" / "credentials.yaml").write_text(
        f"tokens:\n  {name}:\n    token: {TOKEN}\n    expires_at: {int(time.time()) + 3600}\n"
    )
    client = connect(CloudSettings(endpoint=fake_nebius.endpoint))
    assert (await client.whoami()).kind == "user"
    await client.close()
    assert cloud_state.calls[-1][1] == f"Bearer {TOKEN}"
