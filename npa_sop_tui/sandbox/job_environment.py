"""The environment a sandbox job runs with: built from an allow-list, never npa's own.

A sandbox job is a command whoever may run jobs sends (`npa soperator run --sandbox`, an
agent's `infra.soperator.run`), run as a local process. npa's own environment holds the
caller's cloud credentials (`NEBIUS_IAM_TOKEN`, `AWS_SECRET_ACCESS_KEY`, a profile's key
file), which a job has no business with: `sh -c env` would print them and the job's
`output.log` would keep them. So a job gets what a shell and its tools need from npa's
environment (`JOB_ENV_NAMES`, `LC_*`), then what the sandbox sets for it (`extra`: the job's
folder, nodes and limits, the simulated cluster's tools). This is the one place that
environment is built.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from npa_sop_tui.terraform.binary import SHELL_ENV_NAMES

JOB_ENV_NAMES = SHELL_ENV_NAMES
JOB_ENV_PREFIXES = ("LC_",)


def allowed_for_jobs(name: str) -> bool:
    return name in JOB_ENV_NAMES or name.startswith(JOB_ENV_PREFIXES)


def job_environment(
    extra: Mapping[str, str], *, source: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The allow-listed part of `source` (default: npa's environment), then `extra`."""
    source = os.environ if source is None else source
    return {**{k: v for k, v in source.items() if allowed_for_jobs(k)}, **extra}
