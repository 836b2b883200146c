"""`state migrate`: move a cluster's Terraform state and records between local and the bucket.

The state document is copied byte for byte (same lineage, same serial), then Terraform itself
reads it back through the new backend (`terraform state pull`) and the copy counts only when
lineage, serial and resource count all match. The source is never removed before that: on
any failure the new copy is removed again and the cluster stays where it was. After success
the old local state is kept beside, renamed (`terraform.tfstate.migrated-<time>`), and the
bucket keeps its object history (versioning).

Both ways hold the cluster's lock in the bucket (and this machine's) for the whole move.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from npa_sop_tui.errors import OperationError, UsageError
from npa_sop_tui.home.fsutil import SECRET_MODE, atomic_write_bytes
from npa_sop_tui.state import backend
from npa_sop_tui.state.bucket import ConditionFailed
from npa_sop_tui.state.local import LocalStore
from npa_sop_tui.state.s3 import S3Store
from npa_sop_tui.terraform.state import STATE_FILE, instances

if TYPE_CHECKING:
    from npa_sop_tui.environment import Environment
    from npa_sop_tui.home.inventory_records import InventoryEntry
    from npa_sop_tui.terraform.runner import TerraformRunner


@dataclass(frozen=True)
class Migrated:
    name: str
    to: Literal["s3", "local"]
    where: str
    serial: int | None
    lineage: str | None
    resources: int


def _summary(state: dict[str, Any] | None) -> tuple[int | None, str | None, int]:
    if not state:
        return None, None, 0
    return state.get("serial"), state.get("lineage"), sum(1 for _ in instances(state))


async def _runner(
    environment: Environment, entry: InventoryEntry, bucket_store: S3Store
) -> tuple[TerraformRunner, str]:
    """Terraform as the cluster's recipe needs it (with the bucket's key), and its version."""
    from npa_sop_tui.home.recorded_paths import recipe_dir
    from npa_sop_tui.terraform.runner import TerraformRunner

    recipe = await environment.recipe(recipe_dir(entry, environment.settings))
    setup = await environment.terraform(recipe)
    keys = await asyncio.to_thread(bucket_store.terraform_env)
    env = {**setup.env, **environment.terraform_env(), **keys}
    return TerraformRunner(
        setup.binary.path, operation_id="migrate", on_event=lambda _e: None, env=env
    ), setup.binary.version


async def _pull(runner: TerraformRunner, install_dir: Path, args: list[str]) -> dict[str, Any]:
    """Re-initialise on the backend now configured and read the state back through it."""
    code, _, err = await runner.capture(
        ["init", "-input=false", "-no-color", *args], cwd=install_dir
    )
    if code != 0:
        raise OperationError(f"terraform init on the new backend failed: {err.strip()[-400:]}")
    code, out, err = await runner.capture(["state", "pull"], cwd=install_dir)
    if code != 0:
        raise OperationError(f"terraform state pull failed: {err.strip()[-400:]}")
    try:
        doc = json.loads(out or "{}")
    except ValueError:
        raise OperationError("terraform state pull returned no state document") from None
    return doc if isinstance(doc, dict) else {}


def _verify(source: dict[str, Any] | None, copy: dict[str, Any], where: str) -> None:
    want, got = _summary(source), _summary(copy)
    if source is not None and want != got:
        raise OperationError(
            f"the copy in {where} does not match the source (serial, lineage, resources: "
            f"{want} ≠ {got}); the source is left as it was and the copy removed"
        )


async def migrate(
    name: str,
    to: Literal["s3", "local"],
    *,
    environment: Environment,
    bucket_store: S3Store,
    note: Callable[[str], None] = lambda _t: None,
) -> Migrated:
    local = LocalStore()
    source, target = (local, bucket_store) if to == "s3" else (bucket_store, local)
    entry = source.get(name)
    if entry is None:
        there = target.get(name)
        raise UsageError(
            f"cluster {name!r} is not in {source.describe()}"
            + (f"; it is already in {target.describe()}" if there is not None else ""),
            hint="`npa soperator list` shows where clusters are",
        )
    from npa_sop_tui.home.recorded_paths import install_dir as recorded_install_dir

    # a record's path is data: used inside this home, or where the settings point
    install_dir = recorded_install_dir(entry, environment.settings, shared=False)
    if install_dir is None or not install_dir.is_dir():
        raise UsageError(
            f"cluster {name!r} has no installation folder on this machine "
            f"({entry.install_dir or 'none recorded'})",
            hint="migrate from the machine that deployed it last",
        )
    lock = bucket_store.lock(name, operation="migrate")
    lock.acquire()
    try:
        runner, version = await _runner(environment, entry, bucket_store)
        if to == "s3":
            result = await _to_bucket(name, install_dir, bucket_store, runner, version, note)
        else:
            result = await _to_local(name, install_dir, bucket_store, runner, note)
        _move_records(name, entry, source, target)
        return result
    finally:
        lock.release()


async def _to_bucket(
    name: str,
    install_dir: Path,
    store: S3Store,
    runner: TerraformRunner,
    version: str,
    note: Callable[[str], None],
) -> Migrated:
    state_path = install_dir / STATE_FILE
    raw = state_path.read_bytes() if state_path.is_file() else None
    source = json.loads(raw) if raw else None
    key = store.tfstate_key(name)
    existing = store.read_tfstate(name)
    if existing is not None and _summary(existing)[2]:
        raise UsageError(
            f"the bucket already holds a state with resources for {name!r} ({key})",
            hint="nothing was changed; that cluster may belong to someone else",
        )
    etag = None
    if raw:
        note(f"copying {state_path} to s3://{store.location.bucket}/{key}")
        try:
            etag = store.bucket.put(key, raw, if_none_match=existing is None)
        except ConditionFailed:
            raise UsageError(f"someone wrote {key} just now; nothing was changed") from None
    backend.configure_installation(install_dir, store, name, version)
    try:
        # The local file must not count as state for the s3 backend's init (it would ask to
        # migrate it itself); it goes aside first and is renamed back on failure.
        aside = install_dir / f"{STATE_FILE}.migrated-{time.strftime('%Y%m%dT%H%M%S')}"
        if raw:
            os.replace(state_path, aside)
        try:
            copy = await _pull(runner, install_dir, ["-reconfigure"])
            _verify(source, copy, f"s3://{store.location.bucket}/{key}")
        except BaseException:
            if raw:
                os.replace(aside, state_path)
            raise
    except BaseException:
        backend.configure_installation(install_dir, LocalStore(), name, version)
        if etag:
            store.bucket.delete(key, if_match=etag)
        raise
    serial, lineage, count = _summary(source)
    note(f"verified through Terraform: serial {serial}, {count} resources")
    return Migrated(name, "s3", f"s3://{store.location.bucket}/{key}", serial, lineage, count)


async def _to_local(
    name: str,
    install_dir: Path,
    store: S3Store,
    runner: TerraformRunner,
    note: Callable[[str], None],
) -> Migrated:
    state_path = install_dir / STATE_FILE
    if backend.local_resource_count(install_dir):
        raise UsageError(
            f"{state_path} already holds a state with resources; nothing was changed",
            hint="move it aside yourself if it is stale",
        )
    key = store.tfstate_key(name)
    found = store.bucket.get(key)
    raw = found[0] if found is not None else None
    source = json.loads(raw) if raw else None
    if raw:
        note(f"copying s3://{store.location.bucket}/{key} to {state_path}")
        atomic_write_bytes(state_path, raw, mode=SECRET_MODE)
    # Back to the local backend: no override, and no record of the s3 one (Terraform keeps
    # using a recorded backend whatever the configuration says).
    saved = {
        path: path.read_bytes()
        for path in (install_dir / backend.OVERRIDE_FILE, install_dir / backend.BACKEND_RECORD)
        if path.is_file()
    }
    for path in saved:
        path.unlink()
    try:
        copy = await _pull(runner, install_dir, [])
        _verify(source, copy, str(state_path))
    except BaseException:
        for path, data in saved.items():
            atomic_write_bytes(path, data, mode=SECRET_MODE)
        state_path.unlink(missing_ok=True)
        raise
    if found is not None:  # verified: now the bucket's copy may go (its history stays)
        store.bucket.delete(key, if_match=str(found[1].get("ETag", "")))
    serial, lineage, count = _summary(source)
    note(f"verified through Terraform: serial {serial}, {count} resources")
    return Migrated(name, "local", str(state_path), serial, lineage, count)


def _move_records(name: str, entry: InventoryEntry, source: Any, target: Any) -> None:
    """The record, the spec and the operation logs follow the state."""
    from npa_sop_tui.home.inventory_records import operations_dir

    spec = source.read_spec(name)
    target.save(entry)
    if spec is not None:
        target.save_spec(name, spec)
    if isinstance(target, S3Store):
        logs = operations_dir(name)
        for log in sorted(logs.glob("*.ndjson")) if logs.is_dir() else []:
            target.bucket.put(
                target.location.key(name, "operations", log.name),
                log.read_bytes(),
                content_type="application/x-ndjson",
            )
    source.remove_records(name)
