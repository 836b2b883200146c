"""The status snapshot: what a dashboard, the CLI and the SDK show about one cluster.

Everything here is plain data (pydantic, `extra="forbid"`), JSON-serialisable through
`model_dump(mode="json")`, with stable field names the TUI binds to. Collectors fill the
`kube` and `slurm` parts independently; each has its own freshness so Kubernetes being
unreachable never hides Slurm, and the other way round.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


FreshnessState = Literal["pending", "fresh", "stale", "error", "disabled"]


class Freshness(_Model):
    """How current one source's data is.

    pending: never collected yet; fresh: the last attempt succeeded; stale: the last attempt
    failed but older data is still shown (since `stale_since`); error: it failed and there is
    no data at all; disabled: the source is not configured (for example no login host yet).
    """

    state: FreshnessState = "pending"
    updated_at: float | None = None  # epoch seconds of the last successful collection
    stale_since: float | None = None  # first failure after the last success
    error: str | None = None  # message of the last failure
    note: str | None = None  # why a source is pending/disabled ("waiting for the login IP")


# --- Kubernetes -------------------------------------------------------------------------


class Condition(_Model):
    type: str
    status: str  # "True" | "False" | "Unknown"
    reason: str | None = None
    message: str | None = None


class KubeNode(_Model):
    name: str
    ready: bool
    unschedulable: bool = False
    nodeset: str | None = None  # slurm.nebius.ai/nodeset (role: system, controller, worker, …)
    nodeset_name: str | None = None  # slurm.nebius.ai/nodeset-name (worker pool)
    node_group_id: str | None = None
    preemptible: bool = False
    gpu: bool = False
    notable_conditions: list[Condition] = Field(default_factory=list)


class NodeGroup(_Model):
    """Kubernetes nodes that share a Soperator nodeset label (worker pools by pool name)."""

    name: str
    role: str | None = None
    ready: int = 0
    total: int = 0
    preemptible: bool = False
    gpu: bool = False
    nodes: list[KubeNode] = Field(default_factory=list)
    notable_conditions: list[Condition] = Field(default_factory=list)


class PodInfo(_Model):
    name: str
    component: str
    phase: str
    ready: bool = False
    restarts: int = 0
    node: str | None = None
    waiting_reason: str | None = None  # CrashLoopBackOff, ImagePullBackOff, Unschedulable, …
    message: str | None = None
    init: bool = False  # the waiting reason comes from an init container
    job: str | None = None  # the Job that ran it (active checks: one run each)


class ComponentPods(_Model):
    component: str
    ready: int = 0
    total: int = 0
    pods: list[PodInfo] = Field(default_factory=list)


class SlurmClusterInfo(_Model):
    name: str
    phase: str | None = None
    conditions: list[Condition] = Field(default_factory=list)
    ready_login: int | None = None


class NodeSetInfo(_Model):
    name: str
    desired: int = 0
    ready: int = 0
    phase: str | None = None
    ephemeral: bool = False
    conditions: list[Condition] = Field(default_factory=list)


class ActiveCheckInfo(_Model):
    """One Soperator ActiveCheck and its latest run (status/active_checks.py)."""

    name: str
    type: str  # k8sJob | slurmJob
    cluster_ref: str | None = None  # spec.slurmClusterRefName
    gpu: bool = False  # one of the release's GPU checks (5.0: gpu-checks)
    status: str | None = None  # Complete, InProgress, Failed, Active, Pending, …
    run_after_creation: bool = False
    suspended: bool = False
    # a `commentSlurmNode` failure reaction: the apply's wait hook ignores the check
    comment_only: bool = False
    schedule: str | None = None
    last_run_id: str | None = None
    last_run_submitted: str | None = None
    failures: list[str] = Field(default_factory=list)  # "job <id>: <reason>"


class OperatorInfo(_Model):
    """The Soperator operator itself: its controller-manager pods in `soperator-system` (not
    the cluster's namespace) and the version its `manager` container runs."""

    namespace: str = "soperator-system"
    version: str | None = None  # the manager image's tag, e.g. "4.1.6"
    pods: list[PodInfo] = Field(default_factory=list)


class KubeState(_Model):
    context: str
    node_groups: list[NodeGroup] = Field(default_factory=list)
    components: list[ComponentPods] = Field(default_factory=list)
    slurm_cluster: SlurmClusterInfo | None = None
    slurm_cluster_crd: bool = False  # False while the CRD does not exist yet (404)
    nodesets: list[NodeSetInfo] = Field(default_factory=list)
    nodesets_crd: bool = False
    login_service: bool = False
    login_ip: str | None = None
    active_checks: list[ActiveCheckInfo] = Field(default_factory=list)
    active_checks_crd: bool = False
    waiting_on: list[str] = Field(default_factory=list)  # checks a running apply waits on
    wait_job: str | None = None  # the release's wait Job: 5.0 names it after the cluster
    operator: OperatorInfo | None = None  # None until the operator's namespace was listed


# --- Slurm ------------------------------------------------------------------------------


class SlurmNode(_Model):
    name: str
    state: str  # sinfo's long state without suffix: idle, mixed, drained, down, unknown, …
    flags: list[str] = Field(default_factory=list)  # DRAIN, NOT_RESPONDING, POWERED_DOWN, …
    display: str  # compact text like sinfo %T: "drained*", "idle~"
    partitions: list[str] = Field(default_factory=list)
    cpus: int | None = None
    cpus_allocated: int | None = None
    memory_mb: int | None = None
    gres: str | None = None
    features: list[str] = Field(default_factory=list)
    reason: str | None = None

    @property
    def responding(self) -> bool:
        return "NOT_RESPONDING" not in self.flags

    @property
    def usable(self) -> bool:
        """Would Soperator's own check submitter schedule work on it."""
        return self.state in ("idle", "mixed", "allocated", "completing") and not (
            set(self.flags) & UNUSABLE_FLAGS
        )


UNUSABLE_FLAGS = frozenset(
    {
        "DRAIN",
        "NOT_RESPONDING",
        "INVALID_REG",
        "FAIL",
        "POWER_DOWN",
        "POWERING_DOWN",
        "POWERED_DOWN",
        "REBOOT_ISSUED",
        "REBOOT_REQUESTED",
        "RESERVED",
    }
)


class SlurmPartition(_Model):
    name: str
    default: bool = False
    available: str | None = None  # up / down / drain / inact
    timelimit: str | None = None
    nodes_total: int = 0
    nodes_allocated: int = 0
    nodes_idle: int = 0
    nodes_other: int = 0
    nodes: list[str] = Field(default_factory=list)
    state_counts: dict[str, int] = Field(default_factory=dict)  # display state → count


class SlurmState(_Model):
    host: str
    version: str | None = None
    source_format: str  # "json-v0.0.38", "json-v0.0.41+", "delimited"
    partitions: list[SlurmPartition] = Field(default_factory=list)
    nodes: list[SlurmNode] = Field(default_factory=list)
    sinfo_text: str = ""  # plain `sinfo` output, as npa shows it


# --- Verdict ----------------------------------------------------------------------------

VerdictState = Literal["ready", "progressing", "degraded", "failed", "destroyed", "unknown"]


class Hint(_Model):
    code: str  # stable id, e.g. "workers-no-nodes"
    severity: Literal["info", "warning", "error"]
    message: str  # what is going on
    action: str  # what to do about it
    subject: str | None = None  # the pool, pod, node … it is about


class Verdict(_Model):
    state: VerdictState
    summary: str
    hints: list[Hint] = Field(default_factory=list)


# --- npa compatibility ------------------------------------------------------------------


class WorkerCapacity(_Model):
    """npa's `workers[]` entry (from Terraform state of the installation)."""

    name: str
    capacity_mode: Literal["on-demand", "preemptible", "reserved"]
    node_groups: int
    nodes: int


class LoginTarget(_Model):
    host: str | None = None
    port: int = 22
    user: str = "root"
    source: Literal["flag", "config", "service", "none"] = "none"


class ApplyWaitDeadline(_Model):
    """One of the recipe's long waits a running deploy is in (status/apply_deadlines.py)."""

    what: str
    address: str  # the Terraform resource that waits
    minutes: int  # how long the recipe lets it wait
    started_at: float  # epoch seconds Terraform started it (the deploy's operation log)
    gives_up_at: float  # started_at + minutes: the apply fails there if still waiting
    operation_id: str


class ClusterStatus(_Model):
    """One snapshot. The first five fields are npa's `status --output json` shape."""

    name: str
    context: str
    sinfo: str = ""
    workers: list[WorkerCapacity] = Field(default_factory=list)
    capacity_status: Literal["applied", "unknown"] = "unknown"
    taken_at: float
    login: LoginTarget = Field(default_factory=LoginTarget)
    kube: KubeState | None = None
    slurm: SlurmState | None = None
    freshness: dict[Literal["kube", "slurm"], Freshness] = Field(
        default_factory=lambda: {"kube": Freshness(), "slurm": Freshness()}
    )
    verdict: Verdict = Field(
        default_factory=lambda: Verdict(state="unknown", summary="no data collected yet")
    )
    # The last deploy's post-deploy result (inventory): status, validation, gpu_creation_checks.
    gpu_validation: dict[str, object] | None = None
    # A deploy running on this machine that is in one of the recipe's long waits: until when.
    apply_waits: list[ApplyWaitDeadline] = Field(default_factory=list)

    @property
    def reach(self) -> Literal["running", "unreachable"]:
        """The existing npa's status word: `running` once Kubernetes answered."""
        return "running" if self.kube is not None else "unreachable"

    def content_key(self) -> str:
        """JSON of everything except timestamps: equal keys mean "nothing changed"."""
        data = self.model_dump(mode="json", exclude={"taken_at"})
        for fresh in data["freshness"].values():
            fresh.pop("updated_at", None)
        return _stable_json(data)


def _stable_json(data: object) -> str:
    import json

    return json.dumps(data, sort_keys=True, separators=(",", ":"))
