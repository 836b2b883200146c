"""What a sandbox job finds on its nodes: the sandbox's Slurm, not this machine's.

A job's batch step runs on its first simulated node with the variables Slurm gives a batch
step; on its PATH come first the sandbox's own `srun` (a step: the command once per task on
the job's simulated nodes, each task with its node's name, CPUs and GPUs), `sbatch` (a new
sandbox job of the same cluster), `nvidia-smi` and nccl-tests' `all_reduce_perf` (printing
the real tools' formats for the GPUs the task holds: sandbox/fake_gpu_tools.py and
fake_node_tools.py), and
`hostname`/`nproc` answering for the simulated node. So every job template runs here as it
would on a cluster, whether or not this machine has a Slurm client or a GPU.

Each job folder keeps one file per node it holds (`nodes/<name>`: cpus, gpus, GPU model),
which the tools read for the node of the task that calls them.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

BIN = "bin"
NODE_FOLDER = "nodes"
NODES_FILE = "nodes.json"  # the cluster's nodes, for an sbatch inside a job
PARTITION = "main"  # the recipe's one visible default partition

# The GPU a platform's nodes show in nvidia-smi, by the model its name carries.
GPU_NAMES = {"h100": "NVIDIA H100 80GB HBM3", "h200": "NVIDIA H200", "b200": "NVIDIA B200",
             "b300": "NVIDIA B300", "gb300": "NVIDIA GB300"}  # fmt: skip
DEFAULT_GPU_MODEL = GPU_NAMES["h100"]


def gpu_name(platform: str) -> str:
    """`gpu-h200-sxm` → `NVIDIA H200`."""
    model = platform.removeprefix("gpu-").split("-")[0]
    return GPU_NAMES.get(model, f"NVIDIA {model.upper()}")


class SimNode(NamedTuple):
    """A simulated Slurm node a job may run on."""

    name: str
    gpus: int = 0
    cpus: int = 8
    gpu_model: str = DEFAULT_GPU_MODEL


def sim_node(value: SimNode | Sequence[object]) -> SimNode:
    """A node from a SimNode or a (name, gpus[, cpus[, model]]) tuple."""
    return value if isinstance(value, SimNode) else SimNode(*value)  # type: ignore[arg-type]


SRUN = r"""#!/bin/bash
# srun inside a sandbox job: one step over the job's simulated nodes; every task runs the
# command with its node's variables, and srun ends with the highest exit status.
IFS=, read -r -a held <<< "${SLURM_JOB_NODELIST:-}"
want=${#held[@]} per= ntasks=
while [ $# -gt 0 ]; do
  case "$1" in
    -N|--nodes) want=$2; shift 2 ;;
    --nodes=*) want=${1#*=}; shift ;;
    --ntasks-per-node) per=$2; shift 2 ;;
    --ntasks-per-node=*) per=${1#*=}; shift ;;
    -n|--ntasks) ntasks=$2; shift 2 ;;
    --ntasks=*) ntasks=${1#*=}; shift ;;
    --) shift; break ;;
    -J|-p|-t|-w|-x|-c|-G|-o|-e|-D|--job-name|--partition|--time|--nodelist|--exclude|\
--cpus-per-task|--gpus|--gpus-per-node|--mpi|--output|--error|--chdir) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
if [ -z "${SLURM_JOB_ID:-}" ] || [ ${#held[@]} = 0 ]; then
  echo "srun: error: no job allocation here (the sandbox runs srun inside its jobs)" >&2
  exit 1
fi
if [ $# = 0 ]; then echo "srun: fatal: No command given to execute." >&2; exit 1; fi
want=${want%%-*}
if [ "$want" -gt ${#held[@]} ]; then
  echo "srun: error: Only allocated ${#held[@]} nodes asked for $want" >&2
  exit 1
fi
[ -n "$per" ] || per=1
total=$((per * want))
if [ -n "$ntasks" ]; then total=$ntasks; per=$(( (ntasks + want - 1) / want )); fi
pids=() where=()
trap 'kill "${pids[@]}" 2>/dev/null' TERM INT
rank=0
for ((i = 0; i < want && rank < total; i++)); do
  node=${held[$i]} cpus= gpus=0
  while IFS== read -r key value; do
    case "$key" in cpus) cpus=$value ;; gpus) gpus=$value ;; esac
  done < "$NPA_SANDBOX_JOB/nodes/$node"
  devices=
  for ((g = 0; g < gpus; g++)); do devices=${devices:+$devices,}$g; done
  for ((l = 0; l < per && rank < total; l++)); do
    SLURMD_NODENAME=$node SLURM_NODEID=$i SLURM_PROCID=$rank SLURM_LOCALID=$l \
    SLURM_NTASKS=$total SLURM_STEP_NUM_TASKS=$total SLURM_STEP_NUM_NODES=$want \
    SLURM_CPUS_ON_NODE=$cpus SLURM_GPUS_ON_NODE=$gpus CUDA_VISIBLE_DEVICES=$devices \
      "$@" &
    pids+=($!) where+=("$node: task $rank")
    rank=$((rank + 1))
  done
done
rc=0
for k in "${!pids[@]}"; do
  wait "${pids[$k]}"; r=$?
  if [ "$r" != 0 ]; then echo "srun: error: ${where[$k]}: Exited with exit code $r" >&2; fi
  [ "$r" -gt "$rc" ] && rc=$r
done
exit "$rc"
"""

HOSTNAME = """#!/bin/bash
# the simulated node's name, as a worker pod's hostname is its Slurm node's name
echo "${SLURMD_NODENAME:?not on a simulated node}"
"""

NPROC = """#!/bin/bash
# the CPUs the task holds on its simulated node
echo "${SLURM_CPUS_ON_NODE:-1}"
"""


def _python_tool(*argv: str) -> str:
    """A tool that is a Python entry point of ours (isolated: no user site, no PYTHON*)."""
    words = " ".join(shlex.quote(a) for a in (sys.executable, "-I", *argv))
    return f'#!/bin/bash\nexec {words} "$@"\n'


def tool_scripts(jobs_root: Path) -> dict[str, str]:
    """Every tool a sandbox job finds first on its PATH, by name."""
    node_tools = str(Path(__file__).with_name("fake_node_tools.py"))
    return {
        "srun": SRUN,
        "sbatch": _python_tool("-m", "npa_sop_tui.sandbox.job_submit", str(jobs_root)),
        "nvidia-smi": _python_tool(node_tools, "nvidia-smi"),
        "all_reduce_perf": _python_tool(node_tools, "all_reduce_perf"),
        "hostname": HOSTNAME,
        "nproc": NPROC,
    }


def install_tools(jobs_root: Path) -> Path:
    """The tools folder of a cluster's jobs (written when missing or changed)."""
    from npa_sop_tui.home.fsutil import atomic_write_text, ensure_dir

    folder = ensure_dir(jobs_root / BIN)
    for name, text in tool_scripts(jobs_root).items():
        path = folder / name
        try:
            same = path.read_text(encoding="utf-8") == text
        except OSError:
            same = False
        if not same:
            atomic_write_text(path, text, mode=0o700)
    return folder


def save_nodes(jobs_root: Path, nodes: Sequence[SimNode]) -> None:
    """The cluster's nodes as a job was submitted, for an `sbatch` inside that job."""
    from npa_sop_tui.home.fsutil import atomic_write_text

    rows = json.dumps([list(n) for n in nodes])
    atomic_write_text(jobs_root / NODES_FILE, rows, mode=0o600)


def saved_nodes(jobs_root: Path) -> list[SimNode]:
    try:
        return [SimNode(*row) for row in json.loads((jobs_root / NODES_FILE).read_text())]
    except (OSError, ValueError, TypeError):
        return []


def write_node_files(job_folder: Path, nodes: Sequence[SimNode], gpus: int) -> Path:
    """One file per node the job holds: what its tasks see there (`gpus`: per node)."""
    from npa_sop_tui.home.fsutil import atomic_write_text, ensure_dir

    folder = ensure_dir(job_folder / NODE_FOLDER)
    for node in nodes:
        held = min(gpus, node.gpus)
        lines = [f"cpus={node.cpus}", f"gpus={held}", f"name={node.gpu_model}"]
        atomic_write_text(folder / node.name, "\n".join(lines) + "\n", mode=0o600)
    return folder


def batch_step_environment(
    *,
    job_folder: Path,
    tools: Path,
    job_id: str,
    job_name: str,
    nodes: Sequence[SimNode],
    gpus: int,
    cluster: str,
    request_env: Mapping[str, str],
    launch: Mapping[str, str],
) -> dict[str, str]:
    """The environment of a sandbox job's batch step: the allow-listed part of this
    process's (never its cloud tokens or keys: sandbox/job_environment.py builds it), the
    sandbox's tools first on PATH, the variables Slurm gives a batch step on its first
    node, the job's own `--env`, and the launcher's NPA_* values."""
    from npa_sop_tui.sandbox.job_environment import job_environment

    first = nodes[0]
    held = min(gpus, first.gpus)
    names = ",".join(n.name for n in nodes)
    path = job_environment({}).get("PATH") or os.defpath
    slurm = {
        "PATH": f"{tools}{os.pathsep}{path}",
        "SLURM_JOB_ID": job_id,
        "SLURM_JOBID": job_id,
        "SLURM_JOB_NAME": job_name,
        "SLURM_JOB_NUM_NODES": str(len(nodes)),
        "SLURM_NNODES": str(len(nodes)),
        "SLURM_JOB_NODELIST": names,
        "SLURM_NODELIST": names,
        "SLURM_JOB_PARTITION": PARTITION,
        "SLURM_CLUSTER_NAME": cluster,
        "SLURM_SUBMIT_DIR": str(job_folder),
        "SLURMD_NODENAME": first.name,
        "SLURM_NODEID": "0",
        "SLURM_PROCID": "0",
        "SLURM_LOCALID": "0",
        "SLURM_CPUS_ON_NODE": str(first.cpus),
        "NPA_SANDBOX_JOB": str(job_folder),
        "NPA_FAKE_GPU_DIR": str(job_folder / NODE_FOLDER),
    }
    if held:  # this machine's GPU variables are not on the allow-list: the job's own, or none
        slurm["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(held))
        slurm["SLURM_GPUS_ON_NODE"] = str(held)
        slurm["SLURM_GPUS_PER_NODE"] = str(gpus)
    return job_environment({**slurm, **request_env, **launch})
