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


@pytest.mark.terraform
async def test_plan_again_skips_init_until_the_folder_changes(
    make_spec: Any, sandbox_options: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from npa_sop_tui import lifecycle
    from tests.testkit.lifecycle import Recorder

    monkeypatch.setenv("NPA_PLUGIN_CACHE_DIR", str(tmp_path / "shared-cache"))
    spec = make_spec("again", workers=[{"name": "cpu", "size": 1}])

    async def skipped() -> bool:
        seen = Recorder()
        result = await lifecycle.plan(spec, options=sandbox_options(), on_event=seen)
        assert seen.kinds("operation_finished")[-1].result == "ok"
        lines = [e.text for e in seen.kinds("log_line")]
        skip = [t for t in lines if t.startswith("terraform init skipped")]
        ran = [t for t in lines if "Terraform has been successfully initialized" in t]
        assert bool(skip) != bool(ran), lines  # exactly one of the two happened
        install_dir.append(Path(result.install_dir))
        return bool(skip)

    install_dir: list[Path] = []
    assert not await skipped()  # the first plan inits
    assert await skipped()  # the second finds nothing changed
    shutil.rmtree(install_dir[-1] / ".terraform")
    assert not await skipped()  # a deleted .terraform inits again
