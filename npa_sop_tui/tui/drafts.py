"""Cluster specs the wizard wrote that were never deployed: home lists them as drafts.

A spec written by the wizard lives where the user chose (./cluster.yaml by default), not
in the npa home, so the inventory does not know it until the first deploy. Without these
rows, home said "No clusters yet" right after the wizard wrote one.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from npa_sop_tui.tui.backend import ClusterRow

DRAFT = "draft"
"""The state a draft row shows: written, not deployed."""


def draft_rows(known: Iterable[str], candidates: Iterable[Path]) -> list[ClusterRow]:
    """A row for each candidate spec file naming a cluster the inventory does not have
    (the first file per name wins; unreadable files and files without a name are skipped)."""
    import yaml

    from npa_sop_tui.home.paths import shown

    seen = set(known)
    rows: list[ClusterRow] = []
    for path in candidates:
        try:
            doc = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue
        name = doc.get("name") if isinstance(doc, dict) else None
        if not isinstance(name, str) or not name or name in seen:
            continue
        seen.add(name)
        region = doc.get("region")
        rows.append(
            ClusterRow(
                name=name,
                region=region if isinstance(region, str) else "",
                state=DRAFT,
                last_operation=f"not deployed · {shown(path.absolute())}",
                spec_path=path.absolute(),
            )
        )
    return rows
