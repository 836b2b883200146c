"""What Soperator's custom resources look like, as the real CRDs say.

The data (`soperator_crds.json`) is derived by `scripts/gen_crd_contract.py` from the CRDs of
nebius/soperator `config/crd/bases/` at the tag and commit it records (4.1.6,
65e088abe53b2a52bed18b9536196139f693ab20; the same at 4.1.7): kinds, group, versions, plural
names, enumerations, required fields and the fields npa reads. Nothing here is typed by hand.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).with_name("soperator_crds.json")


@cache
def crd_contract() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
    return data


def kind_info(kind: str) -> dict[str, Any]:
    info: dict[str, Any] = crd_contract()["kinds"][kind]
    return info


def group_version_plural(kind: str) -> tuple[str, str, str]:
    """(group, stored version, plural) of `kind`: what a custom-object request names."""
    info = kind_info(kind)
    return info["group"], info["storage_version"], info["plural"]


def api_version(kind: str) -> str:
    group, version, _ = group_version_plural(kind)
    return f"{group}/{version}"


def source() -> str:
    """`nebius/soperator 4.1.6 (65e088ab…)`: where the data comes from, for messages."""
    src = crd_contract()["source"]
    return f"{src['repository']} {src['tag']} ({src['commit'][:8]})"
