"""Benchmarks: every figure is a ratio against a floor measured side by side in the same run.

    .venv/bin/python -m bench                 # all of them, then the ratio table
    .venv/bin/python -m bench validate status # some of them

Each `bench_<name>.py` has a `main()` that prints its own figures and returns `Ratio` rows;
`python -m bench` prints them together at the end. Nothing here is part of the test suite:
timings on a shared machine are for reading, not asserting.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Ratio:
    """`measured` / `floor` for one benchmark; `target` is the bound it should meet."""

    bench: str
    what: str
    measured: float
    floor_what: str
    floor: float
    target: str = ""  # e.g. "≤ 1.5", "≥ 5"; "" when the figure is only informative
    unit: str = "ms"
    # When measured and floor were timed in pairs (one right after the other, each round):
    # the median of the per-round ratios, which a machine whose load drifts during the run
    # disturbs far less than the ratio of the two medians. It is then the ratio shown.
    paired: float | None = None

    @property
    def ratio(self) -> float:
        if self.paired is not None:
            return self.paired
        return self.measured / self.floor if self.floor else float("inf")

    def met(self) -> str:
        if not self.target:
            return ""
        bound = float(self.target.split()[-1])
        ok = self.ratio <= bound if self.target.startswith("≤") else self.ratio >= bound
        return "yes" if ok else "NO"

    def line(self) -> str:
        return (
            f"{self.what}: {self.measured:.1f} {self.unit} / floor {self.floor_what}: "
            f"{self.floor:.1f} {self.unit} = {self.ratio:.2f}x"
            + (" (median of per-round ratios)" if self.paired is not None else "")
            + (f" (target {self.target}: {self.met()})" if self.target else "")
        )


def table(rows: list[Ratio]) -> str:
    """The ratio table, as Markdown (the README carries a copy)."""
    out = [
        "| bench | measured | floor | ratio | target | met |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        paired = " ᵖ" if r.paired is not None else ""
        out.append(
            f"| {r.bench}: {r.what} | {r.measured:.1f} {r.unit} | {r.floor_what}: "
            f"{r.floor:.1f} {r.unit} | {r.ratio:.2f}×{paired} | {r.target or '—'} | "
            f"{r.met() or '—'} |"
        )
    if any(r.paired is not None for r in rows):
        out.append("")
        out.append(
            "ᵖ timed in pairs each round: the median of the per-round ratios "
            "(the times shown are the medians of each side)"
        )
    return "\n".join(out)


def paired_ratio(measured: list[float], floor: list[float]) -> float:
    """The median of measured[i] / floor[i]: for figures timed in pairs, round by round."""
    import statistics

    return statistics.median(m / f for m, f in zip(measured, floor, strict=True) if f)
