"""Post-deploy repairs (`--apply-fixes`, on by default). Each returns its own result; a
failure is a warning in the deploy result, never a crash.

- worker recovery (Slurm, on the login node): workers that are down or not responding get
  their address set to the nodeset service's DNS name, then are resumed;
- 4.1.x: the SlurmCluster CRD's `plugStackConfig` gets `x-kubernetes-preserve-unknown-fields`
  (the operator writes fields its published schema drops), and the `slurm-scripts` configmap
  is copied to `soperator-slurm-scripts`, the name the 4.1.x worker pods mount.
"""

from __future__ import annotations

import asyncio
import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from npa_sop_tui.postdeploy.shell import SlurmShell

NODE_ADDR = "{node}.soperator-nodeset-svc.soperator.svc.cluster.local"
NAMESPACE = "soperator"
CRD = "slurmclusters.slurm.nebius.ai"
SCRIPTS_FROM, SCRIPTS_TO = "slurm-scripts", "soperator-slurm-scripts"
COMMAND_TIMEOUT = 60.0


@dataclass
class RepairOutcome:
    repair: str
    result: str  # applied | not-needed | failed
    message: str = ""


def _needs_recovery(state: str) -> bool:
    return state.startswith("down") or state.endswith("*")


async def recover_workers(shell: SlurmShell, *, node_addr: str = NODE_ADDR) -> RepairOutcome:
    name = "worker-recovery"
    try:
        listed = await shell.run("sinfo -h -N -o '%N %t'", timeout=COMMAND_TIMEOUT)
        if listed.exit_status != 0:
            return RepairOutcome(name, "failed", f"sinfo: {listed.stderr.strip()[-200:]}")
        stuck = sorted(
            {n for n, _, t in (ln.partition(" ") for ln in listed.stdout.splitlines())
             if n and _needs_recovery(t.strip())}
        )  # fmt: skip
        if not stuck:
            return RepairOutcome(name, "not-needed", "every worker responds")
        problems = []
        for node in stuck:
            addr = node_addr.format(node=node)
            for update in (f"NodeAddr={shlex.quote(addr)}", "State=RESUME"):
                done = await shell.run(
                    f"scontrol update NodeName={shlex.quote(node)} {update}",
                    timeout=COMMAND_TIMEOUT,
                )
                if done.exit_status != 0:
                    problems.append(f"{node} {update.split('=')[0]}: {done.stderr.strip()}")
        if problems:
            return RepairOutcome(name, "failed", "; ".join(problems))
        return RepairOutcome(name, "applied", f"resumed {', '.join(stuck)}")
    except Exception as exc:  # an unreachable login node is a warning here
        return RepairOutcome(name, "failed", _describe(exc))


def _kube(kubeconfig: Path | None, context: str) -> Any:
    from kubernetes import config

    return config.new_client_from_config(
        config_file=str(kubeconfig) if kubeconfig else None, context=context
    )


def _crd_plugstack(api: Any) -> RepairOutcome:
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    name = "crd-plugstack-config"
    ext = client.ApiextensionsV1Api(api)
    try:
        raw = ext.read_custom_resource_definition(CRD, _preload_content=False)
    except ApiException as exc:
        if exc.status == 404:
            return RepairOutcome(name, "not-needed", f"{CRD} is not installed")
        raise
    crd = json.loads(raw.data)
    ops = []
    for i, version in enumerate(crd.get("spec", {}).get("versions", [])):
        props = (
            version.get("schema", {}).get("openAPIV3Schema", {}).get("properties", {})
            .get("spec", {}).get("properties", {})
        )  # fmt: skip
        plug = props.get("plugStackConfig")
        if plug is not None and plug.get("x-kubernetes-preserve-unknown-fields") is not True:
            path = (f"/spec/versions/{i}/schema/openAPIV3Schema/properties/spec/properties/"
                    "plugStackConfig/x-kubernetes-preserve-unknown-fields")  # fmt: skip
            ops.append({"op": "add", "path": path, "value": True})
    if not ops:
        return RepairOutcome(name, "not-needed", "plugStackConfig keeps unknown fields already")
    ext.patch_custom_resource_definition(CRD, ops)
    return RepairOutcome(name, "applied", f"{len(ops)} version(s) of {CRD} patched")


def _scripts_configmap(api: Any) -> RepairOutcome:
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    name = "slurm-scripts-configmap"
    core = client.CoreV1Api(api)
    try:
        core.read_namespaced_config_map(SCRIPTS_TO, NAMESPACE)
        return RepairOutcome(name, "not-needed", f"{SCRIPTS_TO} exists")
    except ApiException as exc:
        if exc.status != 404:
            raise
    try:
        source = core.read_namespaced_config_map(SCRIPTS_FROM, NAMESPACE)
    except ApiException as exc:
        if exc.status == 404:
            return RepairOutcome(name, "not-needed", f"no {SCRIPTS_FROM} to copy")
        raise
    copy = client.V1ConfigMap(
        metadata=client.V1ObjectMeta(
            name=SCRIPTS_TO, namespace=NAMESPACE, labels=source.metadata.labels
        ),
        data=source.data,
        binary_data=source.binary_data,
    )
    core.create_namespaced_config_map(NAMESPACE, copy)
    return RepairOutcome(name, "applied", f"copied {SCRIPTS_FROM} to {SCRIPTS_TO}")


async def repair_4_1(kubeconfig: Path | None, context: str) -> list[RepairOutcome]:
    """The two 4.1.x Kubernetes repairs, each in a worker thread (blocking client)."""
    out = []
    for repair, label in ((_crd_plugstack, "crd-plugstack-config"),
                          (_scripts_configmap, "slurm-scripts-configmap")):  # fmt: skip
        try:
            api = await asyncio.to_thread(_kube, kubeconfig, context)
            out.append(await asyncio.to_thread(repair, api))
        except Exception as exc:  # no kubeconfig, unreachable API, forbidden
            out.append(RepairOutcome(label, "failed", _describe(exc)))
    return out


def _describe(exc: BaseException) -> str:
    text = getattr(exc, "message", None) or getattr(exc, "reason", None) or str(exc)
    return (str(text).splitlines() or [type(exc).__name__])[0][:300]
