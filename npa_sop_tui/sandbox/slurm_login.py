"""The sandbox's login node for the post-deploy steps: Slurm simulated from the spec.

`sinfo` lists each pool's nodes (`<pool>-<n>`, idle) as Slurm 25.11.3 prints them to root
(sandbox/slurm_text.py): `-V`; `-o` with `%N|%T`, each node in `main` and in the recipe's
`hidden`; `--json[=v0.0.44]`. `scontrol show node NAME -o` prints the node's line; `srun`
runs the gate's real node script with local bash, once per node, with the fake GPU tools
(`fake_gpu_tools.py`) on PATH, so the sandbox reads the same output formats a real node
prints. `scancel`, `squeue` and other `scontrol` commands succeed with nothing queued. The
scenario `gpu-check-fail` makes vectorAdd fail on the last node of the first GPU pool.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from npa_sop_tui.status.ssh import CommandResult

TOOLS = ("nvidia-smi", "health-checker", "deviceQuery", "vectorAdd", "simpleMultiGPU",
         "p2pBandwidthLatencyTest")  # fmt: skip
GPU_NAMES = {"h100": "NVIDIA H100 80GB HBM3", "h200": "NVIDIA H200", "b200": "NVIDIA B200",
             "b300": "NVIDIA B300", "gb300": "NVIDIA GB300"}  # fmt: skip


def install_tools(folder: Path) -> Path:
    """Wrappers named after each tool, calling fake_gpu_tools.py with this Python."""
    from npa_sop_tui.sandbox import fake_gpu_tools

    bin_dir = folder / "bin"
    _private_dirs(bin_dir)
    script = Path(fake_gpu_tools.__file__).resolve()
    for tool in TOOLS:
        wrapper = bin_dir / tool
        wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}" {tool} "$@"\n')
        wrapper.chmod(0o755)
    return bin_dir


def _private_dirs(path: Path) -> None:
    """`path` and the parents it needs, for this user only (like everything in the npa home);
    the home's owner makes them, so fleet targets deploying at once may race for them."""
    from npa_sop_tui.home.files import ensure_dir

    ensure_dir(path)


def _node_names(pool: Any) -> list[str]:
    """`<nodeset>-<i>` for each NodeSet of the pool (GB300: `<pool>-rack<N>-<i>`)."""
    from npa_sop_tui.recipe.nodesets import pool_nodesets

    return [n for ns in pool_nodesets(pool) for n in ns.node_names]


def _gpu_name(platform: str) -> str:
    model = platform.removeprefix("gpu-").split("-")[0]
    return GPU_NAMES.get(model, f"NVIDIA {model.upper()}")


class SimulatedLogin:
    def __init__(self, spec: Any, folder: Path, scenario: Iterable[str] = ()) -> None:
        self.spec = spec
        self.bin = install_tools(folder)
        self.behaviour = folder / "behaviour"
        _private_dirs(self.behaviour)
        self.commands: list[str] = []
        first_gpu = next((p for p in spec.workers if p.is_gpu()), None)
        for pool in spec.workers:
            if not pool.is_gpu():
                continue
            names = _node_names(pool)
            for i, node in enumerate(names):
                lines = [f"gpus={pool.gpus_per_node}", f"name={_gpu_name(pool.platform)}"]
                if "gpu-check-fail" in scenario and pool is first_gpu and i == len(names) - 1:
                    lines.append("fail=vectorAdd")
                (self.behaviour / node).write_text("\n".join(lines) + "\n")

    def _nodes(self) -> list[str]:
        return [n for p in self.spec.workers for n in _node_names(p)]

    async def run(self, command: str, *, timeout: float) -> CommandResult:
        self.commands.append(command)
        words = shlex.split(command)
        if words[:1] == ["sinfo"]:
            return CommandResult(0, self._sinfo(words, command), "")
        if words[:3] == ["scontrol", "show", "node"] and len(words) > 3:
            return self._show_node(words[3])
        if words[:1] == ["srun"]:
            return await self._srun(words, timeout)
        return CommandResult(0, "", "")  # scancel, squeue, other scontrol: nothing queued

    def _slurm_nodes(self) -> list[Any]:
        from npa_sop_tui.status.model import SlurmNode

        return [
            SlurmNode.model_construct(
                name=name, state="idle", flags=[], display="idle",
                partitions=["main"], cpus=None, cpus_allocated=0, memory_mb=None,
                gres=f"gpu:{p.gpus_per_node}" if p.gpus_per_node else None, features=[],
                reason=None,
            )
            for p in self.spec.workers
            for name in _node_names(p)  # `<nodeset>-<i>`, rack NodeSets included
        ]  # fmt: skip

    def _sinfo(self, words: list[str], command: str) -> str:
        from npa_sop_tui.sandbox import slurm_text

        if "-V" in words or "--version" in words:
            return f"slurm {slurm_text.SLURM_RELEASE}\n"
        nodes = self._slurm_nodes()
        if any(w.startswith("--json") for w in words):
            return slurm_text.sinfo_json(nodes)
        # Soperator's login nodes are used as root, and Slurm shows root (and the SlurmUser)
        # hidden partitions even without -a: one line per node and partition, main and hidden
        sep = "|" if "%N|%T" in command else " "
        return "".join(f"{n.name}{sep}idle\n" for n in nodes for _ in slurm_text.PARTITIONS)

    def _show_node(self, name: str) -> CommandResult:
        from npa_sop_tui.sandbox.slurm_text import show_node_line

        node = next((n for n in self._slurm_nodes() if n.name == name), None)
        if node is None:
            return CommandResult(1, "", f"Node {name} not found\n")
        nodeset = name.rsplit("-", 1)[0]
        return CommandResult(
            0, show_node_line(node, reason_by=None, reason_time=None, nodeset=nodeset), ""
        )

    async def _srun(self, words: list[str], timeout: float) -> CommandResult:
        node = next((w.split("=", 1)[1] for w in words if w.startswith("--nodelist=")), "")
        script = words[words.index("-c") + 1]
        from npa_sop_tui.sandbox.job_environment import job_environment

        env = job_environment(  # what any sandbox job gets: no cloud tokens, no keys
            {
                "PATH": f"{self.bin}:/usr/local/bin:/usr/bin:/bin",
                "SLURMD_NODENAME": node,
                "NPA_FAKE_GPU_DIR": str(self.behaviour),
                "HOME": os.environ.get("HOME", "/tmp"),
            }
        )
        proc = await asyncio.create_subprocess_exec(
            "bash", "-c", script, env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout)
        except (TimeoutError, asyncio.CancelledError):
            proc.kill()
            await proc.wait()
            raise
        return CommandResult(proc.returncode or 0, out.decode(), err.decode())

    async def close(self) -> None:
        return None


def simulated_login(spec: Any) -> SimulatedLogin:
    """The sandbox's login node for `spec`, its fake GPU tools under the npa home."""
    from npa_sop_tui.home.paths import npa_home
    from npa_sop_tui.sandbox.fake_cloud_state import scenario_from_env

    return SimulatedLogin(spec, npa_home() / "sandbox-gpu" / spec.name, scenario_from_env())
