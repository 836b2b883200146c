"""One Terraform provider cache for every cluster on this machine.

Without it each cluster folder downloads every provider again on `terraform init` (the
recipe's nebius, helm, kubernetes … providers: hundreds of MB). Terraform's own cache
(`TF_PLUGIN_CACHE_DIR`) stores each provider once and links it into every folder, but its
documentation says the cache has no concurrency protection: two `init`s writing it at once
can corrupt it. npa therefore holds an exclusive flock on `<cache>/.npa-init.lock` around each
`init` that uses the cache; `plan`, `apply` and `destroy` only read the linked providers.

Where: `--plugin-cache-dir`, else `NPA_PLUGIN_CACHE_DIR`, else `plugin_cache_dir` in the npa
config, else `<npa home>/terraform-plugins`. A `TF_PLUGIN_CACHE_DIR` of the user's
own is respected (and guarded the same way).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

from npa_sop_tui.home import paths

TF_CACHE_ENV = "TF_PLUGIN_CACHE_DIR"
CACHE_ENV = "NPA_PLUGIN_CACHE_DIR"
LOCK_NAME = ".npa-init.lock"


def cache_dir(setting: str | None = None, env: Mapping[str, str] | None = None) -> Path:
    """The cache folder: the user's TF_PLUGIN_CACHE_DIR, the setting, or the npa home's."""
    env = os.environ if env is None else env
    chosen = (env.get(TF_CACHE_ENV) or "").strip() or setting
    return Path(chosen).expanduser() if chosen else paths.npa_home() / "terraform-plugins"


@contextlib.asynccontextmanager
async def guarded_init(cache: Path) -> AsyncIterator[dict[str, str]]:
    """Hold the cache's init lock (waiting for another init in a worker thread, never on the
    event loop) and yield the environment that points Terraform at the cache."""
    from npa_sop_tui.home.files import open_private

    fd = open_private(cache / LOCK_NAME, os.O_RDWR | os.O_CREAT)  # makes the cache folder
    try:
        await asyncio.to_thread(fcntl.flock, fd, fcntl.LOCK_EX)
        yield {TF_CACHE_ENV: str(cache)}
    finally:
        os.close(fd)  # closing releases the flock


LOCK_FILE = ".terraform.lock.hcl"


def _kept_lock(cache: Path, recipe_key: str) -> Path:
    import hashlib

    return cache / "lock-files" / (hashlib.sha256(recipe_key.encode()).hexdigest()[:16] + ".hcl")


def seed_lock_file(cache: Path, install_dir: Path, recipe_key: str) -> bool:
    """Give a new cluster folder the dependency lock file an earlier init of the same recipe
    wrote. Terraform 1.4 and later take a provider from the cache only when the lock file
    already holds its checksums; without one every new folder would download again. The
    checksums still come from the registry's first answer, so nothing is trusted blindly."""
    from npa_sop_tui.home.fsutil import atomic_write_text

    target = install_dir / LOCK_FILE
    kept = _kept_lock(cache, recipe_key)
    if target.exists() or not kept.is_file():
        return False
    atomic_write_text(target, kept.read_text(encoding="utf-8"))
    return True


def keep_lock_file(cache: Path, install_dir: Path, recipe_key: str) -> None:
    """After a successful init: remember the folder's lock file for the next cluster."""
    from npa_sop_tui.home.fsutil import atomic_write_text, ensure_dir

    source = install_dir / LOCK_FILE
    if not source.is_file():
        return
    kept = _kept_lock(cache, recipe_key)
    ensure_dir(kept.parent)
    atomic_write_text(kept, source.read_text(encoding="utf-8"))
