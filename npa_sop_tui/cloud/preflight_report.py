"""The preflight report's documents: one row type per check, and the report itself.

Kept apart from preflight.py so the checks (allowances.py, reservations.py) build their rows
without importing the module that runs them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class QuotaRow(_Model):
    resource: str
    needed: int
    limit: int | None  # in the need's unit (an allowance in GiB is shown in bytes)
    usage: int | None
    verdict: str  # ok | short by N | unknown | frozen | deleted | provisioning
    unit: str
    level: Literal["tenant", "project"] = "tenant"  # whose allowance this is
    region: str | None = None
    # why a verdict is unknown: no answer, limit hidden, unit, not listed, usage unknown
    reason: str | None = None

    @property
    def failed(self) -> bool:
        return self.verdict.startswith("short") or self.verdict in UNUSABLE

    @property
    def undecided(self) -> bool:
        """Unknown for a reason that stops an operation unless unknowns are allowed."""
        return self.verdict == "unknown" and self.reason in UNDECIDED


UNUSABLE = ("frozen", "deleted", "provisioning")  # quota states nothing new can use
# Unknowns that stop a preflight (unless --allow-unknown), and their exit codes: the cloud
# did not answer (1: try again), or it answered in a way that cannot judge the spec (2: ask
# for the permission, check the unit by hand). A quota that is not listed, or whose usage the
# service could not say, stays a plain unknown row.
UNDECIDED = {"no answer": 1, "limit hidden": 2, "unit": 2}


class PoolShape(_Model):
    pool: str
    platform: str
    preset: str
    offered: bool | None  # None: unknown (neither the cloud nor the catalog could say)


class PlatformsSeen(_Model):
    source: Literal["live", "cache", "catalog"]
    offered: dict[str, list[str]] = Field(default_factory=dict)  # platform → presets
    pools: list[PoolShape] = Field(default_factory=list)


class ReservationRow(_Model):
    pool: str
    selector: Literal["id", "name"]
    group: str | None = None  # the group's name; its ID is never shown
    state: str | None = None
    gpus_needed: int
    gpus_free: int | None = None
    nodes_needed: int
    nodes_free: int | None = None
    verdict: str  # ok | a short reason


class AllowanceRow(_Model):
    """The project's capacity allowance in a reserved pool's group (CapacityAllowanceService)."""

    pool: str
    group: str | None  # the group's name; its ID is never shown
    state: str
    limit: int | None  # None: no per-project cap
    usage: int | None
    gpus_needed: int
    verdict: str  # ok | short | a state


class AvailabilityRow(_Model):
    pool: str
    mode: Literal["on-demand", "preemptible", "reserved"]
    level: str
    available: int
    needed: int
    data_state: str


class PriceRow(_Model):
    key: str
    count: int
    hourly: str  # decimal string


class Price(_Model):
    currency: str
    unit: Literal["hour"] = "hour"
    pools: list[PriceRow] = Field(default_factory=list)
    total: str
    daily: str = ""  # the total for 24 hours


class Problem(_Model):
    message: str
    hint: str


class PreflightReport(_Model):
    name: str
    region: str | None
    rows: list[QuotaRow] = Field(default_factory=list)
    platforms: PlatformsSeen | None = None
    reservations: list[ReservationRow] = Field(default_factory=list)
    allowances: list[AllowanceRow] = Field(default_factory=list)
    availability: list[AvailabilityRow] = Field(default_factory=list)
    price: Price | None = None
    warnings: list[str] = Field(default_factory=list)
    problems: list[Problem] = Field(default_factory=list)

    @property
    def blocked(self) -> bool:
        return bool(self.problems)

    def undecided(self) -> list[QuotaRow]:
        """The quota rows an operation may not go on without (see `UNDECIDED`)."""
        return [r for r in self.rows if r.undecided]

    def undecided_exit(self) -> int:
        """1 when the cloud did not answer for one of them, 2 when none is short of an
        answer but some cannot be judged; 0 when there are none."""
        codes = [UNDECIDED[r.reason] for r in self.undecided() if r.reason]
        return min(codes) if codes else 0

    def summary(self) -> str:
        short = [r for r in self.rows if r.failed]
        unknown = [r for r in self.rows if r.verdict == "unknown"]
        parts = [f"{len(self.rows) - len(short) - len(unknown)}/{len(self.rows)} quotas ok"]
        if short:
            parts.append(f"{len(short)} failed")
        if unknown:
            parts.append(f"{len(unknown)} unknown")
        if self.reservations:
            ok = sum(1 for r in self.reservations if r.verdict == "ok")
            parts.append(f"{ok}/{len(self.reservations)} reserved pools verified")
        if self.price is not None:
            parts.append(f"≈ {float(self.price.total):.2f} {self.price.currency}/hour")
        return ", ".join(parts)
