"""The ActiveChecks a sandbox cluster shows once its activechecks release is installed: the
shape Soperator's `soperator-activechecks` chart creates, with finished runs."""

from __future__ import annotations

from typing import Any


def _check(name: str, kind: str, *, after_creation: bool, status: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "slurm.nebius.ai/v1alpha1",
        "kind": "ActiveCheck",
        "metadata": {"name": name, "namespace": "soperator"},
        "spec": {
            "name": name,
            "slurmClusterRefName": "soperator",
            "checkType": kind,
            "schedule": "0 */6 * * *",
            "suspend": False,
            "runAfterCreation": after_creation,
            "failureReactions": {"drainSlurmNode": {"drainReasonPrefix": "[node_problem]"}},
        },
        "status": status,
    }


def sandbox_active_checks(spec: Any) -> list[dict[str, Any]]:
    checks = [
        _check("ssh-check", "k8sJob", after_creation=True,
               status={"k8sJobsStatus": {"lastJobStatus": "Complete"}}),
    ]  # fmt: skip
    if getattr(spec, "has_gpu", False):
        checks.append(
            _check("cuda-samples", "slurmJob", after_creation=True,
                   status={"slurmJobsStatus": {"lastRunStatus": "Complete", "lastRunId": "11",
                                               "lastRunSubmitTime": "2026-11-30T00:00:00Z"}})
        )  # fmt: skip
    return checks
