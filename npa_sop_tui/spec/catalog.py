"""The Nebius catalog as the soperator recipe sees it, read from `data/catalog.yaml`.

Regions, platforms and presets change with the recipe, so they live in a data file, not in
code. The file is parsed once per process and cached.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

import yaml

ROLES = ("system", "controller", "login", "accounting", "nfs", "worker")

# Soperator versions the recipe supports -> the generation whose variable shapes they use.
# Here, below the model and the rules, so both can read it without importing each other.
SUPPORTED_VERSIONS: dict[str, str] = {
    "4.1.6": "4.1.6",
    "4.1.7": "4.1.6",
    "4.1.12": "4.1.12",
    "4.1.13": "4.1.12",
}


# The three small records are NamedTuples, not frozen dataclasses: as immutable, and a tenth
# of the cost to define (half a millisecond each, on every cold `validate`).
class Preset(NamedTuple):
    name: str
    vcpu: int
    memory_gb: int
    gpus: int = 0
    gpu_cluster_compatible: bool = False


class Platform(NamedTuple):
    name: str
    arch: str
    regions: tuple[str, ...]
    presets: dict[str, Preset]
    worker_excluded_presets: tuple[str, ...] = ()

    @property
    def is_gpu(self) -> bool:
        return self.name.startswith("gpu-")


class SizingTier(NamedTuple):
    name: str
    below: int | None  # worker count strictly below this; None = no upper bound
    presets: dict[str, str]  # role -> default cpu-d3 preset


@dataclass(frozen=True)
class Catalog:
    regions: dict[str, tuple[str, ...]]  # region -> known fabrics
    unverified_fabrics: dict[str, tuple[str, ...]]
    platforms: dict[str, Platform]
    disk_types: tuple[str, ...]
    image_disk_types: tuple[str, ...]
    granular_disk_types: tuple[str, ...]
    disk_granularity_gib: int
    filesystem_types: tuple[str, ...]
    boot_disk_min_gib: dict[str, int]
    role_min_vcpu: dict[str, int]
    role_excluded_presets: dict[str, tuple[str, ...]]
    sizing_tiers: tuple[SizingTier, ...]
    control_plane_min_vcpu: dict[str, dict[str, int]] = field(default_factory=dict)

    # --- look-ups -------------------------------------------------------------------------
    def platform(self, name: str) -> Platform | None:
        return self.platforms.get(name)

    def preset(self, platform: str, preset: str) -> Preset | None:
        plat = self.platforms.get(platform)
        return plat.presets.get(preset) if plat else None

    def platforms_in_region(self, region: str) -> list[str]:
        return [p.name for p in self.platforms.values() if region in p.regions]

    def sizing_tier(self, worker_count: int) -> SizingTier:
        """The recipe's tier for a total worker count (sum of pool sizes)."""
        for tier in self.sizing_tiers:
            if tier.below is None or worker_count < tier.below:
                return tier
        return self.sizing_tiers[-1]

    def tier(self, name: str) -> SizingTier:
        for tier in self.sizing_tiers:
            if tier.name == name:
                return tier
        raise KeyError(name)

    def fabric_status(self, region: str, fabric: str) -> str:
        """`known`, `unverified` (seen outside the recipe), `plausible`, `other-region:<r>`,
        or `unknown`.

        The public catalog of fabrics is incomplete, so a name that looks like a Nebius
        fabric is only warned about; a name that is clearly not one is an error.
        """
        if fabric in self.regions.get(region, ()):
            return "known"
        if fabric in self.unverified_fabrics.get(region, ()):
            return "unverified"
        for other, fabrics in self.regions.items():
            if other != region and (
                fabric in fabrics or fabric in self.unverified_fabrics.get(other, ())
            ):
                return f"other-region:{other}"
        if re.fullmatch(r"fabric-\d{1,3}", fabric) or re.fullmatch(
            rf"{re.escape(region)}-[a-z]", fabric
        ):
            return "plausible"
        return "unknown"

    def fabrics_for(self, region: str | None) -> list[str]:
        """Known fabrics, then unverified ones; none for an unknown or unset region."""
        return [*self.regions.get(region, ()), *self.unverified_fabrics.get(region, ())]


def _tuple(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in (value or ()))


def _build(raw: dict[str, Any]) -> Catalog:
    platforms: dict[str, Platform] = {}
    for name, body in raw["platforms"].items():
        presets = {
            pname: Preset(
                name=pname,
                vcpu=int(p["vcpu"]),
                memory_gb=int(p["memory_gb"]),
                gpus=int(p.get("gpus", 0)),
                gpu_cluster_compatible=bool(p.get("gpu_cluster_compatible", False)),
            )
            for pname, p in (body.get("presets") or {}).items()
        }
        platforms[name] = Platform(
            name=name,
            arch=str(body["arch"]),
            regions=_tuple(body.get("regions")),
            presets=presets,
            worker_excluded_presets=_tuple(body.get("worker_excluded_presets")),
        )
    tiers = tuple(
        SizingTier(
            name=str(t["name"]),
            below=t["below"],
            presets={r: str(t[r]) for r in ("system", "controller", "accounting", "nfs")},
        )
        for t in raw["sizing_tiers"]
    )
    return Catalog(
        regions={r: _tuple(b.get("fabrics")) for r, b in raw["regions"].items()},
        unverified_fabrics={r: _tuple(f) for r, f in raw.get("unverified_fabrics", {}).items()},
        platforms=platforms,
        disk_types=_tuple(raw["disk_types"]),
        image_disk_types=_tuple(raw["image_disk_types"]),
        granular_disk_types=_tuple(raw["granular_disk_types"]),
        disk_granularity_gib=int(raw["disk_granularity_gib"]),
        filesystem_types=_tuple(raw["filesystem_types"]),
        boot_disk_min_gib={k: int(v) for k, v in raw["boot_disk_min_gib"].items()},
        role_min_vcpu={k: int(v) for k, v in raw["role_min_vcpu"].items()},
        role_excluded_presets={k: _tuple(v) for k, v in raw["role_excluded_presets"].items()},
        sizing_tiers=tiers,
        control_plane_min_vcpu={
            role: {t: int(v) for t, v in per_tier.items()}
            for role, per_tier in raw.get("control_plane_min_vcpu", {}).items()
        },
    )


CATALOG_FILE = Path(__file__).parent / "data" / "catalog.yaml"
# (checksum of the file, its data) parsed by an earlier process: see `use_parsed`
_parsed: tuple[int, Any] | None = None


def use_parsed(checksum: int, data: Any) -> None:
    """Offer the catalog file's data as parsed earlier (the lean validator keeps it in its
    cache: parsing the YAML is a good part of a cold `validate`). Used only while the file's
    CRC-32 is still `checksum`."""
    global _parsed
    _parsed = (checksum, data)


def catalog_data() -> tuple[int, Any]:
    """The catalog file's CRC-32 and its data, parsed from the file unless `use_parsed`
    offered this very file's data already."""
    import zlib

    # The file beside this module, read directly: importlib.resources costs more to import
    # than the whole parse, on every cold `validate`. (setuptools installs package data as
    # plain files; the package is never imported from a zip.)
    raw = CATALOG_FILE.read_bytes()
    checksum = zlib.crc32(raw)
    if _parsed is not None and _parsed[0] == checksum:
        return checksum, _parsed[1]
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return checksum, yaml.load(raw.decode("utf-8"), Loader=loader)


@cache
def load_catalog() -> Catalog:
    """The packaged catalog, parsed once per process."""
    global _parsed
    if _parsed is not None:
        try:
            return _build(catalog_data()[1])
        except (KeyError, TypeError, ValueError, AttributeError):
            _parsed = None  # a damaged offer: the file itself decides
    return _build(catalog_data()[1])
