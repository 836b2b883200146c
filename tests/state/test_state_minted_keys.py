"""The state bucket with no AWS_* keys: npa mints an Object Storage key from the Nebius profile.

The Nebius side is the local gRPC server (`FakeNebius`, the SDK's own messages over real
gRPC), reached through a Nebius CLI profile whose token sits in a `token-file`. The S3 side
is moto's server checking every signature against its IAM: the only keys it accepts are the
ones the Nebius server mints (and the test's own admin key), so a write that gets through
proves the minted key signed it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from npa_sop_tui.cli.entry import main as cli
from npa_sop_tui.cloud.model import WhoAmI
from npa_sop_tui.home.inventory import InventoryEntry
from npa_sop_tui.home.settings import resolve_settings
from npa_sop_tui.sandbox.fake_cloud_state import default_state
from npa_sop_tui.sandbox.fake_nebius import FakeNebius
from npa_sop_tui.state import credentials
from npa_sop_tui.state.s3 import S3Store
from npa_sop_tui.state.stores import default_store

from testkit.moto import REGION, SigningMoto

TOKEN = "npa-test-profile-token"
ACCOUNT = "serviceaccount-team-state"
PROJECT = "project-team"
BUCKET = "npa-minted"


@pytest.fixture(scope="module")
def signing_moto() -> Iterator[SigningMoto]:
    server = SigningMoto(BUCKET)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def nebius(signing_moto: SigningMoto) -> Iterator[FakeNebius]:
    state = default_state(project_id=PROJECT)
    state.token = TOKEN
    state.profile = WhoAmI("service_account", ACCOUNT, "team-state")
    state.access_keys.minter = signing_moto.mint
    with FakeNebius(state) as server:
        yield server
        credentials.release_minted_keys()  # nothing carries over to the next test


@pytest.fixture
def profile_only(
    nebius: FakeNebius, signing_moto: SigningMoto, monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    """A team member with a Nebius CLI profile and no AWS_* anything (the autouse isolation
    fixture already removed AWS_*, NEBIUS_* and NPA_* from the environment)."""
    home = Path(os.environ["HOME"])
    token_file = home / ".nebius" / "token"
    token_file.parent.mkdir()
    token_file.write_text(TOKEN)
    (home / ".nebius" / "config.yaml").write_text(
        f"default: team\nprofiles:\n  team:\n    token-file: {token_file}\n"
        f"    parent-id: {PROJECT}\n"
    )
    env = {
        "NPA_NEBIUS_ENDPOINT": nebius.endpoint,
        "NPA_STATE_BUCKET": BUCKET,
        "NPA_STATE_ENDPOINT": signing_moto.endpoint,
        "NPA_STATE_REGION": REGION,
        "NPA_PROJECT_ID": PROJECT,
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert not [k for k in os.environ if k.startswith("AWS_")]
    return env


def _issued(nebius: FakeNebius) -> list[Any]:
    return list(nebius.state.access_keys.issued.values())


def _files_containing(secret: str, *roots: Path) -> list[Path]:
    found = []
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file() and not path.is_symlink():
                try:
                    if secret.encode() in path.read_bytes():
                        found.append(path)
                except OSError:
                    continue
    return found


def test_store_and_lock_use_a_key_minted_from_the_profile(
    profile_only: dict[str, str], nebius: FakeNebius, signing_moto: SigningMoto, tmp_path: Path
) -> None:
    store = default_store()
    assert isinstance(store, S3Store)
    assert store.location.keys.kind == "nebius"
    assert "Nebius CLI profile" in store.location.keys.detail

    lock = store.lock("keyed", operation="deploy").acquire()
    try:
        store.save(InventoryEntry(name="keyed", kube_context="nebius-keyed-slurm"))
        assert store.lock_holder("keyed") is not None
    finally:
        lock.release()
    # One key, minted once for the whole process, for the profile's own service account,
    # in the project, expiring within hours, its secret fetched explicitly.
    (key,) = _issued(nebius)
    assert (key.account_id, key.parent_id) == (ACCOUNT, PROJECT)
    assert 0 < key.expires_at - time.time() <= credentials.KEY_LIFETIME
    assert nebius.state.access_keys.secrets_read == [key.id]
    assert key.aws_access_key_id in signing_moto.minted
    auth = {a for m, a in nebius.state.calls if m.startswith("iam.v2.AccessKeyService")}
    assert auth == {f"Bearer {TOKEN}"}  # the profile's token file, not an env variable
    # The writes reached the bucket: moto accepted them, so the minted key signed them.
    body = signing_moto.admin().get_object(Bucket=BUCKET, Key="npa/keyed/inventory.json")
    assert json.loads(body["Body"].read())["name"] == "keyed"

    # moto really checks: the same key id with another secret is refused.
    forged = signing_moto.client(key.aws_access_key_id, "not-the-secret")
    with pytest.raises(ClientError, match="SignatureDoesNotMatch"):
        forged.get_object(Bucket=BUCKET, Key="npa/keyed/inventory.json")

    # The secret is nowhere on disk.
    assert _files_containing(key.secret, tmp_path) == []


def test_cli_mints_then_deletes_the_key_and_config_show_names_the_source(
    profile_only: dict[str, str],
    nebius: FakeNebius,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("NPA_DEBUG", "1")  # the debug log must not get the key either
    monkeypatch.delenv("NPA_PROJECT_ID")  # the key then sits beside its service account
    assert cli(["soperator", "list", "-o", "json"]) == 0
    captured = capsys.readouterr()
    assert isinstance(json.loads(captured.out)["clusters"], list)
    (key,) = _issued(nebius)
    assert (key.account_id, key.parent_id) == (ACCOUNT, PROJECT)
    assert nebius.state.access_keys.deleted == [key.id]  # gone when the command exits
    home = Path(os.environ["NPA_HOME"])
    assert list(home.rglob("*.log")), "no debug log was written"
    assert _files_containing(key.secret, tmp_path) == []
    assert key.secret not in captured.out + captured.err
    monkeypatch.delenv("NPA_DEBUG")

    assert cli(["soperator", "config", "show"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "state.access_key" in line)
    assert "nebius" in row and "minted from the Nebius CLI profile (default)" in row
    assert len(_issued(nebius)) == 1  # showing where the key comes from mints nothing
    assert key.secret not in out

    monkeypatch.setenv("AWS_PROFILE", "team")
    assert cli(["soperator", "config", "show", "-o", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["settings"]
    row = next(r for r in rows if r["key"] == "state.access_key")
    assert row["value"] == "aws-profile"
    assert row["source"] == "AWS_PROFILE=team (shared AWS credentials)"


def test_a_key_running_low_is_replaced_and_every_key_is_deleted_at_the_end(
    profile_only: dict[str, str],
    nebius: FakeNebius,
    signing_moto: SigningMoto,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A key that is minted with less life than an operation needs is replaced at its next
    # use; the S3 client follows the new key, and both keys are deleted on release.
    monkeypatch.setattr(credentials, "KEY_LIFETIME", credentials.RENEW_BEFORE - 60)
    store = default_store()
    assert isinstance(store, S3Store)
    store.save(InventoryEntry(name="renew", kube_context="nebius-renew-slurm"))
    first = store.bucket.client
    assert store.get("renew") is not None
    assert store.bucket.client is not first  # rebuilt with the replacement key
    assert len(_issued(nebius)) >= 2
    assert store.terraform_env()["AWS_ACCESS_KEY_ID"] == _issued(nebius)[-1].aws_access_key_id
    deleted = credentials.release_minted_keys()
    assert sorted(deleted) == sorted(k.id for k in _issued(nebius))
    assert sorted(nebius.state.access_keys.deleted) == sorted(deleted)


def test_a_user_profile_mints_for_the_configured_service_account(
    profile_only: dict[str, str],
    nebius: FakeNebius,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    nebius.state.profile = WhoAmI("user", "useraccount-ann")
    monkeypatch.setenv("NPA_STATE_SERVICE_ACCOUNT_ID", "serviceaccount-terraform")
    assert cli(["soperator", "list"]) == 0, capsys.readouterr().err
    (key,) = _issued(nebius)
    assert (key.account_id, key.parent_id) == ("serviceaccount-terraform", PROJECT)


def test_precedence_aws_env_then_aws_profile_then_nebius(
    profile_only: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    settings = resolve_settings()
    base = dict(os.environ)
    assert credentials.key_source(settings, base).kind == "nebius"
    both = {**base, "AWS_PROFILE": "p", "AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "s"}
    assert credentials.key_source(settings, both).kind == "aws-env"
    assert credentials.key_source(settings, {**base, "AWS_PROFILE": "p"}).kind == "aws-profile"
    monkeypatch.setenv("HOME", str(tmp_path / "nobody"))  # no Nebius CLI config there
    assert credentials.key_source(settings, dict(os.environ)).kind == "aws-default"
    # Keys from the AWS sources are left to boto3 and Terraform themselves: nothing minted.
    assert credentials.terraform_env(credentials.key_source(settings, both)) == {}


@pytest.mark.parametrize(
    ("breakage", "expected"),
    [
        ("denied", "PERMISSION_DENIED"),
        ("user-profile", "sign in as a user"),
    ],
)
def test_a_failing_access_key_call_is_a_clear_usage_error(
    profile_only: dict[str, str],
    nebius: FakeNebius,
    capsys: pytest.CaptureFixture[str],
    breakage: str,
    expected: str,
) -> None:
    if breakage == "denied":
        nebius.state.errors["iam.v2.AccessKeyService/Create"] = "PERMISSION_DENIED"
    else:
        nebius.state.profile = WhoAmI("user", "useraccount-ann")
    assert cli(["soperator", "list"]) == 2
    err = capsys.readouterr().err
    assert "minting one from the Nebius credentials failed" in err and expected in err
    assert "AWS_ACCESS_KEY_ID" in err and "fix the Nebius credentials" in err
    assert "Traceback" not in err
    assert _issued(nebius) == []


@pytest.mark.terraform
async def test_terraform_s3_backend_deploys_with_the_minted_key_and_no_secret_leaks(
    profile_only: dict[str, str],
    nebius: FakeNebius,
    signing_moto: SigningMoto,
    sandbox_in_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from npa_sop_tui.lifecycle import api as lifecycle

    from testkit.lifecycle import Recorder, make_spec, options

    workdir = tmp_path / "work"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    recorder = Recorder()
    result = await lifecycle.deploy(
        make_spec("minted"), options=options(preflight=False), on_event=recorder
    )
    assert result.resources == 25
    (key,) = _issued(nebius)
    # Terraform's S3 backend wrote the state with that key: moto refuses any other.
    admin = signing_moto.admin()
    state = json.loads(
        admin.get_object(Bucket=BUCKET, Key="npa/minted/terraform.tfstate")["Body"].read()
    )
    assert sum(len(r.get("instances") or []) for r in state["resources"]) == 25
    install = Path(result.install_dir)
    override = json.loads((install / "terraform_backend_override.tf.json").read_text())
    assert override["terraform"]["backend"]["s3"]["bucket"] == BUCKET
    # `terraform state list` reads the state through the backend with the same key.
    listed = await lifecycle.cluster_resources("minted", options(preflight=False))
    assert len(listed) == 25
    assert len(_issued(nebius)) == 1

    # The secret is in no file (npa home, HOME, the installation, the working dir), no
    # event, and no log uploaded to the bucket.
    assert _files_containing(key.secret, tmp_path, install) == []
    assert _files_containing(key.aws_access_key_id, install) == []
    events = json.dumps([e.model_dump(mode="json") for e in recorder.events])
    assert key.secret not in events
    listing = admin.list_objects_v2(Bucket=BUCKET, Prefix="npa/minted/")
    for item in listing["Contents"]:
        body = admin.get_object(Bucket=BUCKET, Key=item["Key"])["Body"].read()
        assert key.secret.encode() not in body, item["Key"]
    assert any("/operations/" in item["Key"] for item in listing["Contents"])


@pytest.mark.terraform
async def test_migrate_into_the_bucket_with_the_minted_key(
    profile_only: dict[str, str],
    nebius: FakeNebius,
    signing_moto: SigningMoto,
    sandbox_in_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    import asyncio

    from npa_sop_tui.lifecycle import api as lifecycle

    from testkit.lifecycle import make_spec, options

    monkeypatch.delenv("NPA_STATE_BUCKET")  # deployed with local state first
    result = await lifecycle.deploy(make_spec("moved"), options=options(preflight=False))
    flags = ["--sandbox", "--state-bucket", BUCKET]
    argv = ["soperator", "state", "migrate", "-n", "moved", "--to", "s3", *flags]
    assert await asyncio.to_thread(cli, argv) == 0  # the CLI runs its own event loop
    (key,) = _issued(nebius)
    assert nebius.state.access_keys.deleted == [key.id]
    body = signing_moto.admin().get_object(Bucket=BUCKET, Key="npa/moved/terraform.tfstate")
    assert (
        sum(len(r.get("instances") or []) for r in json.loads(body["Body"].read())["resources"])
        == 25
    )
    assert _files_containing(key.secret, tmp_path, Path(result.install_dir)) == []


def test_minting_the_buckets_key_honours_the_cloud_timeout(
    profile_only: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--cloud-timeout` (LifecycleOptions.cloud_timeout) bounds the calls minting the
    bucket's key like every other cloud read: an endpoint that never answers is named
    within the timeout, not after the minting default of 30 s."""
    from npa_sop_tui.errors import NpaError
    from npa_sop_tui.lifecycle.results import LifecycleOptions
    from npa_sop_tui.lifecycle.steps import environment_of

    from testkit.silent_server import SilentServer

    store = environment_of(LifecycleOptions(cloud_timeout=2)).state_store()
    source = credentials.key_source(resolve_settings({"cloud_timeout": 2}))
    assert source.minted and source.timeout == 2
    with SilentServer() as silent:
        monkeypatch.setenv("NPA_NEBIUS_ENDPOINT", silent.address)
        started = time.monotonic()
        with pytest.raises(NpaError) as caught:
            store.terraform_env()
        elapsed = time.monotonic() - started
    message = caught.value.message
    assert f"failed at {silent.address}: " in message and "no answer within 2s" in message, message
    assert elapsed < 2 * 2 + 3, elapsed  # its two calls' deadlines, not 30 s each
