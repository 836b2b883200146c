"""Node states over time: per pool, how many Slurm nodes were idle, allocated, drained or
down at each status snapshot.

A node's pool is its NodeSet: on Soperator a Slurm node and its worker pod are both named
`<nodeset>-<i>`, so the name without its last `-<i>` is the pool.

The history of each cluster is kept in the npa home (`<cluster dir>/node-states.jsonl`, one
sample a line), so it outlives the app and every view of the cluster (its dashboard, the
fleet view, a teammate's browser) draws the same past. It is bounded: samples older than
`RETENTION_SECONDS` (7 days) go, unchanged counts are stored at most once a minute (a change
at once), and the file never holds more than `MAX_STORED` samples.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from npa_sop_tui.status.model import ClusterStatus, SlurmNode

NodeBucket = Literal["idle", "allocated", "drained", "down"]
BUCKETS: tuple[NodeBucket, ...] = ("idle", "allocated", "drained", "down")
RETENTION_SECONDS = 7 * 86400
"""How far back a cluster's node-state history goes."""
STORE_EVERY_SECONDS = 60.0
"""Unchanged counts are stored at most this often (a change is stored at once)."""
HOLD_SECONDS = 300.0
"""A sample stands for the time after it until the next one, for at most this long."""
MAX_STORED = 20_000
"""Samples one cluster's history keeps at most (7 days at one a minute is 10,080)."""
DEFAULT_DEPTH = MAX_STORED
HISTORY_FILE = "node-states.jsonl"
_MAX_FILE_BYTES = 8 * 1024 * 1024

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

    def total(self, bucket: NodeBucket) -> int:
        return sum(c[bucket] for c in self.counts.values())

    def to_json(self) -> str:
        return json.dumps({"at": round(self.at, 3), "counts": self.counts}, sort_keys=True)

    @classmethod
    def from_json(cls, line: str) -> Sample | None:
        """A stored line, or None when it is not one (a torn or foreign line)."""
        try:
            data = json.loads(line)
            counts = {
                str(pool): {b: max(0, int(c.get(b, 0))) for b in BUCKETS}
                for pool, c in data["counts"].items()
            }
            return cls(float(data["at"]), counts)  # type: ignore[arg-type]
        except (ValueError, TypeError, KeyError, AttributeError):
            return None


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
    """The samples of one cluster, oldest first, bounded to `depth`; with a `store`, what it
    records is also kept in the home (`record`) and what was kept before comes back
    (`load`)."""

    def __init__(self, depth: int = DEFAULT_DEPTH, store: HistoryStore | None = None) -> None:
        self.samples: deque[Sample] = deque(maxlen=depth)
        self.store = store

    def add(self, status: ClusterStatus) -> bool:
        """Record a snapshot; False when it added nothing (no Slurm data, or the same time)."""
        sample = sample_of(status)
        if sample is None or (self.samples and self.samples[-1].at >= sample.at):
            return False
        previous = self.samples[-1] if self.samples else None
        self.samples.append(sample)
        if self.store is not None and self.store.writable:
            self.store.keep(sample, previous)
        return True

    def merge(self, stored: Iterable[Sample]) -> None:
        """Earlier samples (read from the home) before the ones this view has seen."""
        newest_first = self.samples[0].at if self.samples else float("inf")
        older = [s for s in stored if s.at < newest_first]
        live = list(self.samples)
        self.samples.clear()
        self.samples.extend([*older, *live][-(self.samples.maxlen or len(older) + len(live)) :])

    def pools(self) -> list[str]:
        names: set[str] = set()
        for sample in self.samples:
            names.update(sample.counts)
        return sorted(names)


class HistoryStore:
    """One cluster's node-state history file in the npa home. A read-only session reads it
    and writes nothing (`writable=False`)."""

    def __init__(self, cluster: str, *, writable: bool = True) -> None:
        from npa_sop_tui.home.paths import cluster_dir

        self.path: Path = cluster_dir(cluster) / HISTORY_FILE
        self.writable = writable
        self._last_kept: Sample | None = None

    def load(self, now: float | None = None) -> list[Sample]:
        """The kept samples of the last 7 days, oldest first; a file grown past its bounds
        is rewritten with what is left (when this session may write)."""
        from npa_sop_tui.home.files import read_trusted

        now = time.time() if now is None else now
        raw = read_trusted(self.path, limit=_MAX_FILE_BYTES)
        if raw is None:
            return []
        lines = raw.decode("utf-8", errors="replace").splitlines()
        parsed = [Sample.from_json(line) for line in lines]
        samples = sorted(
            (s for s in parsed if s is not None and now - RETENTION_SECONDS <= s.at <= now + 60),
            key=lambda s: s.at,
        )[-MAX_STORED:]
        if self.writable and (len(samples) != len(lines) or len(raw) > _MAX_FILE_BYTES // 2):
            self._rewrite(samples)
        self._last_kept = samples[-1] if samples else None
        return samples

    def keep(self, sample: Sample, previous: Sample | None) -> None:
        """Append `sample` when its counts changed, or a minute after the last kept one."""
        last = self._last_kept
        changed = previous is None or previous.counts != sample.counts
        if last is not None and not changed and sample.at - last.at < STORE_EVERY_SECONDS:
            return
        from npa_sop_tui.home.files import open_private

        fd = open_private(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, (sample.to_json() + "\n").encode())
        finally:
            os.close(fd)
        self._last_kept = sample

    def _rewrite(self, samples: list[Sample]) -> None:
        from npa_sop_tui.home.fsutil import atomic_write_text

        text = "".join(s.to_json() + "\n" for s in samples)
        atomic_write_text(self.path, text, mode=0o600)


def time_buckets(
    samples: Iterable[Sample], start: float, end: float, columns: int
) -> list[Sample | None]:
    """`columns` equal stretches of time from `start` to `end`, each the worst sample in it
    (most down, then most drained: a short outage shows however wide a column is), None
    where no sample falls (the app was closed, or the cluster unreachable)."""
    columns = max(1, columns)
    width = max(end - start, 1e-6) / columns
    found: list[Sample | None] = [None] * columns
    before: Sample | None = None  # the last sample before the window: it holds at its start
    for sample in samples:
        if sample.at < start:
            before = sample
            continue
        if sample.at > end:
            continue
        i = min(columns - 1, int((sample.at - start) / width))
        current = found[i]
        if current is None or badness(sample) >= badness(current):
            found[i] = sample
    # a sample holds until the next one (snapshots come every few seconds, columns may be
    # shorter), but not across a gap longer than HOLD_SECONDS: the app was not watching
    held = before
    for i, sample in enumerate(found):
        if sample is not None:
            held = sample
        elif held is not None and start + i * width - held.at <= HOLD_SECONDS:
            found[i] = held
    return found


def badness(sample: Sample) -> tuple[int, int, float]:
    return sample.total("down"), sample.total("drained"), sample.at
