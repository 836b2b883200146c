"""render(): its refusals word for word, where the root key and capacity come from, and the
shape helpers' choices per contract (render.py, shape.py)."""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.errors import OperationError, UsageError
from npa_sop_tui.home.config import Identity
from npa_sop_tui.recipe import render as render_module
from npa_sop_tui.recipe.contract import Contract, load_contract
from npa_sop_tui.recipe.render import render, supported_versions
from npa_sop_tui.recipe.shape import (
    check_hosted,
    gb300_refusal,
    hosts_gb300,
    partitions,
    rack_names,
    storage,
)
from npa_sop_tui.recipe.table import load_table
from npa_sop_tui.spec.catalog import load_catalog
from npa_sop_tui.spec.model import SpecError, spec_from_mapping

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOSbyr48sc2OSnGoHzYfK2Y81o89Abx/PYwOuYuUDoW9 root@vm"
V4112 = load_table().contract_commit("4.1.12")
CPU = {"name": "cpu", "preset": "16vcpu-64gb"}
H100 = {
    "name": "gpu",
    "platform": "gpu-h100-sxm",
    "preset": "8gpu-128vcpu-1600gb",
    "fabric": "fabric-3",
}
GB300 = {
    "name": "gb",
    "platform": "gpu-gb300",
    "preset": "4gpu-112vcpu-800gb",
    "fabric": "fabric-3",
    "preemptible": True,
    "size": 36,
    "local_nvme_device_count": 4,
    "local_nvme_device_gb": 3840,
}


def spec(*workers: dict[str, Any], **fields: Any) -> Any:
    return spec_from_mapping(
        {"name": "lab", "region": "eu-north1", "workers": list(workers) or [CPU], **fields}
    )


def refusal(exc_type: type[Exception], *args: Any, **kw: Any) -> tuple[str, str | None]:
    with pytest.raises(exc_type) as info:
        render(*args, **kw)
    return str(info.value), getattr(info.value, "hint", None)


def test_version_refusals() -> None:
    assert refusal(UsageError, spec(), recipe_version="9.9", root_login_key=KEY) == (
        "recipe version '9.9' is not supported",
        "supported versions: 4.1.6, 4.1.7, 4.1.12, 4.1.13",
    )
    assert refusal(UsageError, spec(), recipe_version="4.1.7", root_login_key=KEY) == (
        "recipe version 4.1.7 differs from the spec's slurm_operator_version 4.1.6",
        "change slurm_operator_version in the spec to deploy another version",
    )
    assert supported_versions() == ["4.1.6", "4.1.7", "4.1.12", "4.1.13"]


def test_spec_errors_refuse_before_anything_renders() -> None:
    bad = spec_from_mapping({"name": "lab", "workers": [{**CPU, "size": 0}]}, validate=False)
    with pytest.raises(SpecError) as info:
        render(bad, root_login_key=KEY)
    assert [f.path for f in info.value.findings] == ["workers[0].size"]


def test_the_catalog_given_is_the_one_validated_and_checked() -> None:
    cat = load_catalog()
    no_region = replace(cat, regions={"elsewhere": ()})
    with pytest.raises(SpecError) as info:
        render(spec(), root_login_key=KEY, catalog=no_region)
    assert [f.path for f in info.value.findings] == ["region"]
    big_boot = replace(cat, boot_disk_min_gib={**cat.boot_disk_min_gib, "worker": 600})
    assert refusal(OperationError, spec(), root_login_key=KEY, catalog=big_boot) == (
        "rendered variables break the recipe's rules: worker cpu: boot disk below 600 GiB",
        "please report this with the spec (IDs redacted)",
    )


def test_every_recipe_problem_is_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(render_module, "recipe_problems", lambda *a, **kw: ["one", "two"])
    assert refusal(OperationError, spec(), root_login_key=KEY)[0] == (
        "rendered variables break the recipe's rules: one; two"
    )


def test_warnings_are_the_specs_and_run_time_capacity_counts() -> None:
    on_demand = spec(H100)
    rendered = render(on_demand, root_login_key=KEY)
    assert [(w.level, w.path) for w in rendered.warnings] == [("warning", "workers[0]")]
    reserved = render(on_demand, root_login_key=KEY, capacity={"gpu": "capacityblockgroup-r"})
    assert reserved.warnings == []
    (pool,) = reserved.tfvars["slurm_nodeset_workers"]
    assert pool["reservation_policy"] == {
        "policy": "STRICT",
        "reservation_ids": ["capacityblockgroup-r"],
    }
    assert reserved.secrets == ["capacityblockgroup-r"]


def test_reservation_ids_are_redacted_from_text() -> None:
    rendered = render(spec(H100), root_login_key=KEY, capacity={"gpu": "capacityblockgroup-r"})
    assert rendered.redact("id capacityblockgroup-r, again capacityblockgroup-r.") == (
        "id <redacted>, again <redacted>."
    )


def test_reservation_ids_from_the_spec_and_run_time() -> None:
    in_spec = {**H100, "capacity_block_group": "capacityblockgroup-spec"}
    rendered = render(spec(in_spec), root_login_key=KEY)
    (pool,) = rendered.tfvars["slurm_nodeset_workers"]
    assert pool["reservation_policy"]["reservation_ids"] == ["capacityblockgroup-spec"]
    assert rendered.secrets == ["capacityblockgroup-spec"]
    run_time = render(spec(in_spec), root_login_key=KEY, capacity={"gpu": "capacityblockgroup-rt"})
    (pool,) = run_time.tfvars["slurm_nodeset_workers"]
    assert pool["reservation_policy"]["reservation_ids"] == ["capacityblockgroup-rt"]


def test_a_capacity_name_must_be_resolved_first() -> None:
    named = spec({**H100, "capacity_block_group_name": "blk"})
    assert refusal(UsageError, named, root_login_key=KEY) == (
        "worker pool 'gpu': a capacity block name must be resolved to an ID before rendering "
        "Terraform",
        "give its ID at run time: gpu=capacityblockgroup-… in NPA_CAPACITY_BLOCK_GROUPS or the "
        "capacity option of the call",
    )


def test_root_key_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    rendered = render(spec(), root_login_key=KEY)
    assert (rendered.root_key_source, rendered.tfvars["slurm_login_ssh_root_public_keys"]) == (
        "caller",
        [KEY],
    )
    assert refusal(UsageError, spec(), root_login_key="ssh-ed25519 !!!") == (
        "root login SSH key has an invalid base64 blob",
        None,
    )
    from_spec = render(spec(root_login_ssh_public_key=KEY))
    assert from_spec.root_key_source == "spec root_login_ssh_public_key"
    legacy = render(spec(ssh_public_keys=[KEY]))
    assert legacy.root_key_source == "spec root_login_ssh_public_key"
    assert legacy.tfvars["slurm_login_ssh_root_public_keys"] == [KEY]
    key_file = tmp_path / "k.pub"
    key_file.write_text(KEY + "\n")
    home = tmp_path / "npa-home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("NPA_HOME", str(home))
    (home / "config.yaml").write_text(f"ssh_public_key_path: {key_file}\n")
    from_config = render(spec())
    assert from_config.root_key_source == f"config ssh_public_key_path {key_file}"
    assert from_config.root_key_fingerprint == "SHA256:D1QqiBCbm/1vkruyOsPM1seww85jT5rtHkErYKts2Y4"


def test_apparmor_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert render(spec(), root_login_key=KEY).tfvars["use_default_apparmor_profile"] is True
    off = render(spec(use_default_apparmor_profile=False), root_login_key=KEY)
    assert off.tfvars["use_default_apparmor_profile"] is False
    monkeypatch.delenv("NEBIUS_OLLY_TENANT_ID", raising=False)
    monkeypatch.delenv("NEBIUS_OLLY_PROFILE", raising=False)
    identity = Identity(region="eu-north1", tenant_id="tenant-1", project_id="", subnet_id="vpc")
    assert render(spec(), root_login_key=KEY, identity=identity).env == {
        "TF_VAR_region": "eu-north1",
        "TF_VAR_iam_tenant_id": "tenant-1",
        "TF_VAR_vpc_subnet_id": "vpc",
        "TF_VAR_o11y_iam_tenant_id": "tenant-e00vyb5y1x5vqkzw5e",
        "TF_VAR_o11y_profile": "",
    }
    monkeypatch.setenv("NEBIUS_OLLY_TENANT_ID", "tenant-mine")
    monkeypatch.setenv("NEBIUS_OLLY_PROFILE", "mine")
    assert render(spec(telemetry=True), root_login_key=KEY).env == {
        "TF_VAR_o11y_iam_tenant_id": "tenant-mine",
        "TF_VAR_o11y_profile": "mine",
    }
    monkeypatch.delenv("NEBIUS_OLLY_PROFILE")
    assert render(spec(telemetry=True), root_login_key=KEY).env["TF_VAR_o11y_profile"] == (
        "soperator-telemetry"
    )


# --- shape ------------------------------------------------------------------------------------


def _without_worker_attr(contract: Contract, attr: str) -> Contract:
    variables = copy.deepcopy(contract.variables)
    del variables["slurm_nodeset_workers"]["type"]["list"]["object"][attr]
    return replace(contract, variables=variables)


def test_gb300_needs_a_commit_that_hosts_it() -> None:
    contract = load_contract(V4112)
    assert hosts_gb300(contract)
    no_nvme = _without_worker_attr(contract, "local_nvme")
    no_nvlink = _without_worker_attr(contract, "nvlink")
    assert not hosts_gb300(no_nvme) and not hosts_gb300(no_nvlink)
    gb = spec(
        GB300,
        slurm_operator_version="4.1.12",
        use_default_apparmor_profile=True,
        k8s_version="1.36",
    )
    cpu_only = spec(
        CPU, slurm_operator_version="4.1.12", use_default_apparmor_profile=True, k8s_version="1.36"
    )
    assert gb300_refusal(gb, contract) is None
    assert gb300_refusal(cpu_only, no_nvme) is None
    reason = (
        "recipe 9a187732 (Soperator 4.1.12) does not host GB300: its worker nodesets have no "
        "nvlink/local_nvme attributes"
    )
    assert gb300_refusal(gb, no_nvme) == reason
    with pytest.raises(UsageError) as info:
        check_hosted(gb, no_nvlink)
    assert (str(info.value), info.value.hint) == (
        reason,
        "use Soperator 4.1.13 (or another commit whose workers have nvlink), or an amd64 GPU "
        "platform",
    )
    check_hosted(cpu_only, no_nvme)  # nothing to refuse


@pytest.mark.parametrize(
    ("size", "names"),
    [
        (0, ["gb-rack0"]),
        (1, ["gb-rack0"]),
        (18, ["gb-rack0"]),
        (19, ["gb-rack0", "gb-rack1"]),
        (36, ["gb-rack0", "gb-rack1"]),
        (37, ["gb-rack0", "gb-rack1", "gb-rack2"]),
    ],
)
def test_rack_names(size: int, names: list[str]) -> None:
    assert rack_names("gb", size) == names


def test_gb300_workers_render_nvlink_and_local_nvme() -> None:
    rendered = render(
        spec(GB300, slurm_operator_version="4.1.13", use_default_apparmor_profile=True),
        root_login_key=KEY,
    )
    (worker,) = rendered.tfvars["slurm_nodeset_workers"]
    assert worker["nvlink"] == {"enabled": True, "type": "GB300"}
    assert worker["local_nvme"] == {
        "enabled": True,
        "device_count": 4,
        "device_capacity_gigabytes": 3840,
        "mount_path": "/mnt/local-nvme",
    }
    assert worker["gpu_cluster"] == {"infiniband_fabric": "fabric-3"}
    assert rendered.tfvars["slurm_login_on_worker_nodes"] is True


def test_partitions_main_and_hidden() -> None:
    common = "PriorityTier=10 PreemptMode=OFF MaxTime=INFINITE State=UP OverSubscribe=YES"
    assert partitions() == [
        {
            "name": "main",
            "is_all": True,
            "slurm_nodeset_refs": [],
            "topology": "flat",
            "config": f"Default=YES {common}",
        },
        {
            "name": "hidden",
            "is_all": True,
            "slurm_nodeset_refs": [],
            "topology": "flat",
            "config": f"Hidden=YES {common}",
        },
    ]


def _with_derefs(contract: Contract, derefs: list[dict[str, Any]]) -> Contract:
    return replace(contract, null_dereferences=derefs)


def test_filestores_follow_the_contract_and_main_tf_reads() -> None:
    contract = load_contract(V4112)
    acct = spec(
        CPU,
        accounting=True,
        slurm_operator_version="4.1.12",
        use_default_apparmor_profile=True,
        k8s_version="1.36",
    )
    out = storage(acct, contract)
    assert out["filestore_accounting"] == {
        "spec": {"size_gibibytes": 512, "block_size_kibibytes": 4, "forbid_deletion": False}
    }
    assert out["filesystem_jail"] == {
        "spec": {
            "type": "NETWORK_SSD",
            "size_gibibytes": 512,
            "block_size_kibibytes": 4,
            "forbid_deletion": False,
        }
    }
    # the spool is read only when accounting is off here: not needed with accounting on
    guarded = _with_derefs(
        contract,
        [
            {
                "path": "filestore_controller_spool",
                "when": [[{"path": "accounting_enabled", "equals": False}]],
            },
            {
                "path": "filestore_accounting",
                "when": [[{"path": "telemetry_enabled", "equals": True}]],
            },
        ],
    )
    variables = copy.deepcopy(guarded.variables)
    variables["filestore_controller_spool"]["required"] = False
    guarded = replace(guarded, variables=variables)
    out = storage(acct, guarded)
    assert out["filestore_controller_spool"] is None
    assert out["filestore_accounting"] is None  # read only under another flag: not needed
    plain = spec(
        CPU, slurm_operator_version="4.1.12", use_default_apparmor_profile=True, k8s_version="1.36"
    )
    assert storage(plain, guarded)["filestore_controller_spool"] == {
        "spec": {"size_gibibytes": 128, "block_size_kibibytes": 4, "forbid_deletion": False}
    }
    no_forbid = copy.deepcopy(contract.variables)
    del no_forbid["filestore_controller_spool"]["type"]["object"]["spec"]["type"]["object"][
        "forbid_deletion"
    ]
    out = storage(plain, replace(contract, variables=no_forbid))
    assert out["filestore_controller_spool"] == {
        "spec": {"size_gibibytes": 128, "block_size_kibibytes": 4}
    }
