"""sinfo_summary.py: the login node's Slurm release is asked once per connection."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from npa_sop_tui.status.sinfo_summary import VERSION_CMD, slurm_release


@dataclass
class _Done:
    stdout: str
    exit_status: int = 0


class _Runner:
    """Stands in for one SSH connection: counts what it was asked to run."""

    def __init__(self) -> None:
        self.commands: list[str] = []

    async def run(self, command: str, *, timeout: float) -> _Done:
        self.commands.append(command)
        return _Done("slurm 25.11.3\n")


def test_the_release_is_asked_once_per_connection() -> None:
    async def twice(runner: _Runner) -> list[str | None]:
        return [await slurm_release(runner, timeout=5), await slurm_release(runner, timeout=5)]

    first, second = _Runner(), _Runner()
    assert asyncio.run(twice(first)) == ["25.11.3", "25.11.3"]
    assert first.commands == [VERSION_CMD]  # the second answer came from the cache
    asyncio.run(twice(second))
    assert second.commands == [VERSION_CMD]  # a new connection asks again, once
