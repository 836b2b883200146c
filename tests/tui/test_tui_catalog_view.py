"""The catalog as the wizard asks it (tui/catalog_view.py), answered from the real catalog:
what a region offers, what a node of a platform can be, control-plane presets by sizing
tier, and a pool's capacity mode."""

from __future__ import annotations

import pytest

from npa_sop_tui.spec.catalog import load_catalog
from npa_sop_tui.tui.catalog_view import CatalogView, capacity_mode


@pytest.fixture(scope="module")
def view() -> CatalogView:
    return CatalogView(load_catalog())


def test_a_region_lists_its_gpu_platforms_and_fabrics(view: CatalogView) -> None:
    region = next(r for r in view.regions() if view.gpu_platforms(r))
    gpus = view.gpu_platforms(region)
    assert view.region_offer(region) == ", ".join(gpus)
    details = view.region_details(region).splitlines()
    assert details[0] == f"{region} offers:"
    for platform in view.platforms(region):
        assert f"  {platform}: {view.platform_offer(platform)}" in details
    assert details[-1].startswith("  InfiniBand fabrics: ")
    assert all(f in details[-1] for f in view.fabrics(region))
    assert "choose one" in view.region_details("")


def test_platform_offer_says_gpus_and_vcpu_range(view: CatalogView) -> None:
    region = view.regions()[0]
    for platform in view.platforms(region):
        presets = view.presets(platform)
        offer = view.platform_offer(platform)
        low, high = min(p.vcpu for p in presets), max(p.vcpu for p in presets)
        assert (f"{low}–{high} vCPU" if low != high else f"{low} vCPU") in offer
        if view.is_gpu_platform(platform):
            assert all(f"{g}" in offer for g in {p.gpus for p in presets if p.gpus})
            assert "GPUs" in offer
        else:
            assert offer.startswith("CPU, ")
    assert view.platform_offer("no-such-platform") == "no presets known"
    assert view.preset("cpu-d3", "no-such-preset") is None


def test_control_plane_presets_follow_the_sizing_tier(view: CatalogView) -> None:
    cpu = {p.name: p.vcpu for p in view.presets("cpu-d3", role="system")}
    for workers in (1, 40, 400):
        offered = view.role_presets("controller", workers)
        assert offered, workers
        smallest = min(p.vcpu for p in offered)
        assert all(cpu[p.name] >= smallest for p in offered)
        below = [name for name, vcpu in cpu.items() if vcpu < smallest]
        assert not set(below) & {p.name for p in offered}
    tier = view.sizing_tier(4)
    text = view.tier_explanation("controller", 4)
    assert f"sizing tier {tier} (for 4 worker node(s))" in text
    assert "default preset for login" in view.tier_explanation("login", 4)


@pytest.mark.parametrize(
    ("pool", "mode"),
    [
        ({"capacity_block_group": "cbg-1"}, "reserved"),
        ({"capacity_block_group_name": "team-a"}, "reserved"),
        ({"preemptible": True}, "preemptible"),
        ({"preemptible": False}, "on-demand"),
        ({}, "on-demand"),
    ],
)
def test_capacity_mode_of_a_pool_mapping(pool: dict[str, object], mode: str) -> None:
    assert capacity_mode(pool) == mode
