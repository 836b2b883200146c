"""The catalog cache's file is named by its region: only a region name can name one."""

from __future__ import annotations

from pathlib import Path

import pytest

from npa_sop_tui.cloud.catalog_cache import cache_path, cached_platforms, write_cache
from npa_sop_tui.errors import UsageError


def test_a_region_is_used_as_a_path_cache_path_refuses_anything_but_a_region(
    npa_home: Path, tmp_path: Path
) -> None:
    assert cache_path("eu-north1") == npa_home / "catalog" / "platforms-eu-north1.json"
    victim = tmp_path / "victim"
    for region in (f"../../../..{victim}", "eu-north1/../../x", "eu north1", "x\n"):
        with pytest.raises(UsageError, match="is not a region name"):
            write_cache(region, [], source="nebius")
        assert cached_platforms(region) is None  # nothing read either
    assert not list(tmp_path.glob("victim*")) and not (npa_home / "catalog").exists()
