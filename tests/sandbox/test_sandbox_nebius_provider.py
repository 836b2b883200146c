"""The stand-in nebius/nebius provider: its protocol pieces (handshake, schema, plan with an
unknown ID, apply create/delete) and a real Terraform run of one filesystem with local state."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import msgspec
import pytest

from npa_sop_tui.sandbox.nebius_provider import filesystem as fs
from npa_sop_tui.sandbox.nebius_provider import server, values
from npa_sop_tui.sandbox.nebius_provider.messages import HEALTH_SERVING, M
from npa_sop_tui.sandbox.nebius_provider.mirror import VERSION, install

# --- values and the resource's logic ----------------------------------------------------------


def test_unknown_is_written_as_cty_does_and_any_extension_reads_as_unknown() -> None:
    assert values.encode(values.UNKNOWN) == b"\xd4\x00\x00"
    refined = msgspec.msgpack.encode(msgspec.msgpack.Ext(12, b"\x81\x01\xc2"))
    dv = M["DynamicValue"](msgpack=msgspec.msgpack.encode({"id": msgspec.msgpack.Ext(0, b"")}))
    assert values.decode(dv) == {"id": values.UNKNOWN}
    assert values.decode(M["DynamicValue"](msgpack=refined)) is values.UNKNOWN
    assert values.decode(M["DynamicValue"](json=b'{"a": null}')) == {"a": None}
    assert values.decode(M["DynamicValue"]()) is None


def config(**changes: Any) -> dict[str, Any]:
    base = {name: None for name in fs.NAMES}
    base.update(parent_id="project-a", name="soperator-x-jail", type="NETWORK_SSD",
                size_bytes=2**30, block_size_bytes=4096)  # fmt: skip
    base.update(changes)
    return base


def test_plan_of_a_new_filesystem_leaves_its_id_and_status_unknown() -> None:
    planned, replace, refused = fs.plan(None, config())
    assert planned is not None and planned["id"] is values.UNKNOWN and replace == refused == []
    assert planned["status"] is values.UNKNOWN and planned["name"] == "soperator-x-jail"


def test_plan_keeps_the_id_grows_in_place_and_replaces_on_a_new_name() -> None:
    prior = config(id="computefilesystem-1", status=fs.status("READY", 2**30))
    planned, replace, _ = fs.plan(prior, config(id="computefilesystem-1", size_bytes=2**31))
    assert planned is not None and (planned["id"], replace) == ("computefilesystem-1", [])
    assert planned["status"] is values.UNKNOWN  # the size it will report is the new one
    planned, replace, _ = fs.plan(prior, config(id="computefilesystem-1", name="other"))
    assert planned is not None and planned["id"] is values.UNKNOWN and replace == ["name"]
    assert fs.plan(prior, None) == (None, [], [])


class Recording:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def create(self, state: dict[str, Any]) -> str:
        self.calls.append(("create", state["name"]))
        return "computefilesystem-new"

    def delete(self, fs_id: str) -> None:
        self.calls.append(("delete", fs_id))

    def resize(self, fs_id: str, size_bytes: int) -> None:
        self.calls.append(("resize", fs_id))

    def get(self, fs_id: str) -> Any:
        return fs.CANNOT_TELL


def test_apply_creates_with_the_clouds_id_and_deletes_by_id() -> None:
    cloud = Recording()
    planned, _, _ = fs.plan(None, config())
    created = fs.apply(None, planned, cloud)
    assert created is not None and created["id"] == "computefilesystem-new"
    assert fs.apply(created, None, cloud) is None
    assert cloud.calls == [("create", "soperator-x-jail"), ("delete", "computefilesystem-new")]


def test_the_sandbox_cloud_and_the_fake_nebius_agree_on_ids() -> None:
    from npa_sop_tui.sandbox.fake_cloud_state import default_state

    state = default_state(project_id="project-a")
    state.create_cluster("x")
    assert fs.DerivedCloud().create(config()) in state.filesystems


def test_validate_wants_exactly_one_size() -> None:
    assert fs.validate(config()) == []
    assert fs.validate(config(size_bytes=None)) == [
        "one of size_bytes or size_gibibytes must be set"
    ]
    assert "mutually exclusive" in fs.validate(config(size_gibibytes=1))[0]
    assert fs.validate(config(size_bytes=values.UNKNOWN)) == []


# --- the process: handshake, health, schema, shutdown --------------------------------------


@pytest.fixture
def plugin(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], list[str], Any]]:
    client_pem, client_key, _ = server.server_certificate()
    executable = install(tmp_path / "mirror")
    env = {
        **os.environ,
        server.MAGIC_COOKIE_KEY: server.MAGIC_COOKIE_VALUE,
        "PLUGIN_PROTOCOL_VERSIONS": "5,6",
        "PLUGIN_CLIENT_CERT": client_pem.decode(),
    }
    proc = subprocess.Popen([str(executable)], env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    parts = proc.stdout.readline().strip().split("|")
    cert_pem = (
        b"-----BEGIN CERTIFICATE-----\n"
        + base64.encodebytes(base64.b64decode(parts[5] + "=" * (-len(parts[5]) % 4)))
        + b"-----END CERTIFICATE-----\n"
    )
    creds = grpc.ssl_channel_credentials(cert_pem, client_key, client_pem)
    channel = grpc.secure_channel(
        parts[3], creds, options=[("grpc.ssl_target_name_override", "localhost")]
    )
    try:
        yield proc, parts, channel
    finally:
        channel.close()
        proc.kill()
        proc.wait()


def call(channel: Any, path: str, request: Any, response: str | None) -> Any:
    method = channel.unary_unary(
        path,
        request_serializer=(lambda m: m)
        if isinstance(request, bytes)
        else type(request).SerializeToString,
        response_deserializer=M[response].FromString if response else None,
    )
    return method(request, timeout=10)


def test_handshake_line_health_schema_and_shutdown(plugin: Any) -> None:
    proc, parts, channel = plugin
    assert parts[:3] == ["1", "5", "tcp"] and parts[3].startswith("127.0.0.1:")
    assert parts[4] == "grpc" and "=" not in parts[5]  # DER, base64 without padding
    assert call(channel, "/grpc.health.v1.Health/Check", b"\n\x06plugin", None) == HEALTH_SERVING
    schema = call(channel, "/tfplugin5.Provider/GetSchema", M["Empty"](), "GetSchemaResponse")
    (entry,) = schema.resource_schemas
    assert entry.key == "nebius_compute_v1_filesystem"
    attrs = {a.name: a for a in entry.value.block.attributes}
    assert attrs["id"].computed and not attrs["id"].optional
    assert attrs["parent_id"].required and json.loads(attrs["labels"].type) == ["map", "string"]
    plan = call(
        channel,
        "/tfplugin5.Provider/PlanResourceChange",
        M["PlanRequest"](
            type_name="nebius_compute_v1_filesystem",
            prior_state=M["DynamicValue"](msgpack=values.encode(None)),
            proposed_new_state=M["DynamicValue"](msgpack=values.encode(config())),
        ),
        "PlanResponse",
    )
    assert values.decode(plan.planned_state)["id"] is values.UNKNOWN

    def apply(prior: Any, planned: Any) -> Any:
        request = M["ApplyRequest"](
            type_name="nebius_compute_v1_filesystem",
            prior_state=M["DynamicValue"](msgpack=values.encode(prior)),
            planned_state=planned,
        )
        return call(channel, "/tfplugin5.Provider/ApplyResourceChange", request, "ApplyResponse")

    created = values.decode(apply(None, plan.planned_state).new_state)
    assert created["id"] == fs.filesystem_id("project-a", "soperator-x-jail")
    assert created["size_bytes"] == 2**30
    gone = apply(created, M["DynamicValue"](msgpack=values.encode(None)))
    assert values.decode(gone.new_state) is None and not gone.diagnostics
    call(channel, "/plugin.GRPCController/Shutdown", b"", None)
    assert proc.wait(timeout=10) == 0


def test_ctrl_c_is_left_to_terraform(plugin: Any) -> None:
    """SIGINT reaches the whole process group; the plugin keeps serving until Shutdown."""
    import signal

    proc, _, channel = plugin
    proc.send_signal(signal.SIGINT)
    time.sleep(0.3)
    assert proc.poll() is None
    assert call(channel, "/grpc.health.v1.Health/Check", b"", None) == HEALTH_SERVING
    call(channel, "/plugin.GRPCController/Shutdown", b"", None)
    assert proc.wait(timeout=10) == 0


def test_refuses_to_run_outside_terraform(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != server.MAGIC_COOKIE_KEY}
    run = subprocess.run([str(install(tmp_path))], env=env, capture_output=True, text=True)
    assert run.returncode == 1 and run.stdout == ""
    assert "Terraform starts it" in run.stderr


# --- real Terraform: init, apply, no-change plan, destroy ------------------------------------

MAIN_TF = """
terraform {
  required_providers {
    nebius = { source = "nebius/nebius", version = "%s" }
  }
}
resource "nebius_compute_v1_filesystem" "jail" {
  parent_id        = "project-a"
  name             = "soperator-x-jail"
  type             = "NETWORK_SSD"
  size_bytes       = 1024 * 1024 * 1024
  block_size_bytes = 4096
}
output "id" { value = nebius_compute_v1_filesystem.jail.id }
"""


def terraform_folder(tmp_path: Path) -> tuple[Path, Path]:
    """A folder with MAIN_TF and a CLI config that finds the stand-in in a mirror."""
    mirror = tmp_path / "mirror"
    install(mirror)
    rc = tmp_path / "terraformrc"
    rc.write_text(
        "provider_installation {\n"
        f'  filesystem_mirror {{\n    path = "{mirror}"\n    include = ["nebius/nebius"]\n  }}\n'
        '  direct { exclude = ["nebius/nebius"] }\n}\n'
    )
    work = tmp_path / "work"
    work.mkdir()
    (work / "main.tf").write_text(MAIN_TF % VERSION)
    return work, rc


@pytest.mark.terraform
def test_terraform_plans_applies_and_destroys_a_filesystem(tmp_path: Path) -> None:
    from npa_sop_tui.sandbox.local_terraform import terraform_binary

    work, rc = terraform_folder(tmp_path)
    env = {**os.environ, "TF_CLI_CONFIG_FILE": str(rc), "CHECKPOINT_DISABLE": "1"}
    tf = terraform_binary()

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([tf, *args, "-no-color"], cwd=work, env=env, capture_output=True,
                              text=True, timeout=120)  # fmt: skip

    started = time.monotonic()
    assert run("init", "-input=false").returncode == 0
    applied = run("apply", "-auto-approve", "-input=false")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    state = json.loads((work / "terraform.tfstate").read_text())
    (resource,) = state["resources"]
    attrs = resource["instances"][0]["attributes"]
    assert resource["type"] == "nebius_compute_v1_filesystem"
    assert attrs["id"] == fs.filesystem_id("project-a", "soperator-x-jail")
    assert attrs["size_bytes"] == 2**30 and attrs["block_size_bytes"] == 4096
    again = run("plan", "-detailed-exitcode", "-input=false")
    assert again.returncode == 0, again.stdout + again.stderr  # 0: no changes
    destroyed = run("destroy", "-auto-approve", "-input=false")
    assert destroyed.returncode == 0, destroyed.stdout + destroyed.stderr
    assert json.loads((work / "terraform.tfstate").read_text())["resources"] == []
    print(f"init+apply+plan+destroy: {time.monotonic() - started:.1f} s", file=sys.stderr)


# --- through the official SDK to the fake Nebius ---------------------------------------------


def test_sdk_cloud_creates_and_deletes_in_the_fake_nebius() -> None:
    from npa_sop_tui.sandbox.fake_cloud_state import default_state
    from npa_sop_tui.sandbox.fake_nebius import FakeNebius
    from npa_sop_tui.sandbox.nebius_provider.sdk_cloud import SdkCloud

    state = default_state(project_id="project-a")
    state.token = "provider-token"
    with FakeNebius(state) as fake:
        cloud = SdkCloud(fake.endpoint, "provider-token")
        fs_id = cloud.create(config(labels={"team": "a"}))
        assert fs_id == fs.filesystem_id("project-a", "soperator-x-jail")
        assert state.filesystems[fs_id].name == "soperator-x-jail"
        with pytest.raises(Exception, match="already exists"):
            cloud.create(config())
        state.scenario = frozenset({"destroy-leftover"})
        cloud.delete(fs_id)  # the operation succeeds ...
        assert fs_id in state.filesystems  # ... and the cloud keeps it
        state.scenario = frozenset()
        cloud.delete(fs_id)
        assert fs_id not in state.filesystems
        with pytest.raises(Exception, match="not found"):
            cloud.delete(fs_id)


@pytest.mark.terraform
def test_terraform_creates_the_filesystem_in_the_fake_nebius(tmp_path: Path) -> None:
    """Terraform → stand-in provider → SDK → fake Nebius: the fake holds what Terraform
    recorded, and a destroy Terraform sees succeed can leave it there (destroy-leftover)."""
    from npa_sop_tui.sandbox.fake_cloud_state import default_state
    from npa_sop_tui.sandbox.fake_nebius import FakeNebius
    from npa_sop_tui.sandbox.local_terraform import terraform_binary
    from npa_sop_tui.sandbox.nebius_provider.sdk_cloud import ENDPOINT_ENV, TOKEN_ENV

    work, rc = terraform_folder(tmp_path)
    state = default_state(project_id="project-a")
    state.token = "tf-token"
    with FakeNebius(state) as fake:
        env = {**os.environ, "TF_CLI_CONFIG_FILE": str(rc), "CHECKPOINT_DISABLE": "1",
               ENDPOINT_ENV: fake.endpoint, TOKEN_ENV: "tf-token"}  # fmt: skip

        def run(*args: str) -> None:
            done = subprocess.run([terraform_binary(), *args, "-no-color"], cwd=work, env=env,
                                  capture_output=True, text=True, timeout=180)  # fmt: skip
            assert done.returncode == 0, done.stdout + done.stderr

        run("init", "-input=false")
        run("apply", "-auto-approve", "-input=false")
        recorded = json.loads((work / "terraform.tfstate").read_text())["resources"]
        fs_id = recorded[0]["instances"][0]["attributes"]["id"]
        assert state.filesystems[fs_id].name == "soperator-x-jail"
        state.scenario = frozenset({"destroy-leftover"})
        run("destroy", "-auto-approve", "-input=false")
        assert json.loads((work / "terraform.tfstate").read_text())["resources"] == []
        assert fs_id in state.filesystems
