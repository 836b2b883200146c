"""Rendered variables against expectations that do not come from the renderer.

Two independent sources:
- values written by hand from the example specs and the recipe's documented behaviour (GPU
  pools first, fixed sizes, the example tfvars' disks), for the parts a reviewer checks;
- the recipe contracts read as plain JSON here (not through npa's contract module): every
  rendered name is declared, every required one is rendered or comes from TF_VAR_*, and no
  object carries an attribute its type does not declare.

The golden files in tests/recipe/golden pin the whole output; these say what it must mean.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.recipe.render import render
from npa_sop_tui.spec.model import load_spec

REPO = Path(__file__).resolve().parents[2]
ASSETS = REPO / "assets"
CONTRACTS = REPO / "npa_sop_tui" / "recipe" / "contracts"
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOSbyr48sc2OSnGoHzYfK2Y81o89Abx/PYwOuYuUDoW9 root@vm"
FROM_ENV = {
    "region",
    "iam_tenant_id",
    "iam_project_id",
    "vpc_subnet_id",
    "o11y_iam_tenant_id",
    "o11y_profile",
}


def boot(gib: int) -> dict[str, Any]:
    return {"type": "NETWORK_SSD", "size_gibibytes": gib, "block_size_kibibytes": 4}


def cache(gib: int) -> dict[str, Any]:
    return {
        "enabled": True,
        "spec": {
            "size_gibibytes": gib,
            "filesystem_type": "ext4",
            "disk_type": "NETWORK_SSD_IO_M3",
        },
    }


FIXED = {"autoscaling": {"enabled": False}, "node_local_jail_submounts": []}

# Written from assets/cluster.yaml: B200 pool first (the recipe takes CUDA from workers[0]),
# preemptible, on its fabric, default 372 GiB image cache; the CPU pool with its 930 GiB cache.
CLUSTER = {
    "company_name": "npasop",
    "production": False,
    "k8s_version": "1.34",
    "node_group_version": "72",
    "slurm_operator_version": "4.1.6",
    "accounting_enabled": False,
    "slurm_rest_enabled": False,
    "telemetry_enabled": False,
    "public_o11y_enabled": False,
    "use_default_apparmor_profile": True,
    "active_checks_scope": "essential",
    "backups_enabled": "force_disable",
    "slurm_login_ssh_root_public_keys": [KEY],
    "slurm_shared_memory_size_gibibytes": 64,
    # forbid_deletion off: `npa soperator destroy` must be able to remove what it made
    "filestore_jail": {
        "spec": {"size_gibibytes": 512, "block_size_kibibytes": 4, "forbid_deletion": False}
    },
    "filestore_accounting": None,
    "slurm_nodeset_system": {
        "min_size": 3,
        "max_size": 24,
        "resource": {"platform": "cpu-d3", "preset": None},
        "boot_disk": boot(192),
    },
    "slurm_nodeset_controller": {
        "size": 1,
        "resource": {"platform": "cpu-d3", "preset": None},
        "boot_disk": boot(256),
    },
    "slurm_nodeset_login": {
        "size": 1,
        "resource": {"platform": "cpu-d3", "preset": "16vcpu-64gb"},
        "boot_disk": boot(256),
    },
    "workers": [
        {
            "name": "gpu",
            "size": 2,
            "resource": {"platform": "gpu-b200-sxm", "preset": "8gpu-160vcpu-1792gb"},
            "boot_disk": boot(512),
            "gpu_cluster": {"infiniband_fabric": "us-central1-a"},
            "preemptible": {},
            "reservation_policy": None,
            "node_local_image_disk": cache(372),
            **FIXED,
        },
        {
            "name": "cpu8",
            "size": 1,
            "resource": {"platform": "cpu-d3", "preset": "8vcpu-32gb"},
            "boot_disk": boot(512),
            "gpu_cluster": None,
            "preemptible": None,
            "reservation_policy": None,
            "node_local_image_disk": cache(930),
            **FIXED,
        },
    ],
}
# assets/cpu-minimal.yaml: one on-demand CPU pool of two, no cache, no accounting.
CPU_MINIMAL = {
    "company_name": "cpu-min",
    "k8s_version": "1.34",
    "accounting_enabled": False,
    "workers": [
        {
            "name": "cpu",
            "size": 2,
            "resource": {"platform": "cpu-d3", "preset": "16vcpu-64gb"},
            "boot_disk": boot(512),
            "gpu_cluster": None,
            "preemptible": None,
            "reservation_policy": None,
            "node_local_image_disk": {"enabled": False},
            **FIXED,
        }
    ],
}
# assets/gpu-reserved.yaml on 4.1.13 with a run-time reservation: STRICT policy on that ID,
# not preemptible; accounting on, so REST follows it; the 4.1.13 jail variable and defaults.
RESERVATION = "capacityblockgroup-test0001"
GPU_RESERVED = {
    "company_name": "gpu-reserved",
    "k8s_version": "1.36",
    "node_group_version": "75",
    "slurm_operator_version": "4.1.13",
    "accounting_enabled": True,
    "slurm_rest_enabled": True,
    "slurm_shared_memory_size_gibibytes": 1024,
    "filesystem_jail": {
        "spec": {
            "type": "NETWORK_SSD",
            "size_gibibytes": 512,
            "block_size_kibibytes": 4,
            "forbid_deletion": False,
        }
    },
    "slurm_nodeset_system": {
        "min_size": 3,
        "max_size": 9,
        "resource": {"platform": "cpu-d3", "preset": None},
        "boot_disk": boot(192),
    },
    "slurm_nodeset_login": {
        "size": 1,
        "resource": {"platform": "cpu-d3", "preset": "32vcpu-128gb"},
        "boot_disk": boot(256),
    },
    "workers": [
        {
            "name": "h200",
            "size": 4,
            "resource": {"platform": "gpu-h200-sxm", "preset": "8gpu-128vcpu-1600gb"},
            "gpu_cluster": {"infiniband_fabric": "eu-north2-a"},
            "preemptible": None,
            "reservation_policy": {"policy": "STRICT", "reservation_ids": [RESERVATION]},
            "node_local_image_disk": cache(930),
            **FIXED,
        },
        {
            "name": "cpu",
            "size": 2,
            "resource": {"platform": "cpu-d3", "preset": "32vcpu-128gb"},
            "gpu_cluster": None,
            "preemptible": None,
            "reservation_policy": None,
            "node_local_image_disk": {"enabled": False},
            **FIXED,
        },
    ],
}
EXAMPLES = {
    "cluster.yaml": (CLUSTER, None),
    "cpu-minimal.yaml": (CPU_MINIMAL, None),
    "gpu-reserved.yaml": (GPU_RESERVED, {"h200": RESERVATION}),
}


def _render(asset: str) -> Any:
    _, capacity = EXAMPLES[asset]
    return render(load_spec(ASSETS / asset).spec, capacity=capacity, root_login_key=KEY)


@pytest.mark.parametrize("asset", list(EXAMPLES))
def test_examples_render_the_values_written_by_hand(asset: str) -> None:
    expected, _ = EXAMPLES[asset]
    tfvars = _render(asset).tfvars
    for name, value in expected.items():
        if name == "workers":
            continue
        assert tfvars[name] == value, name
    workers = tfvars["slurm_nodeset_workers"]
    assert [w["name"] for w in workers] == [w["name"] for w in expected["workers"]]
    for got, want in zip(workers, expected["workers"], strict=True):
        for attr, value in want.items():
            assert got[attr] == value, f"{got['name']}.{attr}"
    assert [
        (p["name"], p["is_all"], p["topology"]) for p in tfvars["slurm_nodesets_partitions"]
    ] == [
        ("main", True, "flat"),
        ("hidden", True, "flat"),
    ]
    assert not FROM_ENV & set(tfvars)  # identity goes through TF_VAR_*, never the file


def _attrs(tree: Any) -> dict[str, Any] | None:
    """The attributes of an object type, through list/set/map wrappers (plain JSON walk)."""
    while isinstance(tree, dict) and len(tree) == 1 and next(iter(tree)) in ("list", "set", "map"):
        tree = next(iter(tree.values()))
    return tree.get("object") if isinstance(tree, dict) else None


def _extra_attributes(value: Any, tree: Any, where: str) -> list[str]:
    attrs = _attrs(tree)
    if attrs is None or value is None:
        return []
    items = value if isinstance(value, list) else list(value.values()) if "map" in tree else [value]
    out: list[str] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        out += [f"{where}.{k}" for k in item if k not in attrs]
        for k, sub in item.items():
            if k in attrs:
                out += _extra_attributes(sub, attrs[k]["type"], f"{where}.{k}")
    return out


@pytest.mark.parametrize("asset", list(EXAMPLES))
def test_rendered_names_follow_the_commits_contract_file(asset: str) -> None:
    rendered = _render(asset)
    raw = json.loads((CONTRACTS / f"{rendered.recipe_commit}.json").read_text())
    declared = raw["variables"]
    tfvars = rendered.tfvars
    assert sorted(set(tfvars) - set(declared)) == []
    required = {n for n, d in declared.items() if d["required"]}
    assert sorted(required - set(tfvars) - FROM_ENV) == []
    assert {n.removeprefix("TF_VAR_") for n in rendered.env_names} == FROM_ENV
    extra = [e for n, v in tfvars.items() for e in _extra_attributes(v, declared[n]["type"], n)]
    assert extra == []
    not_null = [n for n, v in tfvars.items() if v is None and not declared[n]["nullable"]]
    assert not_null == []


def test_the_contract_walk_here_sees_an_undeclared_attribute() -> None:
    """The independent walk above is not vacuous: it finds a planted extra attribute."""
    rendered = _render("cluster.yaml")
    raw = json.loads((CONTRACTS / f"{rendered.recipe_commit}.json").read_text())
    workers = json.loads(json.dumps(rendered.tfvars["slurm_nodeset_workers"]))
    workers[1]["boot_disk"]["colour"] = "red"
    tree = raw["variables"]["slurm_nodeset_workers"]["type"]
    assert _extra_attributes(workers, tree, "w") == ["w.boot_disk.colour"]
