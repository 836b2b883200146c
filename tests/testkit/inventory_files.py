"""An inventory record written by hand, as a copied home or a teammate's bucket may hold
one: the fields a test gives, whatever their shape."""

from __future__ import annotations

import json
from pathlib import Path


def record(home: Path, name: str, **fields: object) -> Path:
    """Write `<home>/soperator/<name>/inventory.json` (0600) holding `fields`."""
    folder = home / "soperator" / name
    folder.mkdir(parents=True, exist_ok=True)
    data = {"name": name, "kube_context": f"nebius-{name}-slurm", "state": "failed", **fields}
    path = folder / "inventory.json"
    path.write_text(json.dumps(data))
    path.chmod(0o600)
    return path
