"""The GPU gate finds a GB300 pool's nodes in its rack NodeSets (`<pool>-rack<N>-<i>`), as the
recipe (4.1.12+) names them, on the sandbox's login node."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from npa_sop_tui.postdeploy.gpu_gate import discover
from npa_sop_tui.postdeploy.run import run_post_deploy
from npa_sop_tui.sandbox.slurm_login import SimulatedLogin
from npa_sop_tui.spec.model import spec_from_mapping

GB300 = {
    "name": "nvl",
    "platform": "gpu-gb300",
    "preset": "4gpu-112vcpu-800gb",
    "size": 36,
    "fabric": "fabric-3",
    "local_nvme_device_count": 4,
    "local_nvme_device_gb": 3840,
}


def spec(**pool: Any) -> Any:
    return spec_from_mapping({"apiVersion": "npa.soperator/v0.0.1", "name": "racks",
                              "slurm_operator_version": "4.1.13",
                              "workers": [{**GB300, **pool}]})  # fmt: skip


async def test_gate_finds_rack_nodes(tmp_path: Path) -> None:
    s = spec()
    seen: list[Any] = []
    result = await run_post_deploy(
        s, shell=SimulatedLogin(s, tmp_path), kubeconfig=None, context="x", apply_fixes=False,
        gpu_timeout=120, on_repair=seen.append, on_gpu=lambda **f: seen.append(f),
    )  # fmt: skip
    assert result.status == "ready", result.validation
    (check,) = result.gpu_creation_checks
    expected = [f"nvl-rack{r}-{i}" for r in (0, 1) for i in range(18)]
    assert check.nodes == expected and check.status == "PASS"


async def test_discovery_takes_only_the_pools_nodesets(tmp_path: Path) -> None:
    class Listing:
        async def run(self, command: str, *, timeout: float) -> Any:
            from npa_sop_tui.status.ssh import CommandResult

            names = ["nvl-rack0-0", "nvl-rack1-0", "nvl-rack10-0", "nvl-0", "nvlx-rack0-0",
                     "nvl-rack0-x"]  # fmt: skip
            return CommandResult(0, "".join(f"{n}|idle\n" for n in names), "")

        async def close(self) -> None:
            return None

    nodes, _ = await discover(Listing(), "nvl", ["nvl-rack0", "nvl-rack1", "nvl-rack10"])
    assert nodes == ["nvl-rack0-0", "nvl-rack1-0", "nvl-rack10-0"]
