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
    from npa_sop_tui.lifecycle import api as lifecycle

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

    from npa_sop_tui.lifecycle import api as lifecycle
    from tests.testkit.lifecycle import Recorder

    monkeypatch.setenv("NPA_PLUGIN_CACHE_DIR", str(tmp_path / "shared-cache"))
    spec = make_spec("again", workers=[{"name": "cpu", "size": 1}])

    async def init_was() -> str:
        seen = Recorder()
        result = await lifecycle.plan(spec, options=sandbox_options(), on_event=seen)
        assert seen.kinds("operation_finished")[-1].result == "ok"
        lines = [e.text for e in seen.kinds("log_line")]
        skip = [t for t in lines if t.startswith("terraform init skipped")]
        seeded = [t for t in lines if "providers linked from the plugin cache" in t]
        ran = [t for t in lines if "Terraform has been successfully initialized" in t]
        notes = [t for t in lines if t.startswith("terraform init")]
        assert len(skip) + len(seeded) + len(ran) == 1, lines  # exactly one of the three
        install_dir.append(Path(result.install_dir))
        return "skipped" if skip else "seeded" if seeded else "full: " + "; ".join(notes)

    install_dir: list[Path] = []
    assert (await init_was()).startswith("full: ")  # the first plan inits
    assert await init_was() == "skipped"  # the second finds nothing changed
    shutil.rmtree(install_dir[-1] / ".terraform")
    # A deleted .terraform inits again, from the seed the first init left in the cache; the
    # plan after it runs on the seeded folder.
    assert await init_was() == "seeded"
    assert await init_was() == "skipped"
