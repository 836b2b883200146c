"""The stand-in as Terraform finds it: an executable in an unpacked filesystem mirror,
`<host>/nebius/nebius/<version>/<os_arch>/terraform-provider-nebius_v<version>`, a script run
by this Python (so it imports this package with its dependencies), once for every address the
recipe's `required_providers` has used for the nebius provider.

The address (the one constant the stand-in recipe and its generator read): the recipe's
`installations/example/terraform.tf` at the 4.1.x commits npa deploys declares
`source = "nebius/nebius"`, Terraform's shorthand for the public registry,
`registry.terraform.io/nebius/nebius`. Before Nebius moved the provider there (its custom
registry's 0.5.217 is 0.6.8 on the public one), recipes declared Nebius's own registries
(`FORMER_ADDRESSES`); the mirror serves the stand-in under those too, so a recipe of either
age resolves it offline.
"""

from __future__ import annotations

import sys
from pathlib import Path

from npa_sop_tui.home.fsutil import atomic_write_text, ensure_dir

VERSION = "0.0.1"  # the stand-in's own version; a recipe that uses it pins exactly this
SOURCE = "nebius/nebius"  # as the recipe's terraform.tf writes it
ADDRESS = f"registry.terraform.io/{SOURCE}"
FORMER_ADDRESSES = (
    f"terraform-provider.storage.eu-north1.nebius.cloud/{SOURCE}",
    f"terraform-provider-nebius.storage.ai.nebius.cloud/{SOURCE}",
)
ADDRESSES = (ADDRESS, *FORMER_ADDRESSES)
PLATFORM = "linux_amd64"


def executable_text(python: str | None = None) -> str:
    return (
        f"#!{python or sys.executable}\n"
        "# npa's stand-in for the nebius/nebius Terraform provider (sandbox and tests only).\n"
        "from npa_sop_tui.sandbox.nebius_provider.server import main\n\n"
        "main()\n"
    )


def install(mirror: Path) -> Path:
    """Write (once, atomically) the stand-in into `mirror` under every address; the path
    of the one under `ADDRESS`."""
    text = executable_text()
    paths = []
    for address in ADDRESSES:
        target_dir = mirror / address / VERSION / PLATFORM
        target = target_dir / f"terraform-provider-nebius_v{VERSION}"
        paths.append(target)
        if target.is_file() and target.read_text() == text:
            continue
        ensure_dir(target_dir)
        atomic_write_text(target, text, mode=0o755)  # parallel builders: the last copy wins
    return paths[0]
