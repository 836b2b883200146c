"""A new cluster folder's first `terraform init` from what a sibling's init already did.

Profiling `TF_LOG=trace` on a second cluster with every provider in the shared cache shows
where its `init` goes: Terraform hashes each cached provider package (a sha256 over its
tens of MB) once to check it against the lock file and once more to record it, for every
provider, and asks the provider mirror for each provider's versions. That is most of the
first cluster's cost again, although nothing new is installed. Every provider-installation
route of `terraform init` (the cache, a filesystem mirror, `-plugin-dir`, a filled
`.terraform/providers`) goes through that hashing; there is no switch to skip it.

So for a folder that has never been initialised, npa does the provider part itself, the way
Terraform's cache does it, and lets Terraform do the per-cluster part:

- after a full `init` that linked every provider from the shared cache, npa keeps a seed in
  the cache: the lock file and the provider folders, under a key made of the Terraform
  version, the CLI config (provider installation rules) and every `.tf`/`.tf.json` file of
  the root module and of each module it calls (names and contents; npa's backend override
  is left out, it is per cluster). Same key means the same recipe, provider requirements and
  Terraform, hence the same providers and lock;
- a new folder runs `terraform get` (modules, no providers), computes the key, and when a
  seed exists and the cache still holds every provider in it, Terraform initialises the
  backend from the folder's own backend override alone (a configuration with no providers,
  `TF_DATA_DIR` pointing at the folder's `.terraform`), so the backend record (S3 key per
  cluster) is always Terraform's own; npa then writes the lock file and links the providers.

It stays safe because Terraform checks everything again when it uses the folder: `plan`
refuses a provider whose package does not match the lock file's checksums (a changed cache)
and a backend whose configuration does not match the record. Anything else (no seed, a
provider gone from the cache, a lock file of another origin, a recipe with its own backend
block, a failed step) undoes the partial work and falls back to a normal `init`, with the
reason in the operation log. Callers hold the plugin cache's init lock throughout.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import shutil
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TypeVar

from npa_sop_tui.home.files import ensure_dir, make_link
from npa_sop_tui.home.fsutil import SECRET_MODE, atomic_write_bytes, atomic_write_text
from npa_sop_tui.terraform import init_fingerprint, plugin_cache
from npa_sop_tui.terraform.init_fingerprint import module_dirs
from npa_sop_tui.terraform.plugin_cache import LOCK_FILE
from npa_sop_tui.terraform.state import STATE_FILE

SEEDS = "npa-init-seeds"
# The per-cluster backend file npa writes for the s3 store (state/backend.py uses this name).
BACKEND_OVERRIDE = "terraform_backend_override.tf.json"
STUB = ".npa-init-backend"
_BACKEND = re.compile(r'\bbackend\s*"|"backend"\s*:')
_R = TypeVar("_R")
Run = Callable[[list[str], Path, Mapping[str, str]], Awaitable[_R]]


class NotSeeded(Exception):
    """Why the seeded path was not taken (said in the operation log)."""


def seed_key(install_dir: Path, terraform_version: str, env: Mapping[str, str]) -> str | None:
    """What must be equal for two folders to get the same providers and lock file, read
    after `terraform get`/`init` (the module manifest names the called modules' folders;
    a configuration without module calls has none); None when a file is unreadable."""
    digest = hashlib.sha256()

    def add(*parts: str | bytes) -> None:
        for part in parts:
            data = part.encode() if isinstance(part, str) else part
            digest.update(len(data).to_bytes(8, "big") + data)

    add("terraform", terraform_version)
    config = env.get("TF_CLI_CONFIG_FILE")
    try:
        add("cli config", Path(config).read_bytes() if config else b"")
    except OSError:
        add("<unreadable cli config>")
    # sorted: `init` and `get` list the same modules in different orders
    for key, folder in sorted(module_dirs(install_dir)):
        add("module", key)
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            return None
        for name in names:
            if not name.endswith((".tf", ".tf.json")) or (key == "" and name == BACKEND_OVERRIDE):
                continue
            try:
                add(name, (folder / name).read_bytes())
            except OSError:
                return None
    return digest.hexdigest()


def _seed_file(cache: Path, key: str) -> Path:
    return cache / SEEDS / f"{key[:32]}.json"


def _linked_providers(install_dir: Path, cache: Path) -> list[str] | None:
    """The provider folders (`host/ns/type/version/os_arch`) `init` linked from the cache;
    None when any came from elsewhere (then a seed could not reproduce this folder)."""
    root = install_dir / ".terraform" / "providers"
    real_cache = cache.resolve()
    found: list[str] = []
    for entry in sorted(root.glob("*/*/*/*/*")):
        if not entry.is_symlink():
            return None
        rel = entry.relative_to(root)
        if entry.resolve() != (real_cache / rel).resolve() or not entry.resolve().is_dir():
            return None
        found.append(str(rel))
    return found or None


def remember(
    cache: Path, install_dir: Path, terraform_version: str, env: Mapping[str, str]
) -> bool:
    """After a successful full `init`: keep this folder's lock file and providers as the seed
    for the next folder with the same key. True when a seed was written."""
    key = seed_key(install_dir, terraform_version, env)
    providers = _linked_providers(install_dir, cache)
    try:
        lock = (install_dir / LOCK_FILE).read_text("utf-8")
    except OSError:
        return False
    if key is None or providers is None:
        return False
    doc = {"lock": lock, "providers": providers, "from": str(install_dir)}
    ensure_dir(cache / SEEDS)
    atomic_write_text(_seed_file(cache, key), json.dumps(doc, indent=1), mode=SECRET_MODE)
    return True


def _load_seed(cache: Path, key: str) -> dict[str, object]:
    try:
        doc = json.loads(_seed_file(cache, key).read_text("utf-8"))
    except (OSError, ValueError):
        raise NotSeeded(
            "no earlier init of the same recipe, providers and Terraform version left a seed"
        ) from None
    if not (isinstance(doc, dict) and isinstance(doc.get("lock"), str)):
        raise NotSeeded("the seed in the plugin cache is unreadable")
    providers = doc.get("providers")
    if not isinstance(providers, list) or not all(isinstance(p, str) for p in providers):
        raise NotSeeded("the seed in the plugin cache is unreadable")
    for rel in providers:
        folder = cache / rel
        if not folder.is_dir() or not any(folder.iterdir()):
            raise NotSeeded(f"the plugin cache no longer holds {rel}")
    return doc


def _own_backend_block(install_dir: Path) -> bool:
    for path in install_dir.iterdir():
        if path.name == BACKEND_OVERRIDE or not path.name.endswith((".tf", ".tf.json")):
            continue
        try:
            if _BACKEND.search(path.read_text("utf-8", errors="replace")):
                return True
        except OSError:
            return True
    return False


async def _backend_alone(
    install_dir: Path, init_args: list[str], run: Run[_R], succeeded: Callable[[_R], bool]
) -> _R | None:
    """`terraform init` of the folder's backend override alone (no providers, no modules),
    writing its record into the folder's `.terraform`; None for the local default backend."""
    override = install_dir / BACKEND_OVERRIDE
    if not override.is_file():
        return None
    stub = install_dir / STUB
    shutil.rmtree(stub, ignore_errors=True)
    ensure_dir(stub)
    try:
        backend = stub / "backend.tf.json"
        atomic_write_bytes(backend, override.read_bytes(), mode=SECRET_MODE)
        data_dir = {"TF_DATA_DIR": str((install_dir / ".terraform").resolve())}
        return await run(["init", *init_args, "-get=false"], stub, data_dir)
    finally:
        shutil.rmtree(stub, ignore_errors=True)


def _link_providers(install_dir: Path, cache: Path, providers: list[str]) -> None:
    root = install_dir / ".terraform" / "providers"
    for rel in providers:
        target = cache.resolve() / rel  # into the cache, like Terraform's own links
        link = root / rel
        if link.is_symlink() and link.resolve() == target.resolve():
            continue  # the backend init installed it for a resource in the cluster's state
        make_link(link, target)


async def init_from_seed(
    install_dir: Path,
    cache: Path,
    terraform_version: str,
    env: Mapping[str, str],
    init_args: list[str],
    run: Run[_R],
    succeeded: Callable[[_R], bool],
    note: Callable[[str], None],
) -> _R | None:
    """Initialise a never-initialised folder from a seed; None (and the reason noted, the
    partial work undone) when a normal `init` must run instead. `init_args` are the
    arguments after `init` (flags and backend settings)."""

    async def attempt() -> _R:
        if not any((cache / SEEDS).glob("*.json")):
            raise NotSeeded("no earlier init left a seed in the plugin cache")
        if _own_backend_block(install_dir):
            raise NotSeeded("the recipe's root module declares a backend of its own")
        if (install_dir / BACKEND_OVERRIDE).is_file() and (install_dir / STATE_FILE).exists():
            raise NotSeeded("a local state file is here; a full init decides whether it moves")
        ensure_dir(install_dir / ".terraform")
        # Modules and backend are independent (different files under .terraform): one Terraform
        # start each, side by side, is most of what a seeded init costs.
        both = await asyncio.gather(
            run(["get", "-no-color"], install_dir, {}),
            _backend_alone(install_dir, init_args, run, succeeded),
            return_exceptions=True,  # both have ended before anything is cleaned up
        )
        for outcome in both:
            if isinstance(outcome, BaseException):
                raise outcome
        got, backend = both
        if not succeeded(got):
            raise NotSeeded("terraform get failed")
        if backend is not None and not succeeded(backend):
            raise NotSeeded("terraform init of the backend alone failed")
        key = await asyncio.to_thread(seed_key, install_dir, terraform_version, env)
        if key is None:
            raise NotSeeded("a module's files could not be read")
        doc = await asyncio.to_thread(_load_seed, cache, key)
        lock_text = str(doc["lock"])
        lock = install_dir / LOCK_FILE
        if lock.exists() and lock.read_text("utf-8", errors="replace") != lock_text:
            raise NotSeeded("the folder's lock file differs from the seed's")
        atomic_write_text(lock, lock_text)
        providers = doc["providers"]
        assert isinstance(providers, list)  # _load_seed checked it
        _link_providers(install_dir, cache, [str(p) for p in providers])
        return backend if backend is not None else got

    dot = install_dir / ".terraform"
    if dot.exists():
        return None  # not a first init: Terraform reconciles what is there
    lock = install_dir / LOCK_FILE
    had_lock = lock.exists()
    try:
        result = await attempt()
    except (NotSeeded, OSError) as why:
        shutil.rmtree(dot, ignore_errors=True)
        if not had_lock:
            lock.unlink(missing_ok=True)
        note(f"terraform init: providers not taken from the plugin cache ({why}); full init")
        return None
    note(
        "terraform init: providers linked from the plugin cache as an earlier init of the "
        "same recipe and Terraform installed them; Terraform set up modules and backend"
    )
    return result


async def init_with_cache(
    install_dir: Path,
    cache: Path,
    terraform_version: str,
    recipe_key: str,
    init_args: list[str],
    env: Mapping[str, str],
    run: Run[_R],
    succeeded: Callable[[_R], bool],
    note: Callable[[str], None],
) -> _R | None:
    """A cluster folder's `init` the way every deploy runs it, under the plugin cache's init
    lock (held by the caller): skipped when its fingerprint is unchanged, from a seed for a
    never-initialised folder, else a full `init` whose providers and lock file then seed the
    next folder. None when skipped. `run(args, cwd, extra_env)` runs Terraform."""
    args = ["init", *init_args]

    async def seeded_or_full() -> _R:
        seeded = await init_from_seed(
            install_dir, cache, terraform_version, env, init_args, run, succeeded, note
        )
        if seeded is not None:
            return seeded
        result = await run(args, install_dir, {})
        if succeeded(result):
            plugin_cache.keep_lock_file(cache, install_dir, recipe_key)
            await asyncio.to_thread(remember, cache, install_dir, terraform_version, env)
        return result

    plugin_cache.seed_lock_file(cache, install_dir, recipe_key)
    return await init_fingerprint.init_unless_unchanged(
        install_dir, terraform_version, args, env, seeded_or_full, succeeded
    )
