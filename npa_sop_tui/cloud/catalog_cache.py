"""Platforms and presets per region: live from PlatformService, cached, or the packaged catalog.

`npa soperator catalog refresh` stores what the cloud offers in `<npa home>/catalog/
platforms-<region>.json`; preflight and the wizard fall back to that file when the cloud does
not answer, and to the packaged catalog (`spec/data/catalog.yaml`) when there is no file.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path

from npa_sop_tui.cloud.model import PlatformOffer, PresetOffer


def cache_path(region: str) -> Path:
    """The cache file of `region`; `UsageError` when `region` is not a region name, whoever
    passed it (it becomes part of the file's name: `../x` must never name another file)."""
    from npa_sop_tui.errors import UsageError
    from npa_sop_tui.home.paths import npa_home
    from npa_sop_tui.spec.identity import region_problem

    problem = region_problem("region", region)
    if problem is not None:
        raise UsageError(problem, hint="regions look like eu-north1 (`nebius` lists them)")
    return npa_home() / "catalog" / f"platforms-{region}.json"


def write_cache(region: str, offers: list[PlatformOffer], *, source: str) -> Path:
    from npa_sop_tui.home.fsutil import atomic_write_text

    path = cache_path(region)  # atomic_write_text makes its folder 0700
    doc = {
        "region": region,
        "refreshed_at": time.time(),
        "source": source,
        "platforms": [asdict(o) for o in offers],
    }
    atomic_write_text(path, json.dumps(doc, indent=2, sort_keys=True) + "\n")
    return path


def cached_platforms(region: str | None) -> list[PlatformOffer] | None:
    """The refreshed list for `region`, or None when there is none (or it is unreadable)."""
    from npa_sop_tui.home.files import read_trusted
    from npa_sop_tui.spec.identity import region_problem

    if not region or region_problem("region", region) is not None:
        return None  # no cache can be named by it (the region's own check says why)
    # used only when nobody else could have written it (owner, mode, 0700 folder, no links)
    raw = read_trusted(cache_path(region), limit=4 * 1024 * 1024)
    if raw is None:
        return None
    try:
        doc = json.loads(raw)
        return [
            PlatformOffer(
                name=p["name"],
                presets=tuple(PresetOffer(**x) for x in p["presets"]),
                preemptible_allowed=bool(p.get("preemptible_allowed", False)),
            )
            for p in doc["platforms"]
        ]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def catalog_platforms(region: str | None) -> list[PlatformOffer]:
    """The packaged catalog's platforms for `region` (all platforms when no region)."""
    from npa_sop_tui.spec.catalog import load_catalog

    cat = load_catalog()
    names = cat.platforms_in_region(region) if region else list(cat.platforms)
    return [
        PlatformOffer(
            name=name,
            presets=tuple(
                PresetOffer(p.name, p.vcpu, p.memory_gb, p.gpus, p.gpu_cluster_compatible)
                for p in cat.platforms[name].presets.values()
            ),
            preemptible_allowed=cat.platforms[name].is_gpu,
        )
        for name in names
    ]
