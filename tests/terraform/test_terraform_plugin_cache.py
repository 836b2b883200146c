"""The shared provider cache: where it is, that two inits never write it at once, and that a
new cluster gets the lock file of the last init of its recipe."""

from __future__ import annotations

import asyncio
from pathlib import Path

from npa_sop_tui.terraform import plugin_cache


def test_cache_dir_precedence(npa_home: Path, tmp_path: Path) -> None:
    assert plugin_cache.cache_dir(None, env={}) == npa_home / "terraform-plugins"
    assert plugin_cache.cache_dir(str(tmp_path / "s"), env={}) == tmp_path / "s"
    own = {"TF_PLUGIN_CACHE_DIR": str(tmp_path / "own")}
    assert plugin_cache.cache_dir(str(tmp_path / "s"), env=own) == tmp_path / "own"


async def test_two_inits_never_hold_the_cache_at_once(tmp_path: Path) -> None:
    inside: list[int] = []
    overlaps: list[int] = []

    async def init(n: int) -> None:
        async with plugin_cache.guarded_init(tmp_path / "cache") as env:
            assert env == {"TF_PLUGIN_CACHE_DIR": str(tmp_path / "cache")}
            if inside:
                overlaps.append(n)
            inside.append(n)
            await asyncio.sleep(0.2)
            inside.remove(n)

    await asyncio.gather(*(init(n) for n in range(3)))
    assert overlaps == []


def test_lock_file_seeded_for_the_next_cluster(tmp_path: Path) -> None:
    cache, first, second = tmp_path / "cache", tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    (first / ".terraform.lock.hcl").write_text('provider "x" {}\n')
    plugin_cache.keep_lock_file(cache, first, "recipe@ref")
    assert plugin_cache.seed_lock_file(cache, second, "recipe@ref")
    assert (second / ".terraform.lock.hcl").read_text() == 'provider "x" {}\n'
    assert not plugin_cache.seed_lock_file(cache, second, "recipe@ref")  # never overwrites
    third = tmp_path / "c"
    third.mkdir()
    assert not plugin_cache.seed_lock_file(cache, third, "other@ref")
