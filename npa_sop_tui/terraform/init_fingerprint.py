"""Skip `terraform init` when nothing it depends on changed since the last successful one.

Users re-run plan and deploy many times on the same cluster folder. Even with every provider
in the shared cache, `init` re-hashes each cached provider package against the lock file (about
0.3 s per 20 MB provider) and walks every module, so a re-run pays seconds for nothing.

What `init` reads, and so what the fingerprint covers:

- the Terraform version (a new binary may want other provider protocols or lock-file rules);
- every `.tf`/`.tf.json` file of the root module and of each module `init` installed (from
  `.terraform/modules/modules.json`): module sources, `required_providers`, the backend block
  and npa's backend override file all live there; a new recipe ref changes them; and where
  each local module source resolves now (an installation's `modules` link may point at
  another recipe than the one `init` resolved);
- the dependency lock file `.terraform.lock.hcl`;
- the extra `init` arguments (backend settings) and the provider-installation settings
  (`TF_PLUGIN_CACHE_DIR`, the CLI config file named by `TF_CLI_CONFIG_FILE` and its text);
- what `init` left in `.terraform`: every entry's path, kind, size and modification time, and
  for links whether their target (a provider in the shared cache) still exists. A deleted or
  pruned `.terraform`, or a cleaned cache, therefore re-inits.

The fingerprint is written into `.terraform` after a successful `init` only, so a folder whose
`.terraform` is gone has none and always re-inits. Anything unreadable counts as changed.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import TypeVar

RECORD = "npa-init-fingerprint.json"
_ENV_KEYS = ("TF_PLUGIN_CACHE_DIR", "TF_CLI_CONFIG_FILE")
_R = TypeVar("_R")


def module_dirs(install_dir: Path) -> list[tuple[str, Path]]:
    """(key, folder) of the root module ("") and of every module `init`/`get` recorded."""
    dirs = [("", install_dir)]
    try:
        doc = json.loads((install_dir / ".terraform/modules/modules.json").read_text("utf-8"))
    except (OSError, ValueError):
        return dirs
    for module in doc.get("Modules") or []:
        if not isinstance(module, dict):
            continue
        key, folder = module.get("Key"), module.get("Dir")
        if isinstance(key, str) and key and isinstance(folder, str) and folder:
            dirs.append((key, (install_dir / folder).resolve()))
    return dirs


def _local_sources(install_dir: Path) -> Iterable[str]:
    """Where each root module call's local source resolves now. `init` records the folder
    it resolved then (through links): an installation whose `modules` link moved to another
    recipe (a new operator version's stand-in) must be initialised again."""
    try:
        doc = json.loads((install_dir / ".terraform/modules/modules.json").read_text("utf-8"))
    except (OSError, ValueError):
        return
    for module in doc.get("Modules") or []:
        key = module.get("Key") if isinstance(module, dict) else None
        source = module.get("Source") if isinstance(module, dict) else None
        top_level = isinstance(key, str) and "." not in key
        if top_level and isinstance(source, str) and source.startswith(("./", "../")):
            yield f"source {key} {(install_dir / source).resolve()}"


def _module_dirs(install_dir: Path) -> list[Path]:
    """The root module and every module `init` recorded (local and downloaded)."""
    return [folder for _, folder in module_dirs(install_dir)]


def _config_files(install_dir: Path) -> Iterable[tuple[str, bytes]]:
    seen: set[Path] = set()
    for folder in _module_dirs(install_dir):
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            yield str(folder), b"<missing>"
            continue
        for name in names:
            path = folder / name
            if not name.endswith((".tf", ".tf.json")) or path in seen:
                continue
            seen.add(path)
            try:
                yield str(path), path.read_bytes()
            except OSError:
                yield str(path), b"<unreadable>"


def _dot_terraform(install_dir: Path) -> Iterable[str]:
    root = install_dir / ".terraform"
    for folder, subdirs, files in os.walk(root):
        subdirs.sort()
        for name in sorted(subdirs + files):
            path = Path(folder) / name
            rel = path.relative_to(root)
            if str(rel) == RECORD:
                continue
            try:
                st = path.lstat()
            except OSError:
                yield f"{rel} gone"
                continue
            if path.is_symlink():
                yield f"{rel} -> {os.readlink(path)} exists={path.exists()}"
            elif path.is_file():
                yield f"{rel} {st.st_size} {st.st_mtime_ns}"
            else:
                yield f"{rel}/"


def fingerprint(
    install_dir: Path, terraform_version: str, args: list[str], env: Mapping[str, str]
) -> str | None:
    """The fingerprint of everything `init` depends on; None when there is no `.terraform`."""
    if not (install_dir / ".terraform").is_dir():
        return None
    digest = hashlib.sha256()

    def add(*parts: str | bytes) -> None:
        for part in parts:
            data = part.encode() if isinstance(part, str) else part
            digest.update(len(data).to_bytes(8, "big") + data)

    add("terraform", terraform_version, "args", *args)
    for key in _ENV_KEYS:
        add(key, env.get(key) or "")
    config = env.get("TF_CLI_CONFIG_FILE")
    if config:
        try:
            add(Path(config).read_bytes())
        except OSError:
            add("<no cli config>")
    try:
        add("lock", (install_dir / ".terraform.lock.hcl").read_bytes())
    except OSError:
        add("<no lock file>")
    for path, text in _config_files(install_dir):
        add(path, text)
    for line in _local_sources(install_dir):
        add(line)
    for line in _dot_terraform(install_dir):
        add(line)
    return digest.hexdigest()


def recorded(install_dir: Path) -> str | None:
    try:
        doc = json.loads((install_dir / ".terraform" / RECORD).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    value = doc.get("fingerprint") if isinstance(doc, dict) else None
    return value if isinstance(value, str) else None


def record(install_dir: Path, value: str) -> None:
    from npa_sop_tui.home.fsutil import atomic_write_text

    atomic_write_text(install_dir / ".terraform" / RECORD, json.dumps({"fingerprint": value}))


def forget(install_dir: Path) -> None:
    (install_dir / ".terraform" / RECORD).unlink(missing_ok=True)


def forget_moved_modules(install_dir: Path) -> None:
    """`init` keeps a module it installed while its source text is unchanged, even when the
    folder that source resolves to is another one now (an installation's `modules` link
    moved to another recipe): drop the record of installed modules then, so `init` installs
    them from where they are."""
    manifest = install_dir / ".terraform/modules/modules.json"
    try:
        doc = json.loads(manifest.read_text("utf-8"))
    except (OSError, ValueError):
        return
    for module in doc.get("Modules") or []:
        if not isinstance(module, dict):
            continue
        key, source, folder = module.get("Key"), module.get("Source"), module.get("Dir")
        local = isinstance(source, str) and source.startswith(("./", "../"))
        if not (isinstance(key, str) and "." not in key and local and isinstance(folder, str)):
            continue
        if (install_dir / str(source)).resolve() != (install_dir / folder).resolve():
            manifest.unlink(missing_ok=True)
            return


async def init_unless_unchanged(
    install_dir: Path,
    terraform_version: str,
    args: list[str],
    env: Mapping[str, str],
    run_init: Callable[[], Awaitable[_R]],
    succeeded: Callable[[_R], bool],
) -> _R | None:
    """Run `init` (through `run_init`) unless the recorded fingerprint still matches; None
    when it was skipped. A failed `init` leaves no record, so the next run inits again."""
    import asyncio

    now = await asyncio.to_thread(fingerprint, install_dir, terraform_version, args, env)
    if now is not None and now == await asyncio.to_thread(recorded, install_dir):
        return None
    await asyncio.to_thread(forget, install_dir)
    await asyncio.to_thread(forget_moved_modules, install_dir)
    result = await run_init()
    if succeeded(result):
        after = await asyncio.to_thread(fingerprint, install_dir, terraform_version, args, env)
        if after is not None:
            await asyncio.to_thread(record, install_dir, after)
    return result
