"""Soperator's ActiveCheck resources: what ran, what failed, what a running apply waits on.

An ActiveCheck (`slurm.nebius.ai/v1alpha1`) is a k8s Job or a Slurm job the operator runs
on the cluster (NCCL all-reduce, CUDA samples, GPU burn-in, ssh and user checks …). Its status
holds its latest run only; that is what counts. Old failed Job pods stay around (16 by
default, `render/soperatorchecks/cronjob.go`) and say nothing about now.

The recipe's Helm hook `wait-for-active-checks` holds the activechecks release, and so the
Terraform apply (up to 240 min). As that Job decides
(`helm/soperator-activechecks/templates/wait-for-checks-job.yaml`, nebius/soperator 4.1.6,
65e088abe53b2a52bed18b9536196139f693ab20):
- it waits only on checks with `runAfterCreation: true` and no `commentSlurmNode` reaction;
- k8sJob `lastJobStatus`: `Complete` → done; `Failed` → the release fails; anything else
  (empty counts as `Pending`) → it keeps waiting;
- slurmJob `lastRunStatus`: `Complete` or `Cancelled` → done; `Failed` or `Degraded` → the
  release fails; anything else, `Error` included, → it keeps waiting (`Skipped` exists only
  after 4.1.x: the 4.1.x Job keeps waiting on it too).
Soperator 5.0 (`main` at c238d993341a9f52b132062fbc3cb22f0fb63578, the same template) names
the Job `<slurmClusterRefName>-wait-for-active-checks`, selects only the checks whose
`spec.slurmClusterRefName` is its cluster, and counts a slurmJob `Skipped` as done. Its GPU
checks are one `gpu-checks` (4.1.x had cuda-samples, all-reduce-*, gpu-fryer, mem-perf,
ib-gpu-perf, extensive-check). `wait_job(operator_version)` picks the release's rules.
Failures drain Slurm nodes with `[node_problem] <check>` (or `[hardware_problem]`) reasons,
which is where the latest per-node result shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from npa_sop_tui.status.model import ActiveCheckInfo, Hint, KubeState

DONE = {"k8sJob": ("Complete",), "slurmJob": ("Complete", "Cancelled")}
FAILED = {"k8sJob": ("Failed",), "slurmJob": ("Failed", "Degraded")}
CLUSTER = "soperator"  # the recipe's SlurmCluster (and so every check's slurmClusterRefName)


@dataclass(frozen=True)
class WaitJob:
    """How one operator release's `wait-for-active-checks` Job decides, and which of its
    checks test GPUs."""

    release: str
    job_name: str  # `{cluster}` is the SlurmCluster's name
    done: Mapping[str, tuple[str, ...]]
    failed: Mapping[str, tuple[str, ...]]
    by_cluster: bool  # only checks whose spec.slurmClusterRefName is the cluster
    gpu_checks: frozenset[str]

    def name_for(self, cluster: str = CLUSTER) -> str:
        return self.job_name.format(cluster=cluster)


WAIT_4_1 = WaitJob(
    "4.1",
    "wait-for-active-checks",
    DONE,
    FAILED,
    by_cluster=False,
    gpu_checks=frozenset(
        {
            "cuda-samples",
            "all-reduce-perf-nccl-in-docker",
            "all-reduce-perf-nccl-with-ib",
            "all-reduce-perf-nccl-without-ib",
            "gpu-fryer",
            "mem-perf",
            "ib-gpu-perf",
            "extensive-check",
        }
    ),
)
WAIT_5_0 = WaitJob(
    "5.0",
    "{cluster}-wait-for-active-checks",
    {"k8sJob": ("Complete",), "slurmJob": ("Complete", "Skipped", "Cancelled")},
    FAILED,
    by_cluster=True,
    gpu_checks=frozenset({"gpu-checks", "dcgmi-diag-r3"}),
)


def wait_job(operator_version: str | None) -> WaitJob:
    """The rules of the operator that runs: 5.x's, else 4.1.x's (every deployable recipe's).
    During a rollout two versions run (`4.1.13, 5.0.0`): the newer one installs the Job."""
    majors = [v.strip().split(".", 1)[0] for v in (operator_version or "").split(",")]
    return WAIT_5_0 if "5" in majors else WAIT_4_1


def wait_job_of(kube: KubeState) -> WaitJob:
    return wait_job(kube.operator.version if kube.operator is not None else None)


ERRORED = ("Error",)  # a Slurm check whose jobs errored: shown, still waited on
REASON_PREFIXES = ("[node_problem]", "[hardware_problem]")
WaitState = Literal["ignored", "done", "failed", "waiting"]


def _comments_nodes(spec: dict[str, Any]) -> bool:
    """A `commentSlurmNode` failure reaction (with or without others): the wait hook ignores
    such checks."""
    reactions = spec.get("failureReactions") or {}
    return reactions.get("commentSlurmNode") is not None


def wait_state(
    check: ActiveCheckInfo, job: WaitJob = WAIT_4_1, cluster: str = CLUSTER
) -> WaitState:
    """What the `wait-for-active-checks` Job of `job`'s release makes of `check` now."""
    if not check.run_after_creation or check.comment_only or check.type not in job.done:
        return "ignored"
    if job.by_cluster and check.cluster_ref != cluster:
        return "ignored"
    status = check.status or "Pending"
    if status in job.done[check.type]:
        return "done"
    if status in job.failed[check.type]:
        return "failed"
    return "waiting"


def parse_active_checks(
    objects: list[dict[str, Any]], job: WaitJob = WAIT_4_1
) -> list[ActiveCheckInfo]:
    out = []
    for raw in objects:
        meta, spec, status = (
            raw.get("metadata") or {},
            raw.get("spec") or {},
            raw.get("status") or {},
        )
        kind = spec.get("checkType") or "unknown"
        if kind == "slurmJob":
            slurm = status.get("slurmJobsStatus") or {}
            state = slurm.get("lastRunStatus")
            failures = [
                f"job {f.get('jobID', '?')}: {f.get('reason', '')}".strip()
                for f in [*(slurm.get("lastRunFailJobsAndReasons") or []),
                          *(slurm.get("lastRunErrorJobsAndReasons") or [])]
            ]  # fmt: skip
            run_id, submitted = slurm.get("lastRunId"), slurm.get("lastRunSubmitTime")
        else:
            state = (status.get("k8sJobsStatus") or {}).get("lastJobStatus")
            failures, run_id, submitted = [], None, None
        name = str(spec.get("name") or meta.get("name"))
        out.append(
            ActiveCheckInfo(
                name=name,
                type=kind,
                cluster_ref=spec.get("slurmClusterRefName"),
                gpu=name in job.gpu_checks,
                status=state,
                run_after_creation=bool(spec.get("runAfterCreation")),
                suspended=bool(spec.get("suspend")),
                comment_only=_comments_nodes(spec),
                schedule=spec.get("schedule"),
                last_run_id=str(run_id) if run_id is not None else None,
                last_run_submitted=submitted,
                failures=failures,
            )
        )
    return sorted(out, key=lambda c: c.name)


def waiting_on(
    checks: list[ActiveCheckInfo], job: WaitJob = WAIT_4_1, cluster: str = CLUSTER
) -> list[ActiveCheckInfo]:
    """The checks the `wait-for-active-checks` hook (and so a running apply) still waits on.
    A failed one is not waited on any more: it aborts the release (see `hints`)."""
    return [c for c in checks if wait_state(c, job, cluster) == "waiting"]


def failed(check: ActiveCheckInfo) -> bool:
    """The latest run failed (k8sJob `Failed`; slurmJob `Failed` or `Degraded`)."""
    return check.status in FAILED.get(check.type, ())


def results_by_node(check: str, slurm_nodes: list[Any]) -> dict[str, str]:
    """Latest per-node result of `check`, from Slurm drain/comment reasons naming it."""
    out = {}
    for node in slurm_nodes:
        reason = getattr(node, "reason", None) or ""
        if reason.startswith(REASON_PREFIXES) and f" {check}" in reason.split(":", 1)[0]:
            out[node.name] = reason
    return out


def hints(
    checks: list[ActiveCheckInfo], context: str, job: WaitJob = WAIT_4_1, cluster: str = CLUSTER
) -> list[Hint]:
    """One hint per check whose latest run failed or errored (older runs do not count)."""
    out = []
    for c in checks:
        detail = f": {c.failures[0]}" if c.failures else ""
        describe = f"kubectl --context {context} -n soperator describe activecheck {c.name}"
        if c.gpu:
            describe += "; a GPU check: the nodes it drained have a GPU problem"
        if failed(c):
            aborts = wait_state(c, job, cluster) == "failed"
            out.append(
                Hint(
                    code="active-check-failed",
                    severity="error" if aborts else "warning",
                    message=f"active check {c.name} {str(c.status).lower()}{detail}"
                    + ("; a running apply fails on it" if aborts else ""),
                    action=f"{describe}; drained nodes name it in their reason",
                    subject=c.name,
                )
            )
        elif c.status in ERRORED and c.type == "slurmJob":
            waited = wait_state(c, job, cluster) == "waiting"
            out.append(
                Hint(
                    code="active-check-error",
                    severity="warning",
                    message=f"active check {c.name}: its Slurm jobs errored{detail}"
                    + ("; a running apply keeps waiting on it" if waited else ""),
                    action=f"{describe}; look at the jobs with `sacct` on the login node",
                    subject=c.name,
                )
            )
    return out
