"""Identity npa finds by itself: the project from the CLI profile's parent ID, the tenant
from the project, the subnet from the project (one: used; several: listed, npa asks)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from npa_sop_tui.cloud.client import CloudSettings, connect
from npa_sop_tui.cloud.identity_lookup import from_cloud, from_profile
from npa_sop_tui.errors import UsageError
from npa_sop_tui.home.config import Identity
from npa_sop_tui.sandbox.fake_cloud_state import FakeCloudState
from npa_sop_tui.sandbox.fake_nebius import FakeNebius

from .conftest import PROJECT, REGION, TENANT, TOKEN


def profile_with_parent(parent: str) -> None:
    config = Path(os.environ["HOME"]) / ".nebius" / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"default: p\nprofiles:\n  p:\n    parent-id: {parent}\n    token-file: /x\n")


def test_project_or_tenant_from_the_profile_parent_id() -> None:
    profile_with_parent(PROJECT)
    assert from_profile(Identity(region=REGION), None).project_id == PROJECT
    profile_with_parent(TENANT)
    found = from_profile(Identity(region=REGION), None)
    assert (found.tenant_id, found.project_id) == (TENANT, None)
    given = Identity(region=REGION, project_id="project-mine")
    assert from_profile(given, None).project_id == "project-mine"  # settings win


def test_tenant_and_the_only_subnet_from_the_project(
    fake_nebius: FakeNebius, cloud_state: FakeCloudState, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEBIUS_IAM_TOKEN", TOKEN)
    client = connect(CloudSettings(endpoint=fake_nebius.endpoint, timeout=10))
    found = from_cloud(Identity(region=REGION, project_id=PROJECT), client)
    assert found.tenant_id == TENANT
    assert found.subnet_id == cloud_state.subnets[0][0]


def test_several_subnets_are_listed_and_npa_asks(
    fake_nebius: FakeNebius, cloud_state: FakeCloudState, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEBIUS_IAM_TOKEN", TOKEN)
    cloud_state.subnets = [("vpcsubnet-aaa", "default"), ("vpcsubnet-bbb", "training")]
    client = connect(CloudSettings(endpoint=fake_nebius.endpoint, timeout=10))
    with pytest.raises(UsageError) as info:
        from_cloud(Identity(region=REGION, tenant_id=TENANT, project_id=PROJECT), client)
    assert "has 2 VPC subnets" in info.value.message
    assert "vpcsubnet-aaa  default" in info.value.message
    assert "vpcsubnet-bbb  training" in info.value.message
    assert info.value.hint and "NPA_SUBNET_ID" in info.value.hint and info.value.exit_code == 2


def test_cli_preflight_with_only_the_profile_parent_id(
    tmp_path: Path, fake_nebius: FakeNebius, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """No tenant or project in npa's settings: the profile names the project, the project
    its tenant, and preflight reads both levels of quota."""
    import json

    from npa_sop_tui.cli.entry import main

    profile_with_parent(PROJECT)
    monkeypatch.setenv("NEBIUS_IAM_TOKEN", TOKEN)
    monkeypatch.setenv("NPA_NEBIUS_ENDPOINT", fake_nebius.endpoint)
    monkeypatch.setenv("NPA_REGION", REGION)
    spec = tmp_path / "c.yaml"
    spec.write_text(
        "apiVersion: npa.soperator/v0.0.1\nname: net\nworkers:\n  - {name: cpu, size: 1}\n"
    )
    assert main(["soperator", "preflight", "--spec", str(spec), "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {r["level"] for r in doc["rows"]} == {"tenant", "project"}


def test_environment_identity_asks_which_subnet(
    fake_nebius: FakeNebius, cloud_state: FakeCloudState, monkeypatch: pytest.MonkeyPatch
) -> None:
    from npa_sop_tui.environment import Environment
    from npa_sop_tui.home.settings import resolve_settings

    cloud_state.subnets = [("vpcsubnet-aaa", "default"), ("vpcsubnet-bbb", "training")]
    profile_with_parent(PROJECT)
    monkeypatch.setenv("NEBIUS_IAM_TOKEN", TOKEN)
    monkeypatch.setenv("NPA_NEBIUS_ENDPOINT", fake_nebius.endpoint)
    monkeypatch.setenv("NPA_REGION", REGION)
    env = Environment(resolve_settings({}))
    with pytest.raises(UsageError, match="has 2 VPC subnets") as info:
        env.identity(None)
    assert "vpcsubnet-bbb  training" in info.value.message
    cloud_state.subnets = cloud_state.subnets[:1]
    found = env.identity(None)
    assert (found.tenant_id, found.project_id, found.subnet_id) == (
        TENANT,
        PROJECT,
        "vpcsubnet-aaa",
    )


def test_a_failed_lookup_says_where_and_why_instead_of_asking_for_the_tenant(
    fake_nebius: FakeNebius, cloud_state: FakeCloudState, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Protects against a swallowed lookup error: the read's failure (address, status, the
    credentials used) is the error, with setting the value as the way round."""
    from npa_sop_tui.cloud.client import CloudError
    from npa_sop_tui.environment import Environment
    from npa_sop_tui.home.settings import resolve_settings

    cloud_state.errors["iam.v2.ProjectService/Get"] = "PERMISSION_DENIED"
    monkeypatch.setenv("NEBIUS_IAM_TOKEN", TOKEN)
    monkeypatch.setenv("NPA_NEBIUS_ENDPOINT", fake_nebius.endpoint)
    monkeypatch.setenv("NPA_REGION", REGION)
    monkeypatch.setenv("NPA_PROJECT_ID", PROJECT)
    with pytest.raises(CloudError) as info:
        Environment(resolve_settings({})).identity(None)
    message = info.value.message
    assert message.startswith(f"looking up the tenant of project {PROJECT} failed:")
    assert f"at {fake_nebius.addresses['cpl.iam']} failed: PERMISSION_DENIED" in message
    assert "(credentials: token in NEBIUS_IAM_TOKEN)" in message
    assert info.value.hint and "set tenant_id (NPA_TENANT_ID" in info.value.hint


@pytest.mark.slow
def test_an_unreachable_endpoint_ends_within_the_cloud_timeout_naming_the_address(
    tmp_path: Path, fake_nebius: FakeNebius, cloud_state: FakeCloudState,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """The identity lookup is built like every other read: `--cloud-timeout 8` against an
    address that never answers ends about 8 s after the same command against one that
    refuses at once (measured side by side: the rest is starting the SDK on a busy
    machine), naming the address, the credentials and the way round. It waited 66 s and
    blamed a missing tenant_id before."""
    import time

    from npa_sop_tui.cli.entry import main

    from testkit.silent_server import SilentServer

    spec = tmp_path / "c.yaml"
    spec.write_text(
        "apiVersion: npa.soperator/v0.0.1\nname: far\nworkers:\n  - {name: cpu, size: 1}\n"
    )
    argv = ["soperator", "preflight", "--spec", str(spec), "--cloud-timeout", "8"]
    for key, value in {"NEBIUS_IAM_TOKEN": TOKEN, "NPA_REGION": REGION,
                       "NPA_PROJECT_ID": PROJECT}.items():  # fmt: skip
        monkeypatch.setenv(key, value)

    def timed(endpoint: str) -> tuple[int, float, str]:
        monkeypatch.setenv("NPA_NEBIUS_ENDPOINT", endpoint)
        started = time.monotonic()
        code = main(argv)
        return code, time.monotonic() - started, capsys.readouterr().err

    cloud_state.errors["iam.v2.ProjectService/Get"] = "PERMISSION_DENIED"
    code, floor, err = timed(fake_nebius.endpoint)
    assert code == 1 and "PERMISSION_DENIED" in err, err
    with SilentServer() as silent:
        code, elapsed, err = timed(silent.address)
    assert code == 1, err
    assert elapsed - floor < 8 + 2, (elapsed, floor)
    assert f"looking up the tenant of project {PROJECT} failed" in err
    assert f"at {silent.address}: no answer within 8s" in err
    assert "token in NEBIUS_IAM_TOKEN" in err and "Traceback" not in err
