"""`terraform init` is skipped only when nothing it depends on changed (real Terraform, the
PyPI null provider through a filesystem mirror, the shared plugin cache)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from npa_sop_tui.terraform import init_fingerprint, plugin_cache

MAIN_TF = (
    'terraform {\n  required_providers {\n    null = { source = "hashicorp/null" }\n  }\n}\n'
    'resource "null_resource" "x" {}\n'
)


class Folder:
    """One cluster folder and the inits npa really ran in it."""

    def __init__(self, tmp_path: Path) -> None:
        from npa_sop_tui.sandbox import local_terraform

        local = local_terraform.prepare(tmp_path / "home")
        self.binary = local.binary
        self.cache = tmp_path / "cache"
        self.dir = tmp_path / "cluster"
        self.dir.mkdir()
        (self.dir / "main.tf").write_text(MAIN_TF)
        self.env = {**local.env, "TF_PLUGIN_CACHE_DIR": str(self.cache), "HOME": str(tmp_path)}
        self.version = "1.12.2"
        self.args = ["init", "-input=false", "-no-color"]
        self.ran = 0

    async def init(self) -> bool:
        """True when Terraform really ran."""

        async def run() -> subprocess.CompletedProcess[str]:
            import asyncio

            self.ran += 1
            return await asyncio.to_thread(
                subprocess.run, [self.binary, *self.args], cwd=self.dir, env=self.env,
                capture_output=True, text=True, check=False,
            )  # fmt: skip

        before = self.ran
        async with plugin_cache.guarded_init(self.cache):
            result = await init_fingerprint.init_unless_unchanged(
                self.dir, self.version, self.args, self.env, run, lambda r: r.returncode == 0
            )
        assert result is None or result.returncode == 0 or self.args[-1] == "-bad", result
        return self.ran > before


@pytest.fixture(name="folder")
async def folder_fixture(tmp_path: Path) -> Folder:
    folder = Folder(tmp_path)
    assert await folder.init()
    assert not await folder.init(), "an unchanged folder must not init again"
    return folder


@pytest.mark.terraform
async def test_changed_recipe_module_source_reinits(folder: Folder) -> None:
    (folder.dir / "m").mkdir()
    (folder.dir / "m" / "main.tf").write_text("")
    (folder.dir / "mod.tf").write_text('module "m" {\n  source = "./m"\n}\n')
    assert await folder.init()
    assert not await folder.init()
    # A recipe ref that changes a module's own required_providers re-inits too.
    (folder.dir / "m" / "main.tf").write_text(MAIN_TF.split("resource")[0])
    assert await folder.init()


@pytest.mark.terraform
async def test_changed_required_providers_reinits(folder: Folder) -> None:
    pinned = 'source = "hashicorp/null", version = ">= 1"'
    text = MAIN_TF.replace('source = "hashicorp/null"', pinned)
    (folder.dir / "main.tf").write_text(text)
    assert await folder.init()


@pytest.mark.terraform
async def test_changed_terraform_version_reinits(folder: Folder) -> None:
    folder.version = "1.13.0"
    assert await folder.init()
    assert not await folder.init()


@pytest.mark.terraform
async def test_changed_backend_reinits(folder: Folder) -> None:
    (folder.dir / "backend_override.tf.json").write_text(
        '{"terraform": {"backend": {"local": {"path": "other.tfstate"}}}}'
    )
    folder.args = [*folder.args, "-reconfigure"]
    assert await folder.init()
    assert not await folder.init()
    folder.args = [*folder.args, "-backend-config=path=third.tfstate"]
    assert await folder.init()


@pytest.mark.terraform
async def test_deleted_dot_terraform_reinits(folder: Folder) -> None:
    shutil.rmtree(folder.dir / ".terraform")
    assert await folder.init()
    assert (folder.dir / ".terraform" / "providers").is_dir()


@pytest.mark.terraform
async def test_cleaned_cache_or_changed_lock_file_reinits(folder: Folder) -> None:
    shutil.rmtree(folder.cache / "registry.terraform.io")
    assert await folder.init()  # the link into the cache dangles
    assert not await folder.init()
    lock = folder.dir / ".terraform.lock.hcl"
    lock.unlink()
    assert await folder.init()
    assert lock.is_file()


@pytest.mark.terraform
async def test_failed_init_leaves_no_record(folder: Folder) -> None:
    folder.args = [*folder.args, "-bad"]
    assert await folder.init()
    assert init_fingerprint.recorded(folder.dir) is None
    folder.args = folder.args[:-1]
    assert await folder.init()  # it ran again, it did not trust the old fingerprint
    assert not await folder.init()
