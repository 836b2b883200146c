"""The ActiveChecks a sandbox cluster shows once its activechecks release is installed.

Followed upstream: `helm/soperator-activechecks/values.yaml` and `templates/active-checks.yaml`
of nebius/soperator tag 4.1.6 (65e088abe53b2a52bed18b9536196139f693ab20): `ssh-check` and
`create-user-soperatorchecks` are k8sJob checks that are suspended (no schedule), run after
creation and have no failure reactions; `cuda-samples` is a slurmJob check scheduled every 6
hours with a `drainSlurmNode` reaction, run after creation. Finished runs carry the status
fields the CRD requires (`k8sJobsStatus.lastJobName` and `lastJobStatus`).
"""

from __future__ import annotations

from typing import Any

WHEN = "2026-11-30T00:00:00Z"


def _check(name: str, kind: str, *, status: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "slurm.nebius.ai/v1alpha1",
        "kind": "ActiveCheck",
        "metadata": {"name": name, "namespace": "soperator"},
        "spec": {
            "name": name,
            "slurmClusterRefName": "soperator",
            "checkType": kind,
            "runAfterCreation": True,
            **spec,
        },
        "status": status,
    }


def k8s_job_status(check: str, status: str = "Complete", run: int = 1) -> dict[str, Any]:
    """`status.k8sJobsStatus` of a k8sJob check whose latest Job is `<check>-<run>`."""
    return {
        "k8sJobsStatus": {
            "lastJobName": f"{check}-{run}",
            "lastJobStatus": status,
            "lastJobScheduleTime": WHEN,
            "lastTransitionTime": WHEN,
        }
    }


def sandbox_active_checks(spec: Any) -> list[dict[str, Any]]:
    checks = [
        _check("create-user-soperatorchecks", "k8sJob", suspend=True,
               status=k8s_job_status("create-user-soperatorchecks")),
        _check("ssh-check", "k8sJob", suspend=True, dependsOn=["create-user-soperatorchecks"],
               status=k8s_job_status("ssh-check")),
    ]  # fmt: skip
    if getattr(spec, "has_gpu", False):
        checks.append(
            _check("cuda-samples", "slurmJob", schedule="30 0-18/6 * * *", suspend=False,
                   failureReactions={"drainSlurmNode": {"drainReasonPrefix": "[node_problem]"}},
                   status={"slurmJobsStatus": {"lastRunStatus": "Complete", "lastRunId": "11",
                                               "lastRunName": "cuda-samples",
                                               "lastRunSubmitTime": WHEN}})
        )  # fmt: skip
    return checks
