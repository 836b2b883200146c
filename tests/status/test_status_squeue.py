"""status/squeue.py: which job states count as active (Slurm's job_state names)."""

from __future__ import annotations

import pytest

from npa_sop_tui.status.jobs import SlurmJob
from npa_sop_tui.status.squeue import ACTIVE_STATES, active_jobs

# Slurm's base job states (src/common/slurm_protocol_defs.c job_state_string) and the
# flags squeue shows as states: a job in one of these still holds or waits for nodes.
ACTIVE = ("PENDING", "RUNNING", "SUSPENDED", "COMPLETING", "CONFIGURING", "REQUEUED", "RESIZING")
ENDED = ("COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL",
         "DEADLINE", "OUT_OF_MEMORY")  # fmt: skip


def _job(state: str) -> SlurmJob:
    return SlurmJob(id="7", name="j", user="u", state=state)


@pytest.mark.parametrize("state", ACTIVE)
def test_a_job_in_an_active_state_is_active(state: str) -> None:
    """A suspended job still holds its nodes: draining or destroying must count it."""
    assert [j.state for j in active_jobs([_job(state)])] == [state]


@pytest.mark.parametrize("state", ENDED)
def test_an_ended_job_is_not_active(state: str) -> None:
    assert active_jobs([_job(state)]) == []


def test_the_active_table_is_exactly_the_active_states() -> None:
    assert frozenset(ACTIVE) == ACTIVE_STATES


@pytest.mark.parametrize(
    ("release", "command"),
    [
        ("25.11.3", "squeue -a --json=v0.0.44"),  # Soperator 4.1.x answers in v0.0.44
        ("22.05.8", "squeue -a --json"),  # Debian 12: --json takes no argument
        (None, "squeue -a --json"),
    ],
)
def test_the_squeue_command_asks_for_the_format_the_release_speaks(
    release: str | None, command: str
) -> None:
    from npa_sop_tui.status.squeue import jobs_json_command

    assert jobs_json_command(release) == command
