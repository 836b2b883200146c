"""`npa soperator status` / `ssh`: JSON shape (superset of npa's), NDJSON watch, exit codes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from npa_sop_tui.cli.entry import main
from npa_sop_tui.home.paths import cluster_dir, known_hosts_path
from npa_sop_tui.sandbox.fake_kube import FakeKubeServer
from npa_sop_tui.sandbox.fake_kube_objects import (
    make_login_service,
    make_node,
    make_nodeset,
    make_pod,
    make_slurmcluster,
)

from testkit.gpu_lab import LABS, GpuLab
from testkit.substrate import Substrate

NPA = [sys.executable, "-c", "import sys; from npa_sop_tui.cli.entry import main; sys.exit(main())"]


def _status(kubeconfig: Path, *flags: str) -> list[str]:
    """`npa soperator status` of the cluster `demo` through the fake API's kubeconfig."""
    return ["soperator", "status", "--name", "demo", "--kubeconfig", str(kubeconfig), *flags]


def _login(port: int, user: str, key: Path) -> list[str]:
    """SSH to a login node on loopback, its host key accepted on first use."""
    address = ["--login-port", str(port), "--login-user", user]
    return [*address, "-i", str(key), "--accept-new-host-key"]


def ready_cluster(srv: FakeKubeServer, login_ip: str = "203.0.113.5") -> None:
    srv.add("nodes", make_node("sys-0", nodeset="system"))
    srv.add("nodes", make_node("w0", pool="worker", gpu=True))
    srv.add("pods", make_pod("controller-0", "controller"))
    srv.add("pods", make_pod("worker-0", "nodeset", nodeset="worker", node="w0"))
    srv.add("slurmclusters", make_slurmcluster())
    srv.add("nodesets", make_nodeset("worker", replicas=1, ready=1))
    srv.add("services", make_login_service(login_ip))


def test_status_json_is_a_superset_of_npa(
    fake_kube: FakeKubeServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ready_cluster(fake_kube)
    rc = main(_status(kubeconfig, "--no-slurm", "--output", "json"))
    out = capsys.readouterr().out
    assert rc == 0
    lines = out.strip().splitlines()
    assert len(lines) == 1  # exactly one line, like npa
    doc = json.loads(lines[0])
    # npa's keys first, with npa's meaning
    assert list(doc)[:5] == ["name", "context", "sinfo", "workers", "capacity_status"]
    assert doc["name"] == "demo" and doc["context"] == "nebius-demo-slurm"
    assert doc["workers"] == [] and doc["capacity_status"] == "unknown"
    # structured additions
    assert doc["verdict"]["state"] == "ready"
    assert doc["freshness"]["kube"]["state"] == "fresh"
    assert doc["freshness"]["slurm"]["state"] == "disabled"
    assert doc["login"] == {"host": "203.0.113.5", "port": 22, "user": "root", "source": "service"}
    kube = doc["kube"]
    assert [g["name"] for g in kube["node_groups"]] == ["worker", "system"]
    assert kube["node_groups"][0] | {"nodes": None, "notable_conditions": None} == {
        "name": "worker",
        "role": "worker",
        "ready": 1,
        "total": 1,
        "preemptible": False,
        "gpu": True,
        "nodes": None,
        "notable_conditions": None,
    }
    assert {c["component"] for c in kube["components"]} == {"controller", "nodeset"}
    assert kube["slurm_cluster"]["phase"] == "Available"
    assert kube["nodesets"][0] == {
        "name": "worker",
        "desired": 1,
        "ready": 1,
        "phase": "Ready",
        "ephemeral": False,
        "conditions": kube["nodesets"][0]["conditions"],
    }


def test_status_exit_code_1_when_degraded_and_workers_from_tfstate(
    fake_kube: FakeKubeServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ready_cluster(fake_kube)
    fake_kube.add(
        "pods",
        make_pod("login-0", "login", ready=False, restarts=7, waiting_reason="CrashLoopBackOff"),
    )
    state = cluster_dir("demo") / "install" / "terraform.tfstate"
    state.parent.mkdir(parents=True)
    state.write_text(
        json.dumps(
            {
                "resources": [
                    {
                        "type": "nebius_mk8s_v1_node_group",
                        "name": "worker_v2",
                        "instances": [
                            {
                                "attributes": {
                                    "name": "worker-0",
                                    "fixed_node_count": 2,
                                    "template": {"preemptible": {}},
                                }
                            },
                            {
                                "attributes": {
                                    "name": "worker-1",
                                    "fixed_node_count": 1,
                                    "template": {"preemptible": {}},
                                }
                            },
                        ],
                    },
                    {
                        "type": "nebius_mk8s_v1_node_group",
                        "name": "worker_v2",
                        "instances": [
                            {
                                "attributes": {
                                    "name": "big-0",
                                    "fixed_node_count": 4,
                                    "template": {
                                        "reservation_policy": {
                                            "policy": "STRICT",
                                            "reservation_ids": ["cb-1"],
                                        }
                                    },
                                }
                            }
                        ],
                    },
                ]
            }
        )
    )
    rc = main(_status(kubeconfig, "--no-slurm", "-o", "json"))
    doc = json.loads(capsys.readouterr().out)
    assert rc == 1
    assert doc["verdict"]["state"] == "failed"
    assert any(
        h["code"] == "crashloop" and h["subject"] == "login-0" for h in doc["verdict"]["hints"]
    )
    assert doc["capacity_status"] == "applied"
    assert doc["workers"] == [
        {"name": "big", "capacity_mode": "reserved", "node_groups": 1, "nodes": 4},
        {"name": "worker", "capacity_mode": "preemptible", "node_groups": 2, "nodes": 3},
    ]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--interval", "0"], "--interval '0.0' must be between 1 and 3600 seconds"),
        # status --watch --interval 1e-9 would busy-loop; nan gave a traceback
        (["--watch", "--interval", "1e-9"], "--interval '1e-09' must be between 1 and 3600"),
        (["--watch", "--interval", "nan"], "--interval 'nan' must be between 1 and 3600"),
        (["--watch", "--interval", "inf"], "--interval 'inf' must be between 1 and 3600"),
        (["--kubeconfig", "/nonexistent/kc"], "--kubeconfig /nonexistent/kc: file not found"),
        (["--identity-file", "/nonexistent/key"], "--identity-file /nonexistent/key"),
        (["--login-port", "70000"], "is not a TCP port"),
    ],
)
def test_bad_flags_exit_2_without_traceback(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["soperator", "status", "--name", "demo", *flags])
    err = capsys.readouterr().err
    assert rc == 2
    assert message in err and "Traceback" not in err


def test_status_headless_import_stays_light() -> None:
    code = (
        "import sys; import npa_sop_tui.cli; import npa_sop_tui.cli.status_cmds; "
        "print(sorted(m for m in ('textual', 'kubernetes', 'asyncssh') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _read_json_line(proc: subprocess.Popen[str], timeout: float = 20) -> dict[str, object]:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.strip():
            return json.loads(line)
        if proc.poll() is not None:
            raise AssertionError(f"npa exited {proc.returncode}: {proc.stderr.read()}")  # type: ignore[union-attr]
    raise AssertionError("no NDJSON line in time")


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slurm
def test_watch_ndjson_against_fake_kube_and_real_slurm(
    substrate: Substrate, fake_kube: FakeKubeServer, kubeconfig: Path, npa_home: Path
) -> None:
    ready_cluster(fake_kube, login_ip="127.0.0.1")  # login IP from the Service
    cmd = [
        *NPA,
        *_status(kubeconfig, *_login(substrate.port, substrate.user, substrate.key)),
        *("--watch", "--interval", "1", "-o", "json"),
    ]
    env = {**os.environ, "NPA_HOME": str(npa_home)}
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        # Ctrl-C as in a terminal: a runner started in the background (`cmd &`) hands its
        # children SIGINT ignored, and Python then installs no KeyboardInterrupt at all
        preexec_fn=_default_sigint,
    )
    try:
        first = _read_json_line(proc)
        assert first["freshness"] == {**first["freshness"]}  # type: ignore[comparison-overlap]
        assert first["login"]["source"] == "service"  # type: ignore[index]
        assert first["freshness"]["kube"]["state"] == "fresh"  # type: ignore[index]
        assert first["freshness"]["slurm"]["state"] == "fresh", first["freshness"]  # type: ignore[index]
        assert "PARTITION" in str(first["sinfo"])
        slurm = first["slurm"]
        assert {p["name"] for p in slurm["partitions"]} == {"main", "debug"}  # type: ignore[index]
        # A change in Kubernetes → a new NDJSON line. Heartbeats (freshness only) and Slurm
        # polls may come first on a loaded machine: read on until a snapshot shows it.
        fake_kube.add("nodes", make_node("w1", pool="worker", ready=False))
        deadline = time.monotonic() + 30
        seen: list[tuple[object, object]] = []
        while (1, 2) not in seen and time.monotonic() < deadline:
            line = _read_json_line(proc)
            if "kube" in line:
                worker = next(
                    g
                    for g in line["kube"]["node_groups"]  # type: ignore[index]
                    if g["name"] == "worker"
                )
                seen.append((worker["ready"], worker["total"]))
        assert (1, 2) in seen, f"worker pool ready/total per snapshot: {seen}"
        assert known_hosts_path().read_text().startswith("[127.0.0.1]:2222 ")
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            rc = proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert rc == 130
    assert "Traceback" not in proc.stderr.read()  # type: ignore[union-attr]


@pytest.mark.slurm
def test_ssh_runs_a_remote_command_with_npa_known_hosts(
    substrate: Substrate, npa_home: Path
) -> None:
    base = [
        *NPA,
        "soperator",
        "ssh",
        "--name",
        "lab",
        "--login-host",
        substrate.host,
        "--login-port",
        str(substrate.port),
        "--login-user",
        substrate.user,
        "-i",
        str(substrate.key),
    ]
    env = {**os.environ, "NPA_HOME": str(npa_home)}
    refused = subprocess.run(
        [*base, "--", "sinfo", "-h", "-o", "%P"],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert refused.returncode != 0 and "Host key verification failed" in refused.stderr
    ok = subprocess.run(
        [*base, "--accept-new-host-key", "--", "sinfo", "-h", "-o", "%P"],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.split() == ["main*", "debug"]
    assert f"[127.0.0.1]:{substrate.port}" in known_hosts_path().read_text()


@pytest.mark.slurm
@pytest.mark.parametrize("gpu_lab", [LABS[1]], indirect=True, ids=["slurm26.05"])
def test_status_json_reads_slurm26_through_the_login_service(
    gpu_lab: GpuLab,
    fake_kube: FakeKubeServer,
    kubeconfig: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """One `status -o json` against a Slurm 26.05 login node found through the Service: the
    release, both partitions (`hidden` too) and the nodes as 26.05 prints them."""
    ready_cluster(fake_kube, login_ip=gpu_lab.host)
    rc = main(_status(kubeconfig, *_login(gpu_lab.port, gpu_lab.user, gpu_lab.key), "-o", "json"))
    out = json.loads(capsys.readouterr().out)
    assert rc in (0, 1) and out["login"]["source"] == "service"
    slurm = out["slurm"]
    assert slurm["version"].startswith("26.05"), out["freshness"]
    assert [p["name"] for p in slurm["partitions"]] == list(gpu_lab.partitions)
    assert sorted(n["name"] for n in slurm["nodes"]) == list(gpu_lab.nodes)
    assert "hidden" in out["sinfo"] and out["freshness"]["slurm"]["state"] == "fresh"
