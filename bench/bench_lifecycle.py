"""Lifecycle overhead: a ~500-resource stand-in deploy through npa vs bare Terraform.

Same config, same run, same Terraform (the PyPI binary):
  bare-1   `init` + `apply -json -auto-approve` (one phase, output lines read and parsed)
  bare-2   the same steps the lifecycle takes, bare: init, plan -target=module.k8s -out,
           show -json, apply, plan -out, show -json, apply
  npa      `lifecycle.deploy` (two phases, events, NDJSON log, redaction, inventory)
npa / bare-2 is the cost of npa itself; npa / bare-1 adds the two-phase deploy's extra steps.
Run: `.venv/bin/python -m bench lifecycle` (BENCH_POOL_SIZE to change the size).
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from bench import Ratio

POOL_SIZE = int(os.environ.get("BENCH_POOL_SIZE", "460"))
ROOT_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEdXlFusLvYjeeK1rVVinKzN6pzzcRQunPAvc+y2YBhJ b"


def _run_json(binary: str, args: list[str], cwd: Path, env: dict[str, str]) -> int:
    """Run a Terraform command, reading and parsing its JSON lines like any consumer would."""
    proc = subprocess.Popen(
        [binary, *args], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None
    lines = 0
    for raw in proc.stdout:
        if raw.startswith(b"{"):
            json.loads(raw)
        lines += 1
    proc.wait()
    if proc.returncode != 0:
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise SystemExit(f"terraform {' '.join(args)} failed: {err[-500:]}")
    return lines


def _fresh_copy(install_root: Path, name: str, into: Path) -> Path:
    """A copy of the installation without state or .terraform (modules stay linked)."""
    target_root = into / "install"
    shutil.copytree(
        install_root,
        target_root,
        symlinks=True,
        ignore=shutil.ignore_patterns(".terraform", "terraform.tfstate*", ".npa-plan"),
    )
    return target_root / "installations" / name


def main() -> list[Ratio]:
    home = Path(tempfile.mkdtemp(prefix="npa-bench-lifecycle-"))
    os.environ["NPA_HOME"] = str(home)
    from npa_sop_tui.home.config import Identity
    from npa_sop_tui.lifecycle import api as lifecycle
    from npa_sop_tui.sandbox.local_terraform import prepare
    from npa_sop_tui.spec.model import spec_from_mapping
    from npa_sop_tui.terraform.runner import clean_env

    local = prepare()
    spec = spec_from_mapping(
        {
            "apiVersion": "npa.soperator/v0.0.1",
            "name": "bench",
            "root_login_ssh_public_key": ROOT_KEY,
            "workers": [{"name": "cpu", "size": POOL_SIZE}],
        }
    )
    identity = Identity(
        region="eu-north1",
        tenant_id="tenant-bench",
        project_id="project-bench",
        subnet_id="vpcsubnet-bench",
    )
    extra = {"TF_VAR_standin_sleep_seconds": "0", "TF_VAR_standin_per_node_resources": "true"}
    from npa_sop_tui.environment_choice import open_environment

    opts = lifecycle.LifecycleOptions(
        environment=open_environment(sandbox=True), identity=identity, env=extra
    )

    # Render + install once through a plan, so the bare runs use the identical config.
    plan = asyncio.run(lifecycle.plan(spec, options=opts))
    install = Path(plan.install_dir)
    env_vars = json.loads((install / ".npa-env.json").read_text())
    env = clean_env({**local.env, **env_vars, **extra})
    tf = local.binary
    print(f"resources planned: {plan.changes.add} (pool size {POOL_SIZE}); terraform {tf}")

    work = Path(tempfile.mkdtemp(prefix="bare-", dir=home))
    bare1 = _fresh_copy(install.parent.parent, "bench", work / "one")
    started = time.perf_counter()
    _run_json(tf, ["init", "-input=false", "-no-color"], bare1, env)
    lines = _run_json(tf, ["apply", "-input=false", "-json", "-auto-approve"], bare1, env)
    t_bare1 = time.perf_counter() - started
    print(f"bare-1 (init + apply -json): {t_bare1:6.1f}s  ({lines} JSON lines)")

    bare2 = _fresh_copy(install.parent.parent, "bench", work / "two")
    started = time.perf_counter()
    _run_json(tf, ["init", "-input=false", "-no-color"], bare2, env)
    for target in (["-target=module.k8s"], []):
        _run_json(tf, ["plan", "-input=false", "-json", "-out=p.tfplan", *target], bare2, env)
        _run_json(tf, ["show", "-json", "p.tfplan"], bare2, env)
        _run_json(tf, ["apply", "-input=false", "-json", "-auto-approve", "p.tfplan"], bare2, env)
    t_bare2 = time.perf_counter() - started
    print(f"bare-2 (same steps as npa): {t_bare2:6.1f}s")

    events = 0

    def count(_event: object) -> None:
        nonlocal events
        events += 1

    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    result = asyncio.run(lifecycle.deploy(spec, options=opts, on_event=count))
    t_npa = time.perf_counter() - started
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        f"npa lifecycle.deploy:        {t_npa:6.1f}s  ({result.resources} resources, "
        f"{events} events; max RSS {rss_before / 1024:.0f} → {rss_after / 1024:.0f} MiB)"
    )
    shutil.rmtree(home, ignore_errors=True)
    what = f"npa deploy, {result.resources} resources"
    return [
        Ratio("lifecycle", what, t_npa, "bare Terraform, the same steps", t_bare2, unit="s"),
        Ratio("lifecycle", what, t_npa, "bare init + one apply", t_bare1, unit="s"),
    ]


if __name__ == "__main__":
    for row in main():
        print(row.line())
