"""Rendering: golden tfvars per supported recipe version, and the recipe's rules."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home.capacity import capacity_from_env, parse_capacity_assignments
from npa_sop_tui.home.config import Identity
from npa_sop_tui.recipe.render import TFVARS_FILE, recipe_problems, render
from npa_sop_tui.spec.model import SoperatorSpec, SpecError, load_spec, parse_spec_text

from testkit.specs import ASSETS, KEY, KEY_FP, MINIMAL

GOLDEN = Path(__file__).resolve().parent / "golden"
# Read at import: the isolation fixture strips NPA_* from the environment tests run in.
UPDATE_GOLDEN = bool(os.environ.get("NPA_UPDATE_GOLDEN"))
CAPACITY = {"h200": "capacityblockgroup-test0001"}


def _example(version: str) -> SoperatorSpec:
    text = (ASSETS / "cluster.yaml").read_text()
    if version == "4.1.6":
        return parse_spec_text(text).spec
    text = text.replace('slurm_operator_version: "4.1.6"', f'slurm_operator_version: "{version}"')
    text += "use_default_apparmor_profile: true\n"
    if version in ("4.1.12", "4.1.13"):
        text = text.replace('k8s_version: "1.34"', 'k8s_version: "1.36"')
        text = text.replace('node_group_version: "72"', 'node_group_version: "75"')
    return parse_spec_text(text).spec


CASES = {
    "cluster-4.1.6": lambda: (_example("4.1.6"), None),
    "cluster-4.1.7": lambda: (_example("4.1.7"), None),
    "cluster-4.1.12": lambda: (_example("4.1.12"), None),
    "cluster-4.1.13": lambda: (_example("4.1.13"), None),
    "gpu-reserved-4.1.13": lambda: (load_spec(ASSETS / "gpu-reserved.yaml").spec, CAPACITY),
    "cpu-minimal-4.1.6": lambda: (load_spec(ASSETS / "cpu-minimal.yaml").spec, None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case: str) -> None:
    spec, capacity = CASES[case]()
    rendered = render(spec, capacity=capacity, root_login_key=KEY)
    golden = GOLDEN / f"{case}.tfvars.json"
    if UPDATE_GOLDEN:
        golden.write_text(rendered.tfvars_json())
    assert rendered.tfvars_json() == golden.read_text(), f"update with NPA_UPDATE_GOLDEN=1 ({case})"
    assert recipe_problems(rendered.tfvars, rendered.recipe_version) == []


def test_issue_example_follows_the_mapping() -> None:
    r = render(_example("4.1.6"), root_login_key=KEY)
    tv = r.tfvars
    assert (r.kube_context, r.sizing_tier, r.recipe_version) == (
        "nebius-npasop-slurm",
        "XS",
        "4.1.6",
    )
    assert tv["company_name"] == "npasop"
    assert (tv["k8s_version"], tv["node_group_version"]) == ("1.34", "72")  # quoted strings
    workers = tv["slurm_nodeset_workers"]
    assert [w["name"] for w in workers] == ["gpu", "cpu8"]  # GPU first: CUDA lookup uses [0]
    gpu, cpu = workers
    assert gpu["gpu_cluster"] == {"infiniband_fabric": "us-central1-a"}
    assert gpu["preemptible"] == {} and gpu["reservation_policy"] is None
    assert gpu["size"] == 2 and gpu["autoscaling"] == {"enabled": False}
    assert gpu["node_local_image_disk"] == {
        "enabled": True,
        "spec": {
            "size_gibibytes": 372,
            "filesystem_type": "ext4",
            "disk_type": "NETWORK_SSD_IO_M3",
        },
    }
    assert cpu["gpu_cluster"] is None and cpu["preemptible"] is None
    assert cpu["node_local_image_disk"]["spec"]["size_gibibytes"] == 930
    assert tv["slurm_nodeset_system"]["resource"] == {"platform": "cpu-d3", "preset": None}
    assert tv["slurm_nodeset_system"]["max_size"] == 24
    assert tv["slurm_nodeset_login"]["resource"]["preset"] == "16vcpu-64gb"
    assert [p["name"] for p in tv["slurm_nodesets_partitions"]] == ["main", "hidden"]
    assert all(p["topology"] == "flat" for p in tv["slurm_nodesets_partitions"])
    assert tv["accounting_enabled"] is False and tv["slurm_rest_enabled"] is False
    assert tv["filestore_accounting"] is None and tv["slurm_nodeset_nfs"] is None
    assert tv["nfs_in_k8s"]["disk_type"] == "NETWORK_SSD_IO_M3"  # 4.1.6 lower() caveat
    assert tv["active_checks_scope"] == "essential"
    assert tv["slurm_login_ssh_root_public_keys"] == [KEY]
    assert r.root_key_fingerprint == KEY_FP
    assert not {"region", "iam_tenant_id", "iam_project_id", "vpc_subnet_id"} & set(tv)
    assert r.secrets == []


def test_new_shapes_for_4_1_12_and_later() -> None:
    old = render(_example("4.1.6"), root_login_key=KEY).tfvars
    for version in ("4.1.12", "4.1.13"):
        tv = render(_example(version), root_login_key=KEY).tfvars
        assert "filestore_jail" not in tv and "slurm_nodeset_nfs" not in tv
        assert tv["filesystem_jail"]["spec"]["type"] == "NETWORK_SSD"
        assert tv["filesystem_jail"]["spec"]["size_gibibytes"] == 512
        assert tv["nfs"] == {"enabled": False} and tv["nfs_in_k8s"] == {"enabled": False}
        # 4.1.12's main.tf reads the spool without a null guard; 4.1.13 makes it optional.
        spool = tv["filestore_controller_spool"]
        if version == "4.1.12":
            assert spool == {
                "spec": {
                    "size_gibibytes": 128,
                    "block_size_kibibytes": 4,
                    "forbid_deletion": False,
                }
            }
        else:
            assert spool is None
        assert ("cloud_environment" in tv) is (version == "4.1.13")
    assert "filestore_jail" in old and "filesystem_jail" not in old


def test_one_gpu_pool_gets_no_gpu_cluster() -> None:
    text = MINIMAL.replace("region: eu-north1", "region: eu-north1").replace(
        "  - name: cpu\n",
        "  - name: one\n    platform: gpu-h100-sxm\n    preset: 1gpu-16vcpu-200gb\n"
        "    fabric: fabric-3\n    preemptible: true\n  - name: cpu\n",
    )
    tv = render(parse_spec_text(text).spec, root_login_key=KEY).tfvars
    assert tv["slurm_nodeset_workers"][0]["gpu_cluster"] is None


def test_reserved_capacity_renders_strict_and_lists_secret() -> None:
    spec = load_spec(ASSETS / "gpu-reserved.yaml").spec
    r = render(spec, capacity=CAPACITY, root_login_key=KEY)
    h200 = r.tfvars["slurm_nodeset_workers"][0]
    assert h200["reservation_policy"] == {
        "policy": "STRICT",
        "reservation_ids": ["capacityblockgroup-test0001"],
    }
    assert h200["preemptible"] is None
    assert r.secrets == ["capacityblockgroup-test0001"]
    assert "capacityblockgroup-test0001" not in r.redact(r.tfvars_json())


def test_name_selector_must_be_resolved_first() -> None:
    cache = "    docker_cache: true\n    docker_cache_gib: 930\n"
    text = (ASSETS / "gpu-reserved.yaml").read_text()
    text = text.replace(cache, cache + "    capacity_block_group_name: blk\n", 1)
    spec = parse_spec_text(text).spec
    with pytest.raises(UsageError, match="must be resolved to an ID before rendering"):
        render(spec, root_login_key=KEY)
    r = render(spec, capacity=CAPACITY, root_login_key=KEY)  # run-time ID resolves it
    assert r.tfvars["slurm_nodeset_workers"][0]["reservation_policy"]["policy"] == "STRICT"


@pytest.mark.parametrize(
    ("capacity", "needle"),
    [
        ({"nope": "capacityblockgroup-1"}, "unknown worker pool"),
        ({"cpu": "capacityblockgroup-1"}, "only for GPU pools"),
    ],
)
def test_run_time_capacity_checks(capacity: dict[str, str], needle: str) -> None:
    spec = load_spec(ASSETS / "gpu-reserved.yaml").spec
    with pytest.raises(UsageError, match=needle):
        render(spec, capacity=capacity, root_login_key=KEY)


def test_run_time_capacity_refused_for_preemptible_pool() -> None:
    with pytest.raises(UsageError, match="mutually exclusive"):
        render(_example("4.1.6"), capacity={"gpu": "capacityblockgroup-1"}, root_login_key=KEY)


def test_parse_capacity_assignments() -> None:
    assert parse_capacity_assignments(None) == {}
    assert parse_capacity_assignments(["a=capacityblockgroup-1", " b = capacityblockgroup-2 "]) == {
        "a": "capacityblockgroup-1",
        "b": "capacityblockgroup-2",
    }
    assert parse_capacity_assignments("a=capacityblockgroup-1,,b=capacityblockgroup-2") == {
        "a": "capacityblockgroup-1",
        "b": "capacityblockgroup-2",
    }
    for bad in (["a"], ["=capacityblockgroup-1"], ["a="]):
        with pytest.raises(UsageError, match="POOL=ID"):
            parse_capacity_assignments(bad)
    with pytest.raises(UsageError) as info:
        parse_capacity_assignments(["a=my-secret-name"])
    assert "my-secret-name" not in info.value.render()
    with pytest.raises(UsageError, match="two different"):
        parse_capacity_assignments(["a=capacityblockgroup-1", "a=capacityblockgroup-2"])
    env = {"NPA_CAPACITY_BLOCK_GROUPS": "h200=capacityblockgroup-9"}
    assert capacity_from_env(env) == {"h200": "capacityblockgroup-9"}


def test_unsupported_recipe_version_lists_supported() -> None:
    with pytest.raises(UsageError) as info:
        render(_example("4.1.6"), recipe_version="4.1.9", root_login_key=KEY)
    assert info.value.hint == "supported versions: 4.1.6, 4.1.7, 4.1.12, 4.1.13"
    with pytest.raises(UsageError, match="differs"):
        render(_example("4.1.6"), recipe_version="4.1.7", root_login_key=KEY)


def test_render_refuses_invalid_spec() -> None:
    spec = SoperatorSpec(name="demo")  # no workers
    with pytest.raises(SpecError, match="at least one worker pool"):
        render(spec, root_login_key=KEY)


def test_a_spec_as_deployed_renders_without_todays_spec_rules() -> None:
    """Protects destroying what an older npa deployed: with validate=False a spec breaking
    a rule npa added since (a 256 GiB boot disk) still renders, with the disk as deployed;
    by default the same spec is refused."""
    spec = _example("4.1.6")
    older = spec.model_copy(
        update={"workers": [spec.workers[0].model_copy(update={"boot_disk_gib": 256})]}
    )
    with pytest.raises(SpecError, match="boot_disk_gib"):
        render(older, root_login_key=KEY)
    as_deployed = render(older, root_login_key=KEY, validate=False)
    first = as_deployed.tfvars["slurm_nodeset_workers"][0]
    assert first["boot_disk"]["size_gibibytes"] == 256


def test_env_carries_identity_not_the_file() -> None:
    ident = Identity(
        region="eu-north1",
        tenant_id="tenant-abc",
        project_id="project-def",
        subnet_id="vpcsubnet-ghi",
    )
    r = render(parse_spec_text(MINIMAL).spec, identity=ident, root_login_key=KEY)
    assert r.env == {
        "TF_VAR_region": "eu-north1",
        "TF_VAR_iam_tenant_id": "tenant-abc",
        "TF_VAR_iam_project_id": "project-def",
        "TF_VAR_vpc_subnet_id": "vpcsubnet-ghi",
        # The Nebius o11y tenant of the upstream .envrc, not the cluster's tenant.
        "TF_VAR_o11y_iam_tenant_id": "tenant-e00vyb5y1x5vqkzw5e",
        "TF_VAR_o11y_profile": "",
    }
    assert set(r.env) == set(r.env_names)
    assert "tenant-abc" not in r.tfvars_json()


def test_telemetry_turns_on_o11y_with_a_profile() -> None:
    r = render(parse_spec_text(MINIMAL + "telemetry: true\n").spec, root_login_key=KEY)
    assert r.tfvars["public_o11y_enabled"] is True
    assert r.env["TF_VAR_o11y_profile"] == "soperator-telemetry"


def test_root_key_resolution_inside_render(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    spec = parse_spec_text(MINIMAL).spec
    with pytest.raises(UsageError, match="requires one SSH public key"):
        render(spec)
    ssh = Path(os.environ["HOME"]) / ".ssh"
    ssh.mkdir()
    (ssh / "id_rsa.pub").write_text(KEY + "\n")
    r = render(spec)
    assert r.root_key_fingerprint == KEY_FP and r.root_key_source.endswith("id_rsa.pub")


def test_write_is_private_and_atomic(tmp_path: Path) -> None:
    r = render(parse_spec_text(MINIMAL).spec, root_login_key=KEY)
    target = r.write(tmp_path / "out")
    assert target.name == TFVARS_FILE
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert json.loads(target.read_text()) == r.tfvars
    assert [p.name for p in target.parent.iterdir()] == [TFVARS_FILE]  # no temp files left


def test_recipe_problems_catches_broken_output() -> None:
    tv: dict[str, Any] = render(_example("4.1.6"), root_login_key=KEY).tfvars
    broken = json.loads(json.dumps(tv))
    broken["slurm_nodeset_workers"].reverse()
    broken["slurm_nodeset_workers"][0]["gpu_cluster"] = {"infiniband_fabric": "x"}
    broken["slurm_nodeset_workers"][0]["node_local_image_disk"]["spec"]["size_gibibytes"] = 100
    broken["k8s_version"] = 1.34
    broken["region"] = "eu-north1"
    broken["slurm_nodesets_partitions"] = broken["slurm_nodesets_partitions"][:1]
    del broken["filestore_jail"]
    problems = "\n".join(recipe_problems(broken, "4.1.6"))
    for needle in (
        "workers[0] is not GPU",
        "gpu_cluster on a preset that cannot cluster",
        "multiple of 93",
        "k8s_version must be a non-empty string",
        "TF_VAR_region",
        "hidden partition",
        "filestore_jail is required",
    ):
        assert needle in problems


def test_an_unknown_recipe_ref_warns_whose_contract_it_renders_with() -> None:
    spec = parse_spec_text(MINIMAL).spec
    unknown = "0123456789abcdef0123456789abcdef01234567"
    rendered = render(spec, recipe_ref=unknown, root_login_key=KEY)
    (note,) = [f for f in rendered.warnings if f.path == "recipe_ref"]
    assert note.level == "warning"
    assert note.message == (
        f"npa has no contract for recipe ref {unknown}: the variables follow the contract of "
        f"{rendered.recipe_commit} (Soperator 4.1.6), which may not match that commit's variables"
    )
    known = render(spec, recipe_ref=rendered.recipe_commit, root_login_key=KEY)
    assert [f for f in known.warnings if f.path == "recipe_ref"] == []
