"""Node states over time: per pool, how many Slurm nodes were idle, allocated, drained or
down at each status snapshot of a session (the dashboard keeps the history it has seen).

A node's pool is its NodeSet: on Soperator a Slurm node and its worker pod are both named
`<nodeset>-<i>`, so the name without its last `-<i>` is the pool.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from typing import Literal

from npa_sop_tui.status.model import ClusterStatus, SlurmNode

NodeBucket = Literal["idle", "allocated", "drained", "down"]
BUCKETS: tuple[NodeBucket, ...] = ("idle", "allocated", "drained", "down")
DEFAULT_DEPTH = 240
"""Samples kept per session: 4 hours at the default 60 s refresh, 20 minutes at 5 s."""

_INDEX = re.compile(r"-\d+$")
_DOWN_FLAGS = frozenset({"NOT_RESPONDING", "FAIL", "INVALID_REG", "POWERED_DOWN"})


def pool_of(node: str) -> str:
    return _INDEX.sub("", node) or node


def bucket_of(node: SlurmNode) -> NodeBucket:
    """Which of the four stacks a node counts in; a node both drained and down is down
    (it takes no work either way, and down is what needs a look)."""
    flags = set(node.flags)
    if node.state in ("down", "fail", "unknown", "future", "inval") or flags & _DOWN_FLAGS:
        return "down"
    if "DRAIN" in flags or node.state in ("drained", "draining", "drain"):
        return "drained"
    if node.state in ("allocated", "mixed", "completing"):
        return "allocated"
    return "idle"


@dataclass(frozen=True)
class Sample:
    at: float
    counts: dict[str, dict[NodeBucket, int]]
    """pool → bucket → nodes."""

    def pool(self, name: str) -> dict[NodeBucket, int]:
        return self.counts.get(name, dict.fromkeys(BUCKETS, 0))


def sample_of(status: ClusterStatus) -> Sample | None:
    """The counts of one snapshot; None when it has no Slurm data (nothing to plot)."""
    if status.slurm is None:
        return None
    counts: dict[str, dict[NodeBucket, int]] = {}
    for node in status.slurm.nodes:
        pool = counts.setdefault(pool_of(node.name), dict.fromkeys(BUCKETS, 0))
        pool[bucket_of(node)] += 1
    return Sample(status.taken_at, counts)


class NodeStateHistory:
    """The samples of one session, oldest first, bounded to `depth`."""

    def __init__(self, depth: int = DEFAULT_DEPTH) -> None:
        self.samples: deque[Sample] = deque(maxlen=depth)

    def add(self, status: ClusterStatus) -> bool:
        """Record a snapshot; False when it added nothing (no Slurm data, or the same time)."""
        sample = sample_of(status)
        if sample is None or (self.samples and self.samples[-1].at >= sample.at):
            return False
        self.samples.append(sample)
        return True

    def pools(self) -> list[str]:
        names: set[str] = set()
        for sample in self.samples:
            names.update(sample.counts)
        return sorted(names)
