"""The catalog as the wizard asks it: regions and the GPU platforms they offer, presets per
role at a sizing tier, what a node of a platform can be. Values handed to the screens are
small frozen dataclasses, not the catalog's models."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class PresetChoice:
    name: str
    vcpu: int
    memory_gb: int
    gpus: int = 0


class CatalogView:
    """The catalog questions the wizard asks, answered from `catalog.load_catalog()`."""

    def __init__(self, catalog: Any) -> None:
        self._c = catalog

    def regions(self) -> list[str]:
        return list(self._c.regions)

    def platforms(self, region: str) -> list[str]:
        """Platforms offered in `region` that have presets we know."""
        return [p for p in self._c.platforms_in_region(region) if self._c.platforms[p].presets]

    def presets(self, platform: str, *, role: str = "worker") -> list[PresetChoice]:
        plat = self._c.platform(platform)
        if plat is None:
            return []
        excluded = set(plat.worker_excluded_presets) if role == "worker" else set()
        minimum = self._c.role_min_vcpu.get(role, 0)
        return [
            PresetChoice(p.name, p.vcpu, p.memory_gb, p.gpus)
            for p in plat.presets.values()
            if p.name not in excluded and p.vcpu >= minimum
        ]

    def preset(self, platform: str, name: str) -> PresetChoice | None:
        p = self._c.preset(platform, name)
        return None if p is None else PresetChoice(p.name, p.vcpu, p.memory_gb, p.gpus)

    def fabrics(self, region: str) -> list[str]:
        return self._c.fabrics_for(region)

    def disk_step_gib(self) -> int:
        """Node-local disks are allocated in steps of this many GiB."""
        return int(self._c.disk_granularity_gib)

    def gpu_platforms(self, region: str) -> list[str]:
        return [p for p in self.platforms(region) if self.is_gpu_platform(p)]

    def region_offer(self, region: str) -> str:
        """One line for the region picker: the GPU platforms a region has, or "CPU only"."""
        gpus = self.gpu_platforms(region)
        return ", ".join(gpus) if gpus else "CPU only"

    def region_details(self, region: str) -> str:
        """What choosing `region` makes possible: platforms (with what a node gets), fabrics."""
        if not region:
            return "Each region offers different GPU platforms; choose one to see them."
        lines = [f"{region} offers:"]
        for platform in self.platforms(region):
            lines.append(f"  {platform}: {self.platform_offer(platform)}")
        fabrics = self.fabrics(region)
        lines.append(
            f"  InfiniBand fabrics: {', '.join(fabrics)}"
            if fabrics
            else "  InfiniBand fabrics: none known (a GPU pool needs one)"
        )
        return "\n".join(lines)

    def platform_offer(self, platform: str) -> str:
        """What one node of `platform` can be, from its worker presets (vCPU / GPU ranges)."""
        presets = self.presets(platform)
        if not presets:
            return "no presets known"
        vcpus = sorted({p.vcpu for p in presets})
        span = f"{vcpus[0]}–{vcpus[-1]} vCPU" if len(vcpus) > 1 else f"{vcpus[0]} vCPU"
        gpus = sorted({p.gpus for p in presets if p.gpus})
        if not gpus:
            return f"CPU, {span} per node"
        counts = " or ".join(str(g) for g in gpus)
        return f"{counts} GPUs, {span} per node"

    def is_gpu_platform(self, platform: str) -> bool:
        plat = self._c.platform(platform)
        return bool(plat.is_gpu) if plat else platform.startswith("gpu-")

    def sizing_tier(self, worker_count: int) -> str:
        return str(self._c.sizing_tier(worker_count).name)

    def role_presets(self, role: str, worker_count: int) -> list[PresetChoice]:
        """Control-plane presets (cpu-d3) sufficient for `role` at the workers' sizing tier."""
        tier = self.sizing_tier(worker_count)
        minimum = max(
            self._c.role_min_vcpu.get(role, 0),
            self._c.control_plane_min_vcpu.get(role, {}).get(tier, 0),
        )
        excluded = set(self._c.role_excluded_presets.get(role, ()))
        plat = self._c.platform("cpu-d3")
        return [
            PresetChoice(p.name, p.vcpu, p.memory_gb)
            for p in plat.presets.values()
            if p.vcpu >= minimum and p.name not in excluded
        ]

    def tier_explanation(self, role: str, worker_count: int) -> str:
        tier = self._c.sizing_tier(worker_count)
        default = tier.presets.get(role)
        if default is None:
            return f"Left empty, the recipe's default preset for {role} is used."
        return (
            f"Left empty, the recipe's sizing tier {tier.name} (for {worker_count} worker "
            f"node(s)) picks {default} for {role}."
        )


def capacity_mode(pool: Mapping[str, Any]) -> str:
    """reserved / preemptible / on-demand for a pool as the wizard holds it (a mapping)."""
    from npa_sop_tui.spec.model import capacity_mode_of

    reserved = bool(pool.get("capacity_block_group") or pool.get("capacity_block_group_name"))
    return capacity_mode_of(reserved=reserved, preemptible=bool(pool.get("preemptible")))
