"""Files planted where npa reads or writes: one that never ends, one that claims to be huge,
one that blocks, and a file outside the home that must stay untouched."""

from __future__ import annotations

import os
from pathlib import Path

ENDLESS = ("dev-zero", "sparse", "fifo")


def plant(path: Path, kind: str) -> Path:
    """At `path`: a symlink to /dev/zero, a sparse file claiming 3 GB, or a FIFO."""
    if kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "sparse":
        with path.open("wb") as handle:
            handle.truncate(3 * 1024**3)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        raise ValueError(kind)
    return path


def victim(tmp_path: Path, name: str = "precious.txt") -> Path:
    """A file outside the npa home (mode 0644) that npa must never write or chmod."""
    path = tmp_path / "outside" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text("keep me\n")
    path.chmod(0o644)
    return path


def untouched(path: Path) -> bool:
    return path.read_text() == "keep me\n" and path.stat().st_mode & 0o777 == 0o644
