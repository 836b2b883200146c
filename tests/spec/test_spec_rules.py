"""Every validation rule, good and bad (validate.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from npa_sop_tui.spec.catalog import load_catalog
from npa_sop_tui.spec.findings import Finding
from npa_sop_tui.spec.model import SoperatorSpec
from npa_sop_tui.spec.validate import validate_spec
from npa_sop_tui.spec.validate_cluster import slug

from testkit.specs import KEY

BASE: dict[str, Any] = {
    "apiVersion": "npa.soperator/v0.0.1",
    "name": "demo",
    "region": "eu-north1",
    "workers": [{"name": "cpu", "preset": "16vcpu-64gb", "size": 2}],
}
GPU = {
    "name": "gpu",
    "platform": "gpu-h100-sxm",
    "preset": "8gpu-128vcpu-1600gb",
    "fabric": "fabric-3",
    "preemptible": True,
}


def spec_with(**changes: Any) -> SoperatorSpec:
    data = copy.deepcopy(BASE)
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return SoperatorSpec.model_validate(data)


def pool(**changes: Any) -> dict[str, Any]:
    out = {"name": "cpu", "preset": "16vcpu-64gb", "size": 2}
    out.update(changes)
    return out


def gpu(**changes: Any) -> dict[str, Any]:
    out = dict(GPU)
    out.update(changes)
    return {k: v for k, v in out.items() if v is not None}


def findings(spec: SoperatorSpec, **kw: Any) -> list[Finding]:
    return validate_spec(spec, **kw)


def errors_at(spec: SoperatorSpec, **kw: Any) -> dict[str, str]:
    return {f.path: f.message for f in findings(spec, **kw) if f.is_error}


def warnings_at(spec: SoperatorSpec, **kw: Any) -> dict[str, str]:
    return {f.path: f.message for f in findings(spec, **kw) if not f.is_error}


def test_base_spec_is_clean() -> None:
    assert findings(spec_with()) == []


@pytest.mark.parametrize("name", ["ab", "npasop", "a1", "my-cluster-2", "a" * 32])
def test_name_good(name: str) -> None:
    assert "name" not in errors_at(spec_with(name=name))


@pytest.mark.parametrize(
    "name", ["a", "Demo", "1abc", "abc-", "-abc", "a_b", "a" * 33, "", "ünïcode", "a b"]
)
def test_name_bad_cites_recipe_rule(name: str) -> None:
    message = errors_at(spec_with(name=name))["name"]
    assert "recipe's company_name rule" in message


def test_slug_suggestion_is_valid() -> None:
    for raw in ["My Cluster!", "9lives", "x", "A_B_C"]:
        suggestion = slug(raw)
        assert findings(spec_with(name=suggestion)) == [], suggestion


def test_region_unknown_with_did_you_mean() -> None:
    found = [f for f in findings(spec_with(region="eu-nort1")) if f.path == "region"]
    assert found and found[0].is_error and found[0].hint == "did you mean 'eu-north1'?"


def test_region_may_be_left_for_deploy() -> None:
    assert findings(spec_with(region=None)) == []


def test_system_min_and_max() -> None:
    bad = spec_with(control_plane={"system": {"min_size": 2}})
    assert "recipe rule" in errors_at(bad)["control_plane.system.min_size"]
    bad = spec_with(control_plane={"system": {"min_size": 5, "max_size": 4}})
    assert "control_plane.system.max_size" in errors_at(bad)
    good = spec_with(control_plane={"system": {"min_size": 5, "max_size": 5}})
    assert errors_at(good) == {}


def test_at_least_one_worker() -> None:
    assert "workers" in errors_at(spec_with(workers=[]))


@pytest.mark.parametrize(
    ("version", "apparmor", "ok"),
    [
        ("4.1.6", False, True),
        ("4.1.7", True, True),
        ("4.1.7", False, False),
        ("4.1.12", True, True),
        ("4.1.13", True, True),
        ("4.1.0", True, False),
        ("4.1.8", True, False),
        ("latest", True, False),
        ("v4.1.6", True, False),
    ],
)
def test_operator_versions(version: str, apparmor: bool, ok: bool) -> None:
    spec = spec_with(slurm_operator_version=version, use_default_apparmor_profile=apparmor)
    errs = errors_at(spec)
    bad = {"slurm_operator_version", "use_default_apparmor_profile"} & set(errs)
    assert (not bad) is ok, errs


def test_unsupported_version_lists_supported() -> None:
    spec = spec_with(slurm_operator_version="4.1.9")
    (found,) = [f for f in findings(spec) if f.path == "slurm_operator_version"]
    assert found.hint == "supported versions: 4.1.6, 4.1.7, 4.1.12, 4.1.13"


def test_k8s_version_rules() -> None:
    assert "k8s_version" in errors_at(spec_with(k8s_version="1"))
    assert "k8s_version" in errors_at(spec_with(k8s_version="v1.34"))
    # 4.1.12+ driver presets only know 1.35 and 1.36; the default follows the generation
    new = {"slurm_operator_version": "4.1.13", "use_default_apparmor_profile": True}
    assert errors_at(spec_with(**new)) == {}
    assert spec_with(**new).effective_k8s_version == "1.36"
    assert "driver_presets.tf" in errors_at(spec_with(**new, k8s_version="1.34"))["k8s_version"]
    assert errors_at(spec_with(**new, k8s_version="1.35")) == {}
    assert "node_group_version" in errors_at(spec_with(node_group_version="7 2"))


def test_ssh_key_rules() -> None:
    assert errors_at(spec_with(root_login_ssh_public_key=KEY)) == {}
    assert errors_at(spec_with(ssh_public_keys=[KEY])) == {}
    both = spec_with(root_login_ssh_public_key=KEY, ssh_public_keys=[KEY])
    assert "legacy alias" in errors_at(both)["ssh_public_keys"]
    two = spec_with(ssh_public_keys=[KEY, KEY])
    assert "exactly one" in errors_at(two)["ssh_public_keys"]
    cases = {
        "ssh-dss AAAA": "supported OpenSSH key type",
        'command="x" ' + KEY: "supported OpenSSH key type",
        "ssh-ed25519 !!!notbase64": "invalid base64",
        KEY + "\n" + KEY: "exactly one",
        "ssh-rsa " + KEY.split()[1]: "does not match its key type",
    }
    for key, needle in cases.items():
        message = errors_at(spec_with(root_login_ssh_public_key=key))
        assert needle in message["root_login_ssh_public_key"], key


def test_control_plane_presets() -> None:
    ok = spec_with(control_plane={"system": {"preset": "32vcpu-128gb"}})
    assert errors_at(ok) == {}
    unknown = spec_with(control_plane={"controller": {"preset": "16vcpu-64g"}})
    (found,) = [f for f in findings(unknown) if f.is_error]
    assert found.path == "control_plane.controller.preset"
    assert found.hint == "did you mean '16vcpu-64gb'?"
    login = spec_with(control_plane={"login": {"preset": "8vcpu-32gb"}})
    assert "recipe rule" in errors_at(login)["control_plane.login.preset"]
    # npa's tier minimum: system needs 16 vCPU at XS even though the recipe allows 8
    system = spec_with(control_plane={"system": {"preset": "8vcpu-32gb"}})
    assert "XS sizing" in errors_at(system)["control_plane.system.preset"]
    # accounting preset only checked when accounting is on
    acc = {"accounting": {"preset": "2vcpu-8gb"}}
    assert errors_at(spec_with(control_plane=acc)) == {}
    assert "control_plane.accounting.preset" in errors_at(
        spec_with(control_plane=acc, accounting=True)
    )


def test_control_plane_tier_minimum_grows_with_workers() -> None:
    big = [pool(size=60), pool(name="cpu2", size=50)]  # 110 workers → tier M
    spec = spec_with(workers=big, control_plane={"system": {"preset": "16vcpu-64gb"}})
    assert spec.sizing_tier == "M" and errors_at(spec) == {}
    spec = spec_with(workers=[pool(size=600)], control_plane={"system": {"preset": "16vcpu-64gb"}})
    assert spec.sizing_tier == "L"
    assert "L sizing" in errors_at(spec)["control_plane.system.preset"]


def test_rest_requires_accounting() -> None:
    assert "slurm_rest_enabled" in errors_at(spec_with(slurm_rest_enabled=True))
    assert errors_at(spec_with(slurm_rest_enabled=True, accounting=True)) == {}
    assert errors_at(spec_with(slurm_rest_enabled=False, accounting=True)) == {}


def test_jail_size() -> None:
    assert "jail_size_gib" in errors_at(spec_with(jail_size_gib=0))


def test_pool_names() -> None:
    dup = spec_with(workers=[pool(), pool()])
    assert "duplicate worker pool name" in errors_at(dup)["workers[1].name"]
    for bad in ["CPU", "cpu_1", "-a", "a" * 41, "1a"]:
        assert "workers[0].name" in errors_at(spec_with(workers=[pool(name=bad)])), bad
    assert errors_at(spec_with(workers=[pool(name="cpu-a1")])) == {}


def test_pool_size_and_boot_disk() -> None:
    assert "workers[0].size" in errors_at(spec_with(workers=[pool(size=0)]))
    assert (
        "npa rule"
        in errors_at(spec_with(workers=[pool(boot_disk_gib=256)]))["workers[0].boot_disk_gib"]
    )
    assert errors_at(spec_with(workers=[pool(boot_disk_gib=512)])) == {}


def test_an_unusually_large_pool_warns_without_refusing() -> None:
    """A 10 000-node pool (a stray digit) validated silently and priced $35,401/day."""
    from npa_sop_tui.spec.validate_workers import LARGE_POOL

    huge = spec_with(workers=[pool(size=10_000)])
    assert errors_at(huge) == {}
    assert "10000 nodes in one pool" in warnings_at(huge)["workers[0].size"]
    assert findings(spec_with(workers=[pool(size=LARGE_POOL)])) == []
    assert "workers[0].size" in warnings_at(spec_with(workers=[pool(size=LARGE_POOL + 1)]))


def test_platform_and_preset_against_catalog() -> None:
    found = findings(spec_with(workers=[pool(platform="cpu-d4")]))
    (bad,) = [f for f in found if f.is_error]
    assert bad.path == "workers[0].platform" and bad.hint == "did you mean 'cpu-d3'?"
    wrong_region = spec_with(region="eu-west2", workers=[gpu(fabric="eu-west2-a")])
    assert "not offered in eu-west2" in errors_at(wrong_region)["workers[0].platform"]
    bad_preset = spec_with(workers=[pool(preset="16vcpu-64")])
    assert "workers[0].preset" in errors_at(bad_preset)
    too_small = spec_with(workers=[pool(preset="2vcpu-8gb")])
    assert "insufficient" in errors_at(too_small)["workers[0].preset"]
    e2 = spec_with(workers=[pool(platform="cpu-e2", preset="4vcpu-16gb")])
    assert "insufficient" in errors_at(e2)["workers[0].preset"]
    assert errors_at(spec_with(workers=[pool(platform="cpu-e2", preset="8vcpu-32gb")])) == {}


def test_mixed_architectures() -> None:
    spec = spec_with(
        workers=[
            gpu(name="gb", platform="gpu-gb300", preset="4gpu-112vcpu-800gb"),
            pool(),
        ]
    )
    assert "architectures" in errors_at(spec)["workers"]


def test_fabric_rules() -> None:
    assert (
        "CPU pools must not set"
        in errors_at(spec_with(workers=[pool(fabric="fabric-3")]))["workers[0].fabric"]
    )
    no_fabric = spec_with(workers=[gpu(fabric=None)])
    (found,) = [f for f in findings(no_fabric) if f.is_error]
    assert found.path == "workers[0].fabric" and "fabric-3" in (found.hint or "")
    # 1-GPU presets cannot cluster: no fabric needed, a fabric is ignored with a warning
    one = gpu(preset="1gpu-16vcpu-200gb", fabric=None)
    assert errors_at(spec_with(workers=[one])) == {}
    one_fab = spec_with(workers=[gpu(preset="1gpu-16vcpu-200gb")])
    assert "ignored" in warnings_at(one_fab)["workers[0].fabric"]
    # known: clean; plausible: warning; other region: error; nonsense: error
    assert findings(spec_with(workers=[gpu()])) == []
    assert "workers[0].fabric" in warnings_at(spec_with(workers=[gpu(fabric="fabric-9")]))
    other = spec_with(workers=[gpu(fabric="eu-north2-a")])
    assert "belongs to region eu-north2" in errors_at(other)["workers[0].fabric"]
    nonsense = spec_with(workers=[gpu(fabric="Fabric 3!")])
    assert "does not look like" in errors_at(nonsense)["workers[0].fabric"]


def test_capacity_rules() -> None:
    both = gpu(
        preemptible=False,
        capacity_block_group="capacityblockgroup-a",
        capacity_block_group_name="n",
    )
    assert (
        "set only one"
        in errors_at(spec_with(workers=[both]))["workers[0].capacity_block_group_name"]
    )
    cpu = pool(capacity_block_group_name="n")
    assert "only for GPU" in errors_at(spec_with(workers=[cpu]))["workers[0].capacity_block_group"]
    pre = gpu(capacity_block_group_name="n")
    assert "mutually exclusive" in errors_at(spec_with(workers=[pre]))["workers[0].preemptible"]
    named = gpu(preemptible=False, capacity_block_group_name="my-block")
    assert findings(spec_with(workers=[named])) == []
    with_id = gpu(preemptible=False, capacity_block_group="capacityblockgroup-x")
    warns = warnings_at(spec_with(workers=[with_id]))
    assert "written in the spec" in warns["workers[0].capacity_block_group"]
    odd = gpu(preemptible=False, capacity_block_group="cbg-x")
    assert any("start with" in f.message for f in findings(spec_with(workers=[odd])))


def test_on_demand_gpu_warns_unless_reserved_at_run_time() -> None:
    spec = spec_with(workers=[gpu(preemptible=False)])
    assert "quota is often 0" in warnings_at(spec)["workers[0]"]
    assert findings(spec, capacity={"gpu": "capacityblockgroup-x"}) == []


def test_gpu_pools_should_come_first() -> None:
    spec = spec_with(workers=[pool(), gpu()])
    assert "GPU pools first" in warnings_at(spec)["workers[0]"]
    assert findings(spec_with(workers=[gpu(), pool()])) == []


def test_docker_cache_rules() -> None:
    assert errors_at(spec_with(workers=[pool(docker_cache=True, docker_cache_gib=930)])) == {}
    bad = spec_with(workers=[pool(docker_cache=True, docker_cache_gib=900)])
    (found,) = [f for f in findings(bad) if f.is_error]
    assert found.path == "workers[0].docker_cache_gib" and found.hint == "use 837 or 930"
    assert errors_at(spec_with(workers=[pool(docker_cache=False, docker_cache_gib=0)])) == {}
    assert "workers[0].docker_cache_gib" in errors_at(
        spec_with(workers=[pool(docker_cache=True, docker_cache_gib=0)])
    )
    wrong = spec_with(workers=[pool(docker_cache=True, docker_cache_disk_type="NETWORK_SSD")])
    assert "workers[0].docker_cache_disk_type" in errors_at(wrong)


def test_catalog_tiers_and_fabrics() -> None:
    cat = load_catalog()
    tiers = {n: cat.sizing_tier(n).name for n in (0, 9, 10, 99, 100, 499, 500, 1999, 2000)}
    assert tiers == {
        0: "XS",
        9: "XS",
        10: "S",
        99: "S",
        100: "M",
        499: "M",
        500: "L",
        1999: "L",
        2000: "XL",
    }
    assert cat.tier("XS").presets["system"] == "16vcpu-64gb"
    assert cat.fabric_status("us-central1", "us-central1-a") == "known"
    assert cat.fabric_status("us-central1", "us-central1-b") == "unverified"
    assert cat.fabric_status("us-central1", "us-central1-c") == "plausible"
    assert cat.fabric_status("us-central1", "fabric-3") == "other-region:eu-north1"
    assert cat.fabric_status("us-central1", "x y") == "unknown"
    assert load_catalog() is cat  # parsed once


def test_gb300_pools_need_whole_racks_and_local_nvme_layout() -> None:
    gb = gpu(name="gb", platform="gpu-gb300", preset="4gpu-112vcpu-800gb", size=20)
    errors = errors_at(spec_with(workers=[gb], slurm_operator_version="4.1.13"))
    assert "racks of 18" in errors["workers[0].size"]
    assert "local NVMe" in errors["workers[0].local_nvme_device_count"]
    ok = gpu(
        name="gb",
        platform="gpu-gb300",
        preset="4gpu-112vcpu-800gb",
        size=36,
        local_nvme_device_count=4,
        local_nvme_device_gb=3840,
    )
    assert not {k for k in errors_at(spec_with(workers=[ok])) if k.startswith("workers")}


def test_identity_ids_must_have_their_kind_prefix() -> None:
    good = spec_with(
        tenant_id="tenant-e00abc", project_id="project-e00abc", subnet_id="vpcsubnet-e00abc"
    )
    assert errors_at(good) == {}
    bad = errors_at(spec_with(tenant_id="e00abc", project_id="tenant-x", subnet_id="subnet-1"))
    assert bad == {
        "tenant_id": "tenant_id 'e00abc' must start with 'tenant-'",
        "project_id": "project_id 'tenant-x' must start with 'project-'",
        "subnet_id": "subnet_id 'subnet-1' must start with 'vpcsubnet-'",
    }
    hint = next(f.hint for f in findings(spec_with(subnet_id="s")) if f.path == "subnet_id")
    assert hint is not None and "vpcsubnet-e00…" in hint
