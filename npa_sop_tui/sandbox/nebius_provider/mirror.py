"""The stand-in as Terraform finds it: an executable in an unpacked filesystem mirror,
`registry.terraform.io/nebius/nebius/<version>/<os_arch>/terraform-provider-nebius_v<version>`,
a script run by this Python (so it imports this package with its dependencies)."""

from __future__ import annotations

import sys
from pathlib import Path

from npa_sop_tui.home.fsutil import atomic_write_text, ensure_dir

VERSION = "0.0.1"  # the stand-in's own version; a recipe that uses it pins exactly this
SOURCE = "nebius/nebius"
HOST = "registry.terraform.io"
PLATFORM = "linux_amd64"


def executable_text(python: str | None = None) -> str:
    return (
        f"#!{python or sys.executable}\n"
        "# npa's stand-in for the nebius/nebius Terraform provider (sandbox and tests only).\n"
        "from npa_sop_tui.sandbox.nebius_provider.server import main\n\n"
        "main()\n"
    )


def install(mirror: Path) -> Path:
    """Write (once, atomically) the stand-in into `mirror`; its path."""
    target_dir = mirror / HOST / SOURCE / VERSION / PLATFORM
    target = target_dir / f"terraform-provider-nebius_v{VERSION}"
    text = executable_text()
    if target.is_file() and target.read_text() == text:
        return target
    ensure_dir(target_dir)
    atomic_write_text(target, text, mode=0o755)  # parallel builders: the last copy wins
    return target
