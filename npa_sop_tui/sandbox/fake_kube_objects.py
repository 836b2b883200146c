"""The Kubernetes objects the fake API server and the sandbox serve, shaped as Soperator's
controllers publish them.

Followed upstream (nebius/soperator tag 4.1.6, 65e088abe53b2a52bed18b9536196139f693ab20):
- SlurmCluster status: `internal/controller/clustercontroller/reconcile.go` (phase `Pending`
  on first reconcile, then `Available` or `Not available`; conditions start `Unknown` with
  reason `SetUpCondition`; `Available`/`NotAvailable` reasons; `AccountingAvailable` `False`
  "Slurm accounting is disabled" when accounting is off; `PopulateJailMode`);
- NodeSet status: `internal/controller/nodesetcontroller/reconcile.go` (phases `Pending`,
  `Provisioning`, `Ready`, `Terminating`; `PodsReady` with `NodeSetReady`/`NodeSetNotReady`;
  `Terminating` is maintenance: `StatefulSetTerminated=True`, reason `Maintenance`, "Workers
  are disabled");
- worker pods: `internal/render/worker/statefulset.go` (`<nodeset>-<i>`, component `nodeset`,
  label `slurm.nebius.ai/nodeset`); the operator in namespace `soperator-system`;
- every SlurmCluster, NodeSet and ActiveCheck validates against the CRDs in
  `config/crd/bases/` (tests/sandbox/test_crd_conformance.py checks it).
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

NAMESPACE = "soperator"
OPERATOR_NAMESPACE = "soperator-system"
WHEN = "2026-11-30T00:00:00Z"
IMAGE = "cr.eu-north1.nebius.cloud/soperator"

SLURMCLUSTER_CONDITIONS = (
    "CommonAvailable",
    "ControllersAvailable",
    "LoginAvailable",
    "SConfigControllerAvailable",
    "AccountingAvailable",
)
NODESET_PHASES = ("Pending", "Provisioning", "Ready", "Terminating")
SLURMCLUSTER_PHASES = ("Pending", "Not available", "Available")


def _cond(type_: str, status: bool | str, reason: str | None = None, message: str = "") -> Obj:
    value = status if isinstance(status, str) else ("True" if status else "False")
    return {
        "type": type_,
        "status": value,
        "reason": reason or type_,
        "message": message,
        "lastTransitionTime": WHEN,
    }


def cluster_condition(type_: str, status: bool | str, *, accounting: bool = True) -> Obj:
    """A SlurmCluster condition with the reason and message the cluster controller sets."""
    value = status if isinstance(status, str) else ("True" if status else "False")
    subject = type_.removesuffix("Available")
    if type_ == "AccountingAvailable" and not accounting:
        return _cond(type_, "False", "NotAvailable", "Slurm accounting is disabled")
    if value == "Unknown":
        return _cond(type_, "Unknown", "SetUpCondition", "The object is not ready yet.")
    if value == "True":
        return _cond(type_, "True", "Available", f"{subject} is available")
    return _cond(type_, "False", "NotAvailable", f"{subject} is not available yet")


def make_node(
    name: str,
    *,
    nodeset: str = "worker",
    pool: str | None = None,
    ready: bool = True,
    gpu: bool = False,
    preemptible: bool = False,
    unschedulable: bool = False,
    extra_conditions: list[Obj] | None = None,
) -> Obj:
    """A Kubernetes node with the labels the recipe's node groups carry
    (`modules/k8s/k8s_ng_workers_v2.tf` at nebius-solutions-library 9a187732)."""
    labels = {
        "slurm.nebius.ai/nodeset": nodeset,
        "nebius.com/node-group-id": f"mk8snodegroup-{pool or nodeset}",
    }
    if pool:
        labels["slurm.nebius.ai/nodeset-name"] = pool
    if gpu:
        labels["nebius.com/gpu"] = "true"
        labels["slurm.nebius.ai/workload"] = "gpu"
    if preemptible:
        labels["nebius.com/preemptible"] = "true"
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": {"unschedulable": unschedulable},
        "status": {
            "conditions": [
                _cond("Ready", ready, "KubeletReady" if ready else "KubeletNotReady"),
                *(extra_conditions or []),
            ]
        },
    }


def set_node_ready(obj: Obj, ready: bool) -> None:
    for c in obj["status"]["conditions"]:
        if c["type"] == "Ready":
            c["status"] = "True" if ready else "False"
            c["reason"] = "KubeletReady" if ready else "KubeletNotReady"


def make_pod(
    name: str,
    component: str,
    *,
    phase: str = "Running",
    ready: bool = True,
    restarts: int = 0,
    waiting_reason: str | None = None,
    waiting_message: str = "",
    unschedulable_message: str | None = None,
    init_waiting_reason: str | None = None,
    node: str | None = None,
    nodeset: str | None = None,
    namespace: str = NAMESPACE,
) -> Obj:
    labels = {
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/instance": "soperator",
        "app.kubernetes.io/name": "slurmcluster",
    }
    if nodeset:
        labels["slurm.nebius.ai/nodeset"] = nodeset
        labels["slurm.nebius.ai/worker"] = "true"
    state: Obj = {"running": {"startedAt": WHEN}}
    if waiting_reason:
        state = {"waiting": {"reason": waiting_reason, "message": waiting_message}}
    status: Obj = {
        "phase": phase,
        "conditions": [_cond("Ready", ready)],
        "containerStatuses": []
        if phase == "Pending" and not waiting_reason
        else [
            {
                "name": component,
                "ready": ready,
                "restartCount": restarts,
                "image": "img",
                "imageID": "",
                "state": state,
            }
        ],
    }
    if unschedulable_message:
        status["conditions"].append(
            _cond("PodScheduled", False, "Unschedulable", unschedulable_message)
        )
    if init_waiting_reason:
        status["initContainerStatuses"] = [
            {
                "name": "ensure-jail-virtiofs",
                "ready": False,
                "restartCount": 3,
                "image": "img",
                "imageID": "",
                "state": {"waiting": {"reason": init_waiting_reason}},
            }
        ]
    spec: Obj = {"containers": [{"name": component, "image": "img"}]}
    if node:
        spec["nodeName"] = node
    return {
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": spec,
        "status": status,
    }


def make_worker_pod(nodeset: str, index: int, **kwargs: Any) -> Obj:
    """A worker pod as the NodeSet's StatefulSet names it: `<nodeset>-<i>`, component
    `nodeset`, label `slurm.nebius.ai/nodeset: <nodeset>` (the Slurm node has the same name)."""
    return make_pod(f"{nodeset}-{index}", "nodeset", nodeset=nodeset, **kwargs)


def make_operator_pod(
    *,
    ready: bool = True,
    node: str | None = None,
    version: str = "4.1.6",
    waiting_reason: str | None = None,
    restarts: int = 0,
    name: str = "soperator-controller-manager-0",
) -> Obj:
    """The operator's controller manager as the soperator chart deploys it
    (`helm/soperator/templates/deployment.yaml`): namespace `soperator-system`, not
    `soperator`; label `control-plane: controller-manager`; container `manager` running
    `slurm-operator:<version>`."""
    pod = make_pod(
        name, "manager", ready=ready, node=node, namespace=OPERATOR_NAMESPACE,
        waiting_reason=waiting_reason, restarts=restarts,
    )  # fmt: skip
    pod["metadata"]["labels"]["control-plane"] = "controller-manager"
    image = f"{IMAGE}/slurm-operator:{version}"
    pod["spec"]["containers"] = [{"name": "manager", "image": image}]
    for status in pod["status"]["containerStatuses"]:
        status.update(name="manager", image=image)
    return pod


def _jail() -> Obj:
    return {"volumeSourceName": "jail"}


def slurmcluster_spec(*, login_size: int = 2, accounting: bool = True) -> Obj:
    """The spec the recipe's slurm-cluster chart renders, with every field the CRD requires."""
    image = f"{IMAGE}/%s:1.0.0-slurm25.11.3"
    return {
        "k8sNodeFilters": [{"name": "system"}, {"name": "cpu"}, {"name": "gpu"}],
        "populateJail": {"image": image % "populate_jail", "k8sNodeFilterName": "system"},
        "secrets": {"sshdKeysName": "soperator-sshd-keys"},
        "maintenance": "none",
        "slurmNodes": {
            "accounting": {"enabled": accounting, "k8sNodeFilterName": "system"},
            "controller": {
                "k8sNodeFilterName": "system",
                "munge": {"image": image % "munge"},
                "slurmctld": {"image": image % "controller_slurmctld"},
                "volumes": {"jail": _jail(), "spool": {"volumeSourceName": "controller-spool"}},
            },
            "exporter": {"enabled": True, "k8sNodeFilterName": "system"},
            "login": {
                "size": login_size,
                "k8sNodeFilterName": "system",
                "munge": {"image": image % "munge"},
                "sshd": {"image": image % "login_sshd"},
                "sshRootPublicKeys": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA sandbox"],
                "sshdServiceType": "LoadBalancer",
                "volumes": {"jail": _jail()},
            },
            "rest": {"enabled": False, "k8sNodeFilterName": "system"},
        },
    }


def make_slurmcluster(
    phase: str | None = "Available",
    *,
    conditions: dict[str, bool | str] | None = None,
    ready_login: int = 2,
    accounting: bool = True,
) -> Obj:
    """`conditions` maps a type to True/False/"Unknown"; missing types default to True.
    Without accounting, `AccountingAvailable` is False, "Slurm accounting is disabled"."""
    if phase is not None and phase not in SLURMCLUSTER_PHASES:
        raise ValueError(f"the cluster controller never sets phase {phase!r}")
    conditions = conditions or {}
    conds = [
        cluster_condition(t, conditions.get(t, True), accounting=accounting)
        for t in SLURMCLUSTER_CONDITIONS
    ]
    conds.append(_cond("PopulateJailMode", "True", "none", "Populate Jail maintenanceMode is none"))
    status: Obj = {"conditions": conds, "readyLogin": ready_login, "readySConfigController": 1}
    if phase is not None:
        status["phase"] = phase
    return {
        "apiVersion": "slurm.nebius.ai/v1",
        "kind": "SlurmCluster",
        "metadata": {"name": "soperator", "namespace": NAMESPACE},
        "spec": slurmcluster_spec(login_size=max(ready_login, 1), accounting=accounting),
        "status": status,
    }


def make_nodeset(
    name: str, *, replicas: int, ready: int, phase: str = "Ready", ephemeral: bool = False
) -> Obj:
    if phase not in NODESET_PHASES:
        raise ValueError(f"the NodeSet controller never sets phase {phase!r}")
    image = {"repository": f"{IMAGE}/worker_slurmd", "tag": "1.0.0-slurm25.11.3"}
    pods_ready = ready >= replicas
    conditions = [
        _cond("PodsReady", True, "NodeSetReady", "NodeSet is ready")
        if pods_ready
        else _cond("PodsReady", False, "NodeSetNotReady", "NodeSet is not ready")
    ]
    if phase == "Terminating":  # the controller's maintenance: the cluster disabled workers
        conditions.append(
            _cond("StatefulSetTerminated", True, "Maintenance", "Workers are disabled")
        )
    return {
        "apiVersion": "slurm.nebius.ai/v1alpha1",
        "kind": "NodeSet",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "replicas": replicas,
            "ephemeralNodes": ephemeral,
            "nodeSelector": {"slurm.nebius.ai/nodeset-name": name},
            "munge": {"image": {**image, "repository": f"{IMAGE}/munge"}, "resources": {}},
            "slurmd": {
                "image": image,
                "resources": {"cpu": "1", "memory": "1Gi"},
                "volumes": {"jail": {"emptyDir": {}}, "spool": {"emptyDir": {}}},
            },
        },
        "status": {
            "phase": phase,
            "replicas": ready,
            "conditions": conditions,
        },
    }


def make_login_service(ip: str | None) -> Obj:
    ingress = [{"ip": ip}] if ip else []
    return {
        "metadata": {"name": "soperator-login-svc", "namespace": NAMESPACE},
        "spec": {"type": "LoadBalancer", "ports": [{"name": "sshd", "port": 22}]},
        "status": {"loadBalancer": {"ingress": ingress}},
    }
