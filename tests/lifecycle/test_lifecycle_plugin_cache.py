"""A second cluster's `terraform init` takes its providers from the shared cache (real
Terraform, the sandbox recipe and its null provider)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.mark.terraform
async def test_second_cluster_takes_providers_from_the_shared_cache(
    make_spec: Any, sandbox_options: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from npa_sop_tui import lifecycle

    cache = tmp_path / "shared-cache"
    monkeypatch.setenv("NPA_PLUGIN_CACHE_DIR", str(cache))
    results = []
    for name in ("cache-a", "cache-b"):
        spec = make_spec(name, workers=[{"name": "cpu", "size": 1}])
        results.append(await lifecycle.plan(spec, options=sandbox_options()))
    cached = list(cache.glob("registry.terraform.io/hashicorp/null/*/*/terraform-provider-null*"))
    assert cached, sorted(str(p) for p in cache.rglob("*"))
    for result in results:
        linked = Path(result.install_dir) / ".terraform" / "providers" / "registry.terraform.io"
        provider_dirs = list(linked.glob("hashicorp/null/*/*"))
        # Linked from the cache (which may itself link on to the sandbox's mirror).
        assert provider_dirs and all(
            p.is_symlink() and cache in Path(p.readlink()).parents for p in provider_dirs
        ), [(p, p.readlink() if p.is_symlink() else None) for p in provider_dirs]
