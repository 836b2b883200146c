"""Which Slurm releases npa meets, and which JSON formats (data_parser versions) each speaks.

Facts, with their sources:
- Debian 12 ships Slurm 22.05 (22.05.8). Its `--json` takes no argument and prints the
  `openapi/v0.0.38` shape (`meta.plugin.type`); it has no `scontrol --json`.
- Soperator 4.1.6 and 4.1.7 build Slurm 25.11.3 (nebius/soperator at tags 4.1.6/4.1.7);
  Slurm 25.11 ships data_parser v0.0.41–v0.0.44, default v0.0.44.
- Soperator `main` (5.0.0) builds 26.05; Slurm 26.05 ships data_parser v0.0.42–v0.0.45,
  default v0.0.45 (checked by running Debian sid's 26.05.5).
- From 24.x on, `meta.plugin.type` is empty in `--json` output: the format is named by
  `meta.plugin.data_parser` (`data_parser/v0.0.44`) and the release by `meta.slurm.release`
  (or `meta.slurm.version` {major, minor, micro}).

npa asks for `--json=v0.0.44` wherever the Slurm ships it (the format Soperator 4.1.x's
login nodes answer in), plain `--json` elsewhere, and parses v0.0.38 and v0.0.41–v0.0.45.
"""

from __future__ import annotations

import re

PREFERRED_DATA_PARSER = "v0.0.44"
# Slurm major release (YY.MM) → the data_parser versions it ships (oldest first).
DATA_PARSERS: dict[str, tuple[str, ...]] = {
    "25.05": ("v0.0.41", "v0.0.42", "v0.0.43"),
    "25.11": ("v0.0.41", "v0.0.42", "v0.0.43", "v0.0.44"),
    "26.05": ("v0.0.42", "v0.0.43", "v0.0.44", "v0.0.45"),
}
# Releases whose `--json` takes no argument (data_parser versions came with 23.02).
NO_DATA_PARSER = ("22.05",)
# What the tests run (scripts/substrate.sh): Debian 12's Slurm and Debian sid's.
DEBIAN_STABLE = "22.05"
DEBIAN_SID = "26.05"
SOPERATOR_4_1 = "25.11.3"

_MAJOR = re.compile(r"^(\d+)\.(\d+)")


def major(release: str | None) -> str | None:
    """`25.11.3` → `25.11` (None when the text is no Slurm release)."""
    match = _MAJOR.match((release or "").strip())
    return f"{int(match.group(1)):02d}.{int(match.group(2)):02d}" if match else None


def json_option(release: str | None) -> str:
    """`--json=v0.0.44` when `release` ships it, else the release's own `--json`.

    An unknown release newer than the table gets `--json=v0.0.44` too (Slurm keeps the last
    few data_parser versions); an older or unknown one plain `--json`."""
    mj = major(release)
    if mj is None or mj in NO_DATA_PARSER:
        return "--json"
    if PREFERRED_DATA_PARSER in DATA_PARSERS.get(mj, ()):
        return f"--json={PREFERRED_DATA_PARSER}"
    newest = max(DATA_PARSERS)
    return f"--json={PREFERRED_DATA_PARSER}" if mj > newest else "--json"
