"""One Slurm poll over an open connection: the format decides how many sinfo calls it takes."""

from __future__ import annotations

from typing import Any

from npa_sop_tui.status.model import SlurmState
from npa_sop_tui.status.sinfo_json import collect_json
from npa_sop_tui.status.sinfo_summary import collect_summary


async def collect_slurm(
    runner: Any, *, host: str, fmt: str = "auto", timeout: float = 30.0, memo: Any = None
) -> SlurmState:
    """Nodes, partitions and the plain sinfo text.

    `fmt` "auto" or "delimited": one sinfo call per refresh (`sinfo_summary`). "json":
    `sinfo --json` for the nodes plus two more calls (`sinfo_json.collect_json`).
    """
    if fmt in ("auto", "delimited"):
        return await collect_summary(runner, host=host, timeout=timeout, memo=memo)
    return await collect_json(runner, host=host, timeout=timeout)
