"""A new cluster folder's first `terraform init` from the seed an earlier init left in the
plugin cache (real Terraform, the PyPI null provider through a filesystem mirror)."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from npa_sop_tui.terraform import init_seed, plugin_cache

PROVIDERS = (
    'terraform {\n  required_providers {\n    null = { source = "hashicorp/null" }\n  }\n}\n'
)
MAIN_TF = PROVIDERS + 'resource "null_resource" "x" {}\nmodule "m" {\n  source = "./m"\n}\n'
NULL_LINK = ".terraform/providers/registry.terraform.io/hashicorp/null/2.1.2/linux_amd64"


class Machine:
    """One npa home: a shared plugin cache and cluster folders initialised the way deploys
    do it; records every Terraform command and every operation-log note."""

    def __init__(self, tmp_path: Path) -> None:
        from npa_sop_tui.sandbox import local_terraform

        local = local_terraform.prepare(tmp_path / "home")
        self.binary = local.binary
        self.base = tmp_path
        self.cache = tmp_path / "cache"
        self.env = {**local.env, "TF_PLUGIN_CACHE_DIR": str(self.cache), "HOME": str(tmp_path)}
        self.commands: list[tuple[str, list[str]]] = []
        self.notes: list[str] = []

    def folder(self, name: str, main_tf: str = MAIN_TF) -> Path:
        folder = self.base / name
        (folder / "m").mkdir(parents=True)
        (folder / "main.tf").write_text(main_tf)
        (folder / "m" / "main.tf").write_text(PROVIDERS)
        backend = {"terraform": {"backend": {"local": {"path": f"{name}.tfstate"}}}}
        (folder / init_seed.BACKEND_OVERRIDE).write_text(json.dumps(backend))
        return folder

    def terraform(self, folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.binary, *args], cwd=folder, env=self.env, capture_output=True, text=True,
            check=False,
        )  # fmt: skip

    async def init(self, folder: Path) -> subprocess.CompletedProcess[str] | None:
        async def run(
            args: list[str], cwd: Path, extra: Mapping[str, str]
        ) -> subprocess.CompletedProcess[str]:
            self.commands.append((folder.name, args))
            return await asyncio.to_thread(
                subprocess.run, [self.binary, *args], cwd=cwd, env={**self.env, **extra},
                capture_output=True, text=True, check=False,
            )  # fmt: skip

        async with plugin_cache.guarded_init(self.cache) as cache_env:
            env = {**self.env, **cache_env}
            result = await init_seed.init_with_cache(
                folder, self.cache, "1.0.3", "recipe@ref", ["-input=false", "-no-color"], env,
                run, lambda r: r.returncode == 0, self.notes.append,
            )  # fmt: skip
        assert result is None or result.returncode == 0, result
        return result

    def commands_in(self, name: str) -> list[str]:
        return [args[0] for folder, args in self.commands if folder == name]


def _backend_record(folder: Path) -> dict[str, object]:
    record = json.loads((folder / ".terraform/terraform.tfstate").read_text())
    return record["backend"]


@pytest.mark.terraform
async def test_second_cluster_takes_providers_from_the_seed_and_gets_its_own_backend(
    tmp_path: Path,
) -> None:
    machine = Machine(tmp_path)
    a, b = machine.folder("a"), machine.folder("b")
    await machine.init(a)
    assert machine.commands_in("a") == ["init"]
    assert "no earlier init left a seed" in machine.notes[-1]
    await machine.init(b)
    # No provider installation in b: Terraform only got the modules and set up the backend.
    assert sorted(machine.commands_in("b")) == ["get", "init"]
    assert "providers linked from the plugin cache" in machine.notes[-1]
    assert (b / ".terraform.lock.hcl").read_text() == (a / ".terraform.lock.hcl").read_text()
    assert (b / NULL_LINK).resolve() == (a / NULL_LINK).resolve()
    assert (b / NULL_LINK).readlink() == machine.cache.resolve() / NULL_LINK.split("/", 2)[2]
    assert not (b / init_seed.STUB).exists()
    # b's backend record is exactly what a full init of b writes: its own state path.
    seeded = _backend_record(b)
    assert seeded["config"]["path"] == "b.tfstate"  # type: ignore[index]
    full = machine.base / "full" / "b"
    shutil.copytree(b, full, ignore=shutil.ignore_patterns(".terraform"))
    assert machine.terraform(full, "init", "-input=false", "-no-color").returncode == 0
    assert _backend_record(full) == seeded
    # Terraform accepts the folder as initialised: plan and apply run, state goes to b's path.
    applied = machine.terraform(b, "apply", "-auto-approve", "-input=false", "-no-color")
    assert applied.returncode == 0, applied.stderr
    assert (b / "b.tfstate").is_file() and not (a / "b.tfstate").exists()
    # A re-run of b skips init; its fingerprint was recorded after the seeded init.
    before = len(machine.commands)
    assert await machine.init(b) is None
    assert len(machine.commands) == before


@pytest.mark.terraform
async def test_a_provider_gone_from_the_cache_falls_back_to_a_full_init(tmp_path: Path) -> None:
    machine = Machine(tmp_path)
    await machine.init(machine.folder("a"))
    shutil.rmtree(machine.cache / "registry.terraform.io/hashicorp/null")
    b = machine.folder("b")
    await machine.init(b)
    assert (
        "the plugin cache no longer holds registry.terraform.io/hashicorp/null"
        in (machine.notes[-1])
    )
    assert machine.commands_in("b")[-1] == "init"  # the full init, after the attempt
    assert (b / NULL_LINK).resolve().is_dir()  # installed again into the cache
    assert machine.terraform(b, "plan", "-input=false", "-no-color").returncode == 0


@pytest.mark.terraform
async def test_another_recipe_or_provider_set_does_not_use_the_seed(tmp_path: Path) -> None:
    machine = Machine(tmp_path)
    await machine.init(machine.folder("a"))
    pinned = MAIN_TF.replace(
        'source = "hashicorp/null"', 'source = "hashicorp/null", version = ">= 2"'
    )
    c = machine.folder("c", pinned)
    await machine.init(c)
    assert (
        "no earlier init of the same recipe, providers and Terraform version" in (machine.notes[-1])
    )
    # A changed module (not only the root) is another recipe too.
    d = machine.folder("d")
    (d / "m" / "extra.tf").write_text("locals {\n  x = 1\n}\n")
    await machine.init(d)
    assert "no earlier init of the same recipe" in machine.notes[-1]
    for folder in (c, d):
        assert machine.terraform(folder, "plan", "-input=false", "-no-color").returncode == 0


@pytest.mark.terraform
async def test_a_local_state_next_to_the_backend_override_gets_a_full_init(tmp_path: Path) -> None:
    machine = Machine(tmp_path)
    await machine.init(machine.folder("a"))
    b = machine.folder("b")
    (b / "terraform.tfstate").write_text("")
    await machine.init(b)
    assert "a local state file is here" in machine.notes[-1]
    assert machine.commands_in("b") == ["init"]


@pytest.mark.terraform
async def test_two_new_clusters_at_once_are_both_initialised(tmp_path: Path) -> None:
    machine = Machine(tmp_path)
    await machine.init(machine.folder("a"))
    b, c = machine.folder("b"), machine.folder("c")
    await asyncio.gather(machine.init(b), machine.init(c))
    for folder in (b, c):
        assert _backend_record(folder)["config"]["path"] == f"{folder.name}.tfstate"  # type: ignore[index]
        assert machine.terraform(folder, "plan", "-input=false", "-no-color").returncode == 0
    assert sum("providers linked from the plugin cache" in n for n in machine.notes) == 2


@pytest.mark.terraform
async def test_terraform_itself_rejects_a_seeded_folder_that_no_longer_matches(
    tmp_path: Path,
) -> None:
    """The checks that keep a seeded folder honest are Terraform's own: a changed provider
    package fails the lock file's checksums, another backend fails the backend record."""
    machine = Machine(tmp_path)
    await machine.init(machine.folder("a"))
    b, c = machine.folder("b"), machine.folder("c")
    await asyncio.gather(machine.init(b), machine.init(c))
    backend = {"terraform": {"backend": {"local": {"path": "elsewhere.tfstate"}}}}
    (c / init_seed.BACKEND_OVERRIDE).write_text(json.dumps(backend))
    moved = machine.terraform(c, "plan", "-input=false", "-no-color")
    assert moved.returncode != 0 and "Backend configuration changed" in moved.stderr
    binary = next((b / NULL_LINK).resolve().iterdir())
    binary.write_bytes(binary.read_bytes() + b"\0")
    changed = machine.terraform(b, "plan", "-input=false", "-no-color")
    assert changed.returncode != 0
    assert "does not match any of the checksums" in " ".join(changed.stderr.split())
