"""A standalone fake Kubernetes API that plays a Soperator bring-up, to watch by hand:
`python -m npa_sop_tui.sandbox.fake_kube_demo --kubeconfig /tmp/kc --step 2` writes a
kubeconfig whose context points at it, then adds the objects step by step."""

from __future__ import annotations

import contextlib
from pathlib import Path

from npa_sop_tui.sandbox.fake_kube import FakeKubeServer
from npa_sop_tui.sandbox.fake_kube_objects import (
    SLURMCLUSTER_CONDITIONS,
    make_login_service,
    make_node,
    make_nodeset,
    make_pod,
    make_slurmcluster,
    set_node_ready,
)


def bring_up(srv: FakeKubeServer, *, workers: int, login_ip: str, step: float) -> None:
    """Play a Soperator bring-up: system nodes, operator CRs, workers turning Ready, login IP."""
    import time

    srv.add("nodes", make_node("system-0", nodeset="system"))
    srv.add("nodes", make_node("controller-0", nodeset="controller"))
    srv.add("services", make_login_service(None))
    srv.add(
        "slurmclusters",
        make_slurmcluster("Pending", conditions=dict.fromkeys(SLURMCLUSTER_CONDITIONS, "Unknown")),
    )
    srv.add("nodesets", make_nodeset("worker", replicas=workers, ready=0, phase="Provisioning"))
    for i in range(workers):
        srv.add(
            "pods",
            make_pod(
                f"worker-{i}",
                "nodeset",
                phase="Pending",
                ready=False,
                nodeset="worker",
                unschedulable_message=(
                    "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector"
                ),
            ),
        )
    time.sleep(step)
    srv.upsert(
        "slurmclusters", make_slurmcluster("Not available", conditions={"LoginAvailable": False})
    )
    srv.add("pods", make_pod("controller-0", "controller", node="controller-0"))
    for i in range(workers):
        time.sleep(step)
        srv.add("nodes", make_node(f"worker-node-{i}", pool="worker", gpu=True, ready=False))
        time.sleep(step / 2)
        srv.patch("nodes", f"worker-node-{i}", lambda o: set_node_ready(o, True))
        srv.upsert(
            "pods", make_pod(f"worker-{i}", "nodeset", nodeset="worker", node=f"worker-node-{i}")
        )
        srv.upsert(
            "nodesets",
            make_nodeset(
                "worker",
                replicas=workers,
                ready=i + 1,
                phase="Ready" if i + 1 == workers else "Provisioning",
            ),
        )
    time.sleep(step)
    srv.add("pods", make_pod("login-0", "login"))
    srv.upsert("slurmclusters", make_slurmcluster("Available"))
    time.sleep(step)
    srv.upsert("services", make_login_service(login_ip))


def _main(argv: list[str] | None = None) -> int:
    import argparse
    import signal

    p = argparse.ArgumentParser(
        prog="python -m npa_sop_tui.sandbox.fake_kube_demo",
        description="Serve a fake Kubernetes API with Soperator objects and write a kubeconfig.",
    )
    p.add_argument("--kubeconfig", type=Path, required=True, help="where to write the kubeconfig")
    p.add_argument("--context", default="nebius-lab-slurm")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--login-ip", default="127.0.0.1")
    p.add_argument("--step", type=float, default=2.0, help="seconds between bring-up steps")
    args = p.parse_args(argv)
    with FakeKubeServer() as srv:
        srv.write_kubeconfig(args.kubeconfig, args.context)
        print(
            f"fake API at {srv.url}; kubeconfig {args.kubeconfig} context {args.context}",
            flush=True,
        )
        bring_up(srv, workers=args.workers, login_ip=args.login_ip, step=args.step)
        print("bring-up done; Ctrl-C to stop", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            signal.pause()
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
