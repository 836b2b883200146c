"""spec/derived.py: the values derived from a spec (decorated properties mutmut never
mutates), each pinned to its meaning."""

from __future__ import annotations

from typing import Any

import pytest

from npa_sop_tui.spec.model import SoperatorSpec, spec_from_mapping


def _spec(**top: Any) -> SoperatorSpec:
    workers = top.pop("workers", [{"name": "cpu", "size": 2}])
    return spec_from_mapping(
        {"apiVersion": "npa.soperator/v0.0.1", "name": "facts", "region": "eu-north1",
         "workers": workers, **top}
    )  # fmt: skip


GPU = {"name": "gpu", "platform": "gpu-h100-sxm", "preset": "8gpu-128vcpu-1600gb",
       "fabric": "eu-north1-a", "size": 3}  # fmt: skip


@pytest.mark.parametrize(("system", "expected"), [
    ({"min_size": 3}, 24), ({"min_size": 30}, 30), ({"min_size": 3, "max_size": 9}, 9),
])  # fmt: skip
def test_system_max_size_defaults_to_24_or_the_minimum(
    system: dict[str, int], expected: int
) -> None:
    spec = _spec(control_plane={"system": system})
    assert spec.control_plane.system.effective_max_size == expected


def test_gpu_facts_come_from_the_platform_and_preset() -> None:
    spec = _spec(workers=[GPU, {"name": "cpu", "size": 1}])
    gpu, cpu = spec.workers
    assert (gpu.is_gpu(), gpu.gpus_per_node) == (True, 8)
    assert (cpu.is_gpu(), cpu.gpus_per_node) == (False, 0)
    assert spec.has_gpu and not _spec().has_gpu
    assert spec.worker_count == 4  # what the recipe's sizing tier counts


def test_the_capacity_id_is_reachable_only_on_purpose() -> None:
    spec = _spec(workers=[{**GPU, "capacity_block_group": "e00cbgPINNED1"}])
    pool = spec.workers[0]
    assert pool.capacity_block_group_id == "e00cbgPINNED1"
    assert pool.reservation_selector_kind() == "id" and pool.capacity_mode() == "reserved"
    assert "e00cbgPINNED1" not in str(pool.summary())


def test_kube_context_is_the_recipes_name() -> None:
    assert _spec().kube_context == "nebius-facts-slurm"


@pytest.mark.parametrize(("accounting", "rest", "expected"), [
    (False, None, False), (True, None, True), (True, False, False), (True, True, True),
])  # fmt: skip
def test_rest_follows_accounting_unless_set(
    accounting: bool, rest: bool | None, expected: bool
) -> None:
    top: dict[str, Any] = {"accounting": accounting}
    if rest is not None:
        top["slurm_rest_enabled"] = rest
    assert _spec(**top).rest_enabled is expected


@pytest.mark.parametrize(("version", "generation"), [
    ("4.1.6", "4.1.6"), ("4.1.7", "4.1.6"), ("4.1.12", "4.1.12"), ("4.1.13", "4.1.12"),
])  # fmt: skip
def test_recipe_generation_and_its_default_versions(version: str, generation: str) -> None:
    spec = _spec(slurm_operator_version=version)
    assert spec.recipe_generation == generation
    # the defaults are the recipe's own for that generation; given values win
    assert spec.effective_k8s_version and spec.effective_node_group_version
    pinned = _spec(slurm_operator_version=version, k8s_version=spec.effective_k8s_version,
                   node_group_version="99")  # fmt: skip
    assert pinned.effective_node_group_version == "99"


def test_sizing_tier_follows_the_worker_count() -> None:
    small, large = _spec(), _spec(workers=[{"name": "cpu", "size": 200}])
    assert small.sizing_tier != large.sizing_tier
