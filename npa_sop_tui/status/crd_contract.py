"""What Soperator's custom resources look like, as the real CRDs say, per operator release.

The data is derived by `scripts/gen_crd_contract.py` from the CRDs of nebius/soperator
`config/crd/bases/` at the tag and commit each file records: `soperator_crds.json` from 4.1.6
(65e088abe53b2a52bed18b9536196139f693ab20; the same at 4.1.7), the CRDs every 4.1.x recipe
deploys; `soperator_crds_main.json` from `main` at VERSION 5.0.0
(c238d993341a9f52b132062fbc3cb22f0fb63578), which no recipe release deploys yet. Kinds, group,
versions, plural names, enumerations, required fields and the fields npa reads; nothing here
is typed by hand.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
DATA = HERE / "soperator_crds.json"
RELEASES = {"4": DATA, "5": HERE / "soperator_crds_main.json"}  # by the operator's major


@cache
def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def crd_contract(operator_version: str | None = None) -> dict[str, Any]:
    """The contract of the CRDs an operator of `operator_version` installs (4.1.x's when the
    version is unknown or older: the ones every supported recipe deploys)."""
    major = (operator_version or "").split(".", 1)[0]
    return _load(RELEASES.get(major, DATA))


def kind_info(kind: str, operator_version: str | None = None) -> dict[str, Any]:
    info: dict[str, Any] = crd_contract(operator_version)["kinds"][kind]
    return info


def group_version_plural(kind: str) -> tuple[str, str, str]:
    """(group, stored version, plural) of `kind`: what a custom-object request names. The
    same in every release read (a new stored version would make npa ask per release)."""
    info = kind_info(kind)
    return info["group"], info["storage_version"], info["plural"]


def api_version(kind: str) -> str:
    group, version, _ = group_version_plural(kind)
    return f"{group}/{version}"


def source(operator_version: str | None = None) -> str:
    """`nebius/soperator 4.1.6 (65e088ab…)`: where the data comes from, for messages."""
    src = crd_contract(operator_version)["source"]
    return f"{src['repository']} {src['tag']} ({src['commit'][:8]})"
