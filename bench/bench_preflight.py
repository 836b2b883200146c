"""What the cloud preflight adds: `npa soperator preflight` against the local Nebius gRPC
server vs `npa soperator validate` of the same spec (the floor: same process start-up, same
spec loading), both as fresh processes, interleaved, in the same run.

Target: the preflight adds at most 2 s (SDK import, connection, five concurrent reads, the
price). Also prints the in-process time of `run_preflight` on a warm client, and what it
adds to `plan --sandbox` (same server; the SDK's import overlaps with Terraform discovery).
Run: `.venv/bin/python -m bench preflight` (NPA_BENCH_ROUNDS to change the count).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import Ratio

REPO = Path(__file__).resolve().parents[1]
SPEC = """apiVersion: npa.soperator/v0.0.1
name: bench
region: eu-north1
workers:
  - {name: gpu, platform: gpu-h100-sxm, preset: 8gpu-128vcpu-1600gb, fabric: fabric-3, size: 4,
     capacity_block_group_name: sandbox-gpu}
  - {name: cpu, size: 2}
"""
TOKEN = "bench-token"
TARGET_ADDED_SECONDS = 2.0


def _npa() -> list[str]:
    script = Path(sys.executable).parent / "npa"
    return [str(script)] if script.exists() else [sys.executable, "-m", "npa_sop_tui.cli"]


def _time(cmd: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{cmd} failed ({done.returncode}): {done.stderr.decode()[-800:]}")
    return elapsed


async def _warm(endpoint: str) -> float:
    import yaml

    from npa_sop_tui.cloud.client import CloudSettings, connect
    from npa_sop_tui.cloud.preflight import run_preflight
    from npa_sop_tui.spec.model import spec_from_mapping

    spec = spec_from_mapping(yaml.safe_load(SPEC))
    client = connect(CloudSettings(endpoint=endpoint, iam_token=TOKEN))
    try:
        kw = {"tenant_id": "tenant-bench", "project_id": "project-bench", "region": "eu-north1"}
        await run_preflight(spec, client, **kw)  # warm: SDK import, channel
        times = []
        for _ in range(10):
            started = time.perf_counter()
            await run_preflight(spec, client, **kw)
            times.append(time.perf_counter() - started)
        return statistics.median(times)
    finally:
        await client.close()


def main() -> None:
    import yaml

    from npa_sop_tui.sandbox.fake_cloud_state import default_state, seed_for_spec
    from npa_sop_tui.sandbox.fake_nebius import FakeNebius
    from npa_sop_tui.spec.model import spec_from_mapping

    rounds = int(os.environ.get("NPA_BENCH_ROUNDS", "7"))
    state = default_state(tenant_id="tenant-bench", project_id="project-bench")
    seed_for_spec(state, spec_from_mapping(yaml.safe_load(SPEC)), {})
    state.token = TOKEN
    with FakeNebius(state) as server, tempfile.TemporaryDirectory() as home:
        spec = Path(home) / "bench.yaml"
        spec.write_text(SPEC)
        env = {
            **os.environ,
            "NPA_HOME": home,
            "NPA_NEBIUS_ENDPOINT": server.endpoint,
            "NEBIUS_IAM_TOKEN": TOKEN,
            "NPA_TENANT_ID": "tenant-bench",
            "NPA_PROJECT_ID": "project-bench",
        }
        preflight = [*_npa(), "soperator", "preflight", "--spec", str(spec), "-o", "json"]
        validate = [*_npa(), "soperator", "validate", "--spec", str(spec)]
        _time(preflight, env)  # warm the OS file cache and .pyc files once; not measured
        _time(validate, env)
        p_times, v_times = [], []
        for _ in range(rounds):
            p_times.append(_time(preflight, env))
            v_times.append(_time(validate, env))
        plan_rounds = int(os.environ.get("NPA_BENCH_PLAN_ROUNDS", "3"))
        plan = [*_npa(), "soperator", "plan", "--spec", str(spec), "--sandbox", "-o", "json"]
        plan_env = {**env, "TF_VAR_standin_sleep_seconds": "0"}
        _time(plan, plan_env)  # init caches, provider mirror; not measured
        with_pf, without_pf = [], []
        for _ in range(plan_rounds):
            with_pf.append(_time(plan, plan_env))
            without_pf.append(_time([*plan, "--no-preflight"], plan_env))
        warm = asyncio.run(_warm(server.endpoint))
    p_med, v_med = statistics.median(p_times), statistics.median(v_times)
    added = p_med - v_med
    print(f"rounds: {rounds}")
    print(f"npa soperator preflight (local gRPC server): median {p_med * 1000:.0f} ms")
    print(f"npa soperator validate (floor):              median {v_med * 1000:.0f} ms")
    verdict = "ok" if added <= TARGET_ADDED_SECONDS else "MISSED"
    print(f"ratio preflight / validate: {p_med / v_med:.2f}x; added {added:.2f} s "
          f"(target ≤ {TARGET_ADDED_SECONDS:g} s: {verdict})")  # fmt: skip
    print(f"run_preflight on a warm client, in process: median {warm * 1000:.0f} ms")
    w_med, wo_med = statistics.median(with_pf), statistics.median(without_pf)
    print(f"plan --sandbox with preflight: median {w_med:.2f} s; --no-preflight: {wo_med:.2f} s; "
          f"ratio {w_med / wo_med:.2f}x, added {w_med - wo_med:.2f} s")  # fmt: skip
    budget = TARGET_ADDED_SECONDS * 1000
    return [
        Ratio("preflight", "npa soperator preflight (local gRPC server)", p_med * 1000,
              f"validate + {TARGET_ADDED_SECONDS:g} s budget", v_med * 1000 + budget, "≤ 1"),
        Ratio("preflight", "npa soperator preflight", p_med * 1000, "npa soperator validate",
              v_med * 1000),
        Ratio("preflight", "plan --sandbox with preflight", w_med * 1000,
              "plan --sandbox --no-preflight", wo_med * 1000),
    ]  # fmt: skip


if __name__ == "__main__":
    main()
