"""Terraform's side of the team state: the backend override file, the init guard, recovery.

With the s3 backend each installation gets `terraform_backend_override.tf.json` (the file
name upstream's own setup uses, in Terraform's JSON syntax): the bucket, the cluster's key,
path-style addressing and the checks an S3-compatible store cannot answer switched off. The
attribute names follow the Terraform version (its S3 backend was reworked in 1.6), and
S3-native state locking (`use_lockfile`) is turned on where Terraform has it (1.10 and later).
No credential is ever written here: Terraform reads them from the environment, like npa.

`init_args` refuses to let Terraform start from an empty state while the cluster's real state
is elsewhere (a local state with resources and the s3 backend configured, or the other way
round): that would plan to create every resource again. `state migrate` moves it instead.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from npa_sop_tui.home.fsutil import atomic_write_text
from npa_sop_tui.state.errors import StateBackendMismatch, StateUnreachable
from npa_sop_tui.state.store import StateStore
from npa_sop_tui.terraform.init_seed import BACKEND_OVERRIDE
from npa_sop_tui.terraform.state import STATE_FILE, instances, read_state

if TYPE_CHECKING:
    from npa_sop_tui.terraform.runner import TerraformRunner

OVERRIDE_FILE = BACKEND_OVERRIDE  # a seeded first init (terraform/init_seed.py) reads it too
BACKEND_RECORD = Path(".terraform") / "terraform.tfstate"
ERRORED_STATE = "errored.tfstate"


def _version(text: str) -> tuple[int, ...]:
    parts: list[int] = []
    for piece in text.lstrip("v").split("-")[0].split(".")[:3]:
        parts.append(int(piece) if piece.isdigit() else 0)
    return tuple(parts)


def supports_lockfile(terraform_version: str) -> bool:
    """S3-native state locking (`use_lockfile`) exists from Terraform 1.10 on."""
    return _version(terraform_version) >= (1, 10)


def backend_config(store: StateStore, name: str, terraform_version: str) -> dict[str, Any]:
    """The `backend "s3"` attributes for this cluster and Terraform version."""
    loc = store.location
    config: dict[str, Any] = {
        "bucket": loc.bucket,
        "key": loc.key(name, "terraform.tfstate"),
        "region": loc.region,
        "skip_credentials_validation": True,  # no STS behind an S3-compatible store
        "skip_region_validation": True,  # Nebius regions are not AWS regions
        "skip_metadata_api_check": True,
    }
    version = _version(terraform_version)
    if version >= (1, 6):
        config["endpoints"] = {"s3": loc.endpoint}
        config["use_path_style"] = True
        config["skip_requesting_account_id"] = True
        if version >= (1, 6, 3):
            config["skip_s3_checksum"] = True
    else:
        config["endpoint"] = loc.endpoint
        config["force_path_style"] = True
    if supports_lockfile(terraform_version):
        config["use_lockfile"] = True
    return config


def configure_installation(
    install_dir: Path, store: StateStore, name: str, terraform_version: str
) -> None:
    """Write (s3) or remove (local) the installation's backend override file."""
    path = install_dir / OVERRIDE_FILE
    if not store.shared:
        path.unlink(missing_ok=True)
        return
    doc = {"terraform": {"backend": {"s3": backend_config(store, name, terraform_version)}}}
    atomic_write_text(path, json.dumps(doc, indent=2) + "\n", mode=0o600)


def recorded_backend(install_dir: Path) -> dict[str, Any] | None:
    """The backend `terraform init` last set up in this folder ({type, config}), if any."""
    doc = read_state(install_dir / BACKEND_RECORD)
    backend = doc.get("backend") if doc else None
    return backend if isinstance(backend, dict) and backend.get("type") else None


def local_resource_count(install_dir: Path) -> int:
    state = read_state(install_dir / STATE_FILE)
    return sum(1 for _ in instances(state)) if state else 0


def init_args(install_dir: Path, store: StateStore, name: str) -> list[str]:
    """Extra `terraform init` arguments; refuses when the state is not where it should be."""
    recorded = recorded_backend(install_dir)
    recorded_type = recorded.get("type") if recorded else "local"
    migrate = f"npa soperator state migrate --name {name} --to"
    if not store.shared:
        if recorded_type == "s3":
            config = recorded.get("config") or {} if recorded else {}
            raise StateBackendMismatch(
                f"the Terraform state of {name!r} is in the bucket "
                f"s3://{config.get('bucket')}/{config.get('key')}, but the state backend "
                "configured here is local",
                hint=f"select the bucket (state.bucket in the npa config, NPA_STATE_BUCKET), "
                f"or bring the state back with `{migrate} local`",
            )
        return []
    count = local_resource_count(install_dir)
    if count:
        raise StateBackendMismatch(
            f"{name!r} has a local Terraform state with {count} resources in {install_dir}, "
            f"but the state backend configured is {store.describe()}",
            hint=f"move it into the bucket with `{migrate} s3` (running Terraform on an empty "
            "remote state would create every resource again)",
        )
    if recorded_type == "s3" and recorded is not None:
        config = recorded.get("config") or {}
        want = store.location
        key = want.key(name, "terraform.tfstate")
        if (config.get("bucket"), config.get("key")) != (want.bucket, key):
            raise StateBackendMismatch(
                f"the Terraform state of {name!r} was set up in s3://{config.get('bucket')}/"
                f"{config.get('key')}, not in s3://{want.bucket}/{key}",
                hint="select that bucket again, or copy the state object there by hand",
            )
    # Same bucket and key: an endpoint or a flag may have changed; no state is moved.
    return ["-reconfigure"]


def explain_failure(install_dir: Path, store: StateStore, step: str) -> StateUnreachable | None:
    """The clear error for a Terraform step that failed because the bucket went away, else
    None. When Terraform could not upload the state at the end of an apply it keeps it in
    `errored.tfstate`, which the next run pushes first (see `push_errored`)."""
    if not store.shared:
        return None
    errored = install_dir / ERRORED_STATE
    if errored.is_file():  # (a pushed one is renamed, so one that is there is not uploaded)
        errored.chmod(0o600)
        return StateUnreachable(
            f"the state bucket {store.describe()} could not be reached to save the Terraform "
            f"state; Terraform kept it in {errored} (nothing is lost)",
            hint="run the same operation again once the bucket answers: npa uploads that "
            "state first, then carries on",
        )
    try:
        store.check()
    except StateUnreachable as exc:
        return StateUnreachable(
            f"terraform {step} stopped: {exc.message}",
            hint="run the operation again once the bucket answers; npa never falls back to "
            "local state",
        )
    return None


async def push_errored(
    runner: TerraformRunner, install_dir: Path, store: StateStore, note: Any
) -> bool:
    """Upload a state Terraform could not save last time (`errored.tfstate`), before any plan.

    Returns True when one was pushed. Terraform refuses a push that would go backwards (an
    older serial, another lineage); that is reported, never forced.
    """
    errored = install_dir / ERRORED_STATE
    if not store.shared or not errored.is_file():
        return False
    code, _, err = await runner.capture(["state", "push", ERRORED_STATE], cwd=install_dir)
    if code != 0:
        raise StateUnreachable(
            f"{errored} holds a Terraform state that never reached the bucket, and pushing it "
            f"failed: {err.strip()[-400:]}",
            hint="compare it with `terraform state pull` in that folder and push the right "
            "one by hand (`terraform state push`); nothing else runs until then",
        )
    stamp = time.strftime("%Y%m%dT%H%M%S")
    os.replace(errored, install_dir / f"{ERRORED_STATE}.pushed-{stamp}")
    note(f"uploaded the state a previous run could not save ({ERRORED_STATE}) to the bucket")
    return True
