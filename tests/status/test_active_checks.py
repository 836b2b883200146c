"""status/active_checks.py: the ActiveCheck parser, the wait hook's decision table, the
per-node results and the hints, each rule pinned to what it means (the flows through the
watcher and the dashboard are in test_status_active_checks.py)."""

from __future__ import annotations

from typing import Any

import pytest

from npa_sop_tui.status import active_checks as ac
from npa_sop_tui.status.active_checks import (
    failed,
    hints,
    parse_active_checks,
    results_by_node,
    wait_state,
    waiting_on,
)
from npa_sop_tui.status.model import ActiveCheckInfo, SlurmNode


def raw(name: str, kind: str | None, status: dict[str, Any] | None = None, **spec: Any) -> dict:
    body: dict[str, Any] = {"name": name, "runAfterCreation": True, **spec}
    if kind is not None:
        body["checkType"] = kind
    out: dict[str, Any] = {"metadata": {"name": f"meta-{name}"}, "spec": body}
    if status is not None:
        out["status"] = status
    return out


def test_the_wait_job_tables_are_the_ones_soperator_4_1_6_uses() -> None:
    # wait-for-checks-job.yaml: which latest-run states end the wait, which fail the release
    assert ac.DONE == {"k8sJob": ("Complete",), "slurmJob": ("Complete", "Cancelled")}
    assert ac.FAILED == {"k8sJob": ("Failed",), "slurmJob": ("Failed", "Degraded")}
    assert ac.ERRORED == ("Error",)
    assert ac.REASON_PREFIXES == ("[node_problem]", "[hardware_problem]")


def test_a_slurm_check_keeps_its_run_id_submit_time_and_every_failed_or_errored_job() -> None:
    status = {
        "slurmJobsStatus": {
            "lastRunStatus": "Failed",
            "lastRunId": 42,
            "lastRunSubmitTime": "2026-01-02T03:04:05Z",
            "lastRunFailJobsAndReasons": [{"jobID": 7, "reason": "NCCL too slow"}],
            "lastRunErrorJobsAndReasons": [{"reason": "  "}, {"jobID": 9}],
        }
    }
    (c,) = parse_active_checks([raw("nccl", "slurmJob", status, suspend=True, schedule="@daily")])
    assert c.name == "nccl" and c.type == "slurmJob" and c.status == "Failed"
    assert c.last_run_id == "42" and c.last_run_submitted == "2026-01-02T03:04:05Z"
    # a job without an ID shows "?", a blank or missing reason leaves no trailing text
    assert c.failures == ["job 7: NCCL too slow", "job ?:", "job 9:"]
    assert c.suspended is True and c.schedule == "@daily" and c.run_after_creation is True


def test_a_k8s_check_has_its_job_status_and_no_run_id_or_failures() -> None:
    status = {
        "k8sJobsStatus": {"lastJobStatus": "Complete"},
        "slurmJobsStatus": {"lastRunId": 3, "lastRunFailJobsAndReasons": [{"jobID": 1}]},
    }
    (c,) = parse_active_checks([raw("ssh", "k8sJob", status)])
    assert c.status == "Complete" and c.failures == []
    assert c.last_run_id is None and c.last_run_submitted is None
    assert c.suspended is False and c.comment_only is False and c.schedule is None


def test_a_run_id_of_zero_is_still_a_run_id() -> None:
    (c,) = parse_active_checks([raw("x", "slurmJob", {"slurmJobsStatus": {"lastRunId": 0}})])
    assert c.last_run_id == "0"


def test_missing_parts_read_as_empty_and_the_name_falls_back_to_the_metadata() -> None:
    (c,) = parse_active_checks([{"metadata": {"name": "only-meta"}, "spec": None, "status": None}])
    assert c.name == "only-meta" and c.type == "unknown" and c.status is None
    assert c.run_after_creation is False and c.failures == []
    (nothing,) = parse_active_checks([{}])
    assert nothing.name == "None" and nothing.type == "unknown"


def test_checks_come_out_sorted_by_name() -> None:
    out = parse_active_checks([raw("b", "k8sJob"), raw("c", "k8sJob"), raw("a", "k8sJob")])
    assert [c.name for c in out] == ["a", "b", "c"]


def test_only_a_comment_reaction_makes_the_wait_hook_ignore_a_check() -> None:
    def comment_only(reactions: Any) -> bool:
        (c,) = parse_active_checks([raw("x", "slurmJob", failureReactions=reactions)])
        return c.comment_only

    assert comment_only({"commentSlurmNode": {}}) is True  # set, even if empty
    assert comment_only({"commentSlurmNode": None}) is False
    assert comment_only({"drainSlurmNode": {}}) is False
    assert comment_only(None) is False


def test_a_check_of_an_unknown_type_is_ignored_by_the_wait_hook() -> None:
    assert wait_state(ActiveCheckInfo(name="x", type="other", run_after_creation=True)) == "ignored"
    assert failed(ActiveCheckInfo(name="x", type="other", status="Failed")) is False


def test_waiting_on_keeps_only_the_checks_still_waited_on() -> None:
    checks = [
        ActiveCheckInfo(name="w", type="k8sJob", run_after_creation=True),
        ActiveCheckInfo(name="d", type="k8sJob", status="Complete", run_after_creation=True),
        ActiveCheckInfo(name="f", type="slurmJob", status="Failed", run_after_creation=True),
        ActiveCheckInfo(name="i", type="k8sJob", run_after_creation=False),
    ]
    assert [c.name for c in waiting_on(checks)] == ["w"]


def test_per_node_results_match_the_check_name_before_the_colon_only() -> None:
    reasons = {
        "a": "[hardware_problem] gpu-fryer: hot",
        "b": "[node_problem] other: says gpu-fryer",
        "c": "gpu-fryer: no prefix",
        "d": None,
        "e": "[node_problem]gpu-fryer: no space",
        # the check named after the first colon is in the free text, not the check
        "f": "[node_problem] other: gpu-fryer says: hot",
    }
    nodes = [SlurmNode(name=n, state="idle", display="x", reason=r) for n, r in reasons.items()]
    assert results_by_node("gpu-fryer", nodes) == {"a": "[hardware_problem] gpu-fryer: hot"}


def test_a_failed_check_not_waited_on_is_a_warning_without_the_apply_note() -> None:
    c = ActiveCheckInfo(name="burn", type="k8sJob", status="Failed", run_after_creation=False)
    (h,) = hints([c], "ctx-1")
    assert h.code == "active-check-failed" and h.severity == "warning" and h.subject == "burn"
    assert h.message == "active check burn failed"
    assert h.action == (
        "kubectl --context ctx-1 -n soperator describe activecheck burn; "
        "drained nodes name it in their reason"
    )


def test_a_failed_check_the_apply_waits_on_is_an_error_naming_the_first_failure() -> None:
    c = ActiveCheckInfo(
        name="nccl", type="slurmJob", status="Degraded", run_after_creation=True,
        failures=["job 7: slow", "job 8: slower"],
    )  # fmt: skip
    (h,) = hints([c], "ctx")
    assert h.severity == "error"
    assert h.message == "active check nccl degraded: job 7: slow; a running apply fails on it"


def test_an_errored_slurm_check_is_a_warning_and_says_whether_the_apply_waits() -> None:
    waited = ActiveCheckInfo(name="s", type="slurmJob", status="Error", run_after_creation=True)
    (h,) = hints([waited], "ctx")
    assert h.code == "active-check-error" and h.severity == "warning" and h.subject == "s"
    assert h.message == (
        "active check s: its Slurm jobs errored; a running apply keeps waiting on it"
    )
    assert h.action == (
        "kubectl --context ctx -n soperator describe activecheck s; "
        "look at the jobs with `sacct` on the login node"
    )
    free = waited.model_copy(update={"run_after_creation": False, "failures": ["job 1: oom"]})
    (h,) = hints([free], "ctx")
    assert h.message == "active check s: its Slurm jobs errored: job 1: oom"


@pytest.mark.parametrize(
    "check",
    [
        ActiveCheckInfo(name="k", type="k8sJob", status="Error", run_after_creation=True),
        ActiveCheckInfo(name="c", type="slurmJob", status="Complete", run_after_creation=True),
        ActiveCheckInfo(name="p", type="slurmJob", status=None, run_after_creation=True),
    ],
)
def test_no_hint_unless_failed_or_errored_in_slurm(check: ActiveCheckInfo) -> None:
    assert hints([check], "ctx") == []


def test_per_node_results_skip_a_node_object_without_a_reason() -> None:
    # results_by_node takes any node-like object (the dashboard passes SlurmNodes)
    from types import SimpleNamespace

    nodes = [SimpleNamespace(name="x"), SimpleNamespace(name="y", reason="[node_problem] c: bad")]
    assert results_by_node("c", nodes) == {"y": "[node_problem] c: bad"}


def test_the_5_0_wait_job_is_named_after_its_cluster_and_counts_skipped_as_done() -> None:
    # wait-for-checks-job.yaml at nebius/soperator main c238d993 (VERSION 5.0.0)
    assert ac.WAIT_5_0.name_for("soperator") == "soperator-wait-for-active-checks"
    assert ac.WAIT_4_1.name_for("soperator") == "wait-for-active-checks"
    assert ac.WAIT_5_0.done == {"k8sJob": ("Complete",),
                                "slurmJob": ("Complete", "Skipped", "Cancelled")}  # fmt: skip
    assert ac.WAIT_5_0.failed == ac.WAIT_4_1.failed == ac.FAILED
    assert (ac.WAIT_5_0.by_cluster, ac.WAIT_4_1.by_cluster) == (True, False)
    assert ac.WAIT_5_0.gpu_checks == {"gpu-checks", "dcgmi-diag-r3"}
    assert "cuda-samples" in ac.WAIT_4_1.gpu_checks and "gpu-checks" not in ac.WAIT_4_1.gpu_checks


@pytest.mark.parametrize(
    "version,expected",
    [(None, "4.1"), ("4.1.6", "4.1"), ("4.1.13", "4.1"), ("5.0.0", "5.0"),
     ("4.1.13, 5.0.0", "5.0"), ("garbage", "4.1")],
)  # fmt: skip
def test_the_running_operator_picks_the_rules(version: str | None, expected: str) -> None:
    assert ac.wait_job(version).release == expected


def test_skipped_and_other_clusters_by_release() -> None:
    skipped = parse_active_checks([raw("g", "slurmJob", {"slurmJobsStatus": {
        "lastRunStatus": "Skipped"}}, slurmClusterRefName="soperator")])[0]  # fmt: skip
    foreign = parse_active_checks([raw("f", "k8sJob", {}, slurmClusterRefName="other")])[0]
    assert wait_state(skipped, ac.WAIT_4_1) == "waiting"  # 4.1.x does not know Skipped
    assert wait_state(skipped, ac.WAIT_5_0) == "done"
    assert wait_state(foreign, ac.WAIT_4_1) == "waiting"  # 4.1.x waits on every cluster's
    assert wait_state(foreign, ac.WAIT_5_0) == "ignored"
    assert wait_state(foreign, ac.WAIT_5_0, cluster="other") == "waiting"
    assert [c.name for c in waiting_on([skipped, foreign], ac.WAIT_5_0)] == []
    assert [c.name for c in waiting_on([skipped, foreign], ac.WAIT_4_1)] == ["g", "f"]


def test_gpu_checks_are_the_releases_own() -> None:
    objects = [raw("gpu-checks", "slurmJob"), raw("cuda-samples", "slurmJob")]

    def gpu(job: Any) -> dict[str, bool]:
        return {c.name: c.gpu for c in parse_active_checks(objects, job)}

    assert gpu(ac.WAIT_5_0) == {"gpu-checks": True, "cuda-samples": False}
    assert gpu(ac.WAIT_4_1) == {"gpu-checks": False, "cuda-samples": True}
    failed_gpu = parse_active_checks([raw("gpu-checks", "slurmJob", {"slurmJobsStatus": {
        "lastRunStatus": "Failed"}}, slurmClusterRefName="soperator")], ac.WAIT_5_0)  # fmt: skip
    (hint,) = hints(failed_gpu, "ctx", ac.WAIT_5_0)
    assert hint.action == (
        "kubectl --context ctx -n soperator describe activecheck gpu-checks; a GPU check: the "
        "nodes it drained have a GPU problem; drained nodes name it in their reason"
    )
    assert hint.severity == "error" and "a running apply fails on it" in hint.message


@pytest.mark.parametrize(
    ("kind", "status"),
    [
        ("slurmJob", {"slurmJobsStatus": {"lastRunStatus": "Failed"}}),
        ("slurmJob", {"slurmJobsStatus": {"lastRunStatus": "Degraded"}}),
        ("k8sJob", {"k8sJobsStatus": {"lastJobStatus": "Failed"}}),
    ],
)
def test_a_failed_check_that_only_comments_nodes_is_a_warning_not_an_apply_failure(
    kind: str, status: dict[str, Any]
) -> None:
    """The wait hook skips a `runAfterCreation` check with a `commentSlurmNode` reaction, so
    its failure never fails a running apply: a warning, without the apply note."""
    reactions = {"commentSlurmNode": {"commentPrefix": "[node_problem]"}}
    (check,) = parse_active_checks(
        [raw("nccl", kind, status, runAfterCreation=True, failureReactions=reactions)]
    )
    assert check.run_after_creation and check.comment_only and failed(check)
    assert wait_state(check) == "ignored"
    (hint,) = hints([check], "ctx")
    assert hint.code == "active-check-failed" and hint.severity == "warning"
    assert "apply" not in hint.message
