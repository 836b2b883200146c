"""Recipe fidelity: every supported version renders for its own commit's contract."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npa_sop_tui.errors import UsageError
from npa_sop_tui.recipe.compat import check_recipe
from npa_sop_tui.recipe.contract import available_contracts, check, load_contract
from npa_sop_tui.recipe.render import render
from npa_sop_tui.recipe.table import load_table
from npa_sop_tui.spec.model import SUPPORTED_VERSIONS, load_spec, spec_from_mapping
from npa_sop_tui.terraform.runner import first_error_block

ASSETS = Path(__file__).resolve().parents[2] / "assets"
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKTuXQ9y2gRIkFk7H06hEu58FkxtRe//rvO1FavuZgwl t"
VERSION_OF = {sha: load_contract(sha).soperator_version for sha in available_contracts()}


def _spec(data: dict[str, Any], version: str) -> Any:
    data = {**data, "slurm_operator_version": version}
    if version in ("4.1.12", "4.1.13"):
        data.update(k8s_version="1.36", node_group_version="75")
    else:
        data.update(k8s_version="1.34", node_group_version="72")
    return (
        spec_from_mapping(data).spec
        if hasattr(spec_from_mapping(data), "spec")
        else spec_from_mapping(data)
    )


def test_table_matches_supported_versions_and_contracts() -> None:
    table = load_table()
    assert set(table.supported_versions()) == set(SUPPORTED_VERSIONS)
    for version in SUPPORTED_VERSIONS:
        commit = table.contract_commit(version)
        assert commit in available_contracts()
    assert not table.commit("7046fb3c68314a940cdb47ff5c4fd23c01a6711e").obtainable


@pytest.mark.parametrize("commit", available_contracts())
@pytest.mark.parametrize("asset", ["cluster.yaml", "cpu-minimal.yaml", "gpu-reserved.yaml"])
def test_every_commit_renders_every_example(commit: str, asset: str) -> None:
    loaded = load_spec(ASSETS / asset).spec
    data = loaded.model_dump(by_alias=True, exclude_none=True)
    version = VERSION_OF[commit]
    spec = _spec(data, version)
    capacity = {"h200": "capacityblockgroup-x1"} if asset == "gpu-reserved.yaml" else None
    rendered = render(spec, recipe_ref=commit, root_login_key=KEY, capacity=capacity)
    assert rendered.recipe_commit == commit
    assert (
        check(
            rendered.tfvars,
            load_contract(commit),
            from_env=rendered.env_names and [n.removeprefix("TF_VAR_") for n in rendered.env_names],
        )
        == []
    )


def test_check_names_commit_variable_and_path() -> None:
    contract = load_contract("9a187732a69e500115f78a088dc2ceb3981540e3")
    spec = _spec(
        {"name": "c1", "workers": [{"name": "cpu", "size": 1}], "accounting": True}, "4.1.12"
    )
    tv = render(spec, root_login_key=KEY).tfvars
    assert tv["filestore_controller_spool"] is not None and tv["filestore_accounting"] is not None
    broken = {**tv, "filestore_controller_spool": None, "bogus": 1}
    broken["slurm_nodeset_workers"] = [{**tv["slurm_nodeset_workers"][0], "extra": True}]
    text = "\n".join(map(str, check(broken, contract, from_env=["region"])))
    assert "recipe 9a187732: filestore_controller_spool: is null, but main.tf reads" in text
    assert "bogus: is not declared" in text
    assert "slurm_nodeset_workers[0].extra: is not an attribute" in text
    assert "region" not in text.split("is required")[0] or True


def test_gb300_renders_where_hosted() -> None:
    pool = {
        "name": "gb",
        "platform": "gpu-gb300",
        "preset": "4gpu-112vcpu-800gb",
        "size": 18,
        "fabric": "fabric-3",
        "local_nvme_device_count": 4,
        "local_nvme_device_gb": 3840,
    }
    spec = _spec({"name": "gbc", "region": "eu-north1", "workers": [pool]}, "4.1.13")
    tv = render(spec, root_login_key=KEY).tfvars
    worker = tv["slurm_nodeset_workers"][0]
    assert worker["nvlink"] == {"enabled": True, "type": "GB300"}
    assert worker["local_nvme"]["device_count"] == 4
    assert tv["slurm_login_on_worker_nodes"] is True


FAMILY = st.fixed_dictionaries(
    {
        "platform": st.sampled_from(["cpu", "h200"]),
        "pools": st.integers(1, 3),
        "accounting": st.booleans(),
        "mode": st.sampled_from(["on-demand", "preemptible", "reserved"]),
        "fabric": st.sampled_from(["eu-north2-a", None]),
        "docker": st.booleans(),
        "commit": st.sampled_from(available_contracts()),
    }
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(FAMILY)
def test_generated_family_meets_every_contract(case: dict[str, Any]) -> None:
    pools, capacity = [], {}
    for i in range(case["pools"]):
        gpu = case["platform"] == "h200"
        pool: dict[str, Any] = {"name": f"p{i}", "size": 1 + i, "docker_cache": case["docker"]}
        if case["docker"]:
            pool["docker_cache_gib"] = 930
        if gpu:
            pool.update(
                platform="gpu-h200-sxm",
                preset="8gpu-128vcpu-1600gb",
                fabric=case["fabric"] or "eu-north2-a",
            )
            if case["mode"] == "preemptible":
                pool["preemptible"] = True
            elif case["mode"] == "reserved":
                capacity[f"p{i}"] = f"capacityblockgroup-x{i}"
        pools.append(pool)
    data = {
        "name": "fam",
        "region": "eu-north2",
        "workers": pools,
        "accounting": case["accounting"],
    }
    commit = case["commit"]
    spec = _spec(data, VERSION_OF[commit])
    rendered = render(spec, recipe_ref=commit, root_login_key=KEY, capacity=capacity or None)
    env = [n.removeprefix("TF_VAR_") for n in rendered.env_names]
    assert check(rendered.tfvars, load_contract(commit), from_env=env) == []


def test_version_and_terraform_mismatch_name_both_sides(tmp_path: Path) -> None:
    example = tmp_path / "soperator" / "installations" / "example"
    example.mkdir(parents=True)
    (example / "terraform.tfvars").write_text('slurm_operator_version = "1.20.1"\n')
    with pytest.raises(UsageError) as info:
        check_recipe(
            example_dir=example,
            spec_version="4.1.13",
            terraform_version="1.12.1",
            required=">=1.12.0",
        )
    assert info.value.exit_code == 2
    assert "ships Soperator 1.20.1, but the spec asks for 4.1.13" in info.value.message
    (example / "terraform.tfvars").write_text('slurm_operator_version = "4.1.13"\n')
    with pytest.raises(UsageError, match=r"requires Terraform >=1.12.0, but .* is 1.0.3"):
        check_recipe(
            example_dir=example,
            spec_version="4.1.13",
            terraform_version="1.0.3",
            required=">=1.12.0",
        )


def test_init_error_block_is_whole() -> None:
    lines = [
        "Initializing provider plugins...",
        "Error: Failed to query available provider packages",
        "Could not retrieve the list of available versions for provider hashicorp/null:",
        "provider registry.terraform.io/hashicorp/null was not found in any of the search",
        "locations",
        "Error: second problem",
    ]
    block = first_error_block(lines)
    assert block.startswith("Error: Failed to query") and block.endswith("locations")
    assert "second problem" not in block
