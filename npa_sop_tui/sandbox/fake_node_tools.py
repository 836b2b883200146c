#!/usr/bin/env python3
"""Stand-ins for what a sandbox job finds on a GPU node beside fake_gpu_tools.py: nccl-tests'
`all_reduce_perf`, and a node without GPUs (whose nvidia-smi cannot reach a driver).

Called as `fake_node_tools.py <tool> [args]` (with npa's Python) by the sandbox's job tools
(sandbox/job_tools.py). The node and its GPUs come from the same
behaviour files as fake_gpu_tools.py's (`$NPA_FAKE_GPU_DIR/<node>`: gpus=, name=).
"""

from __future__ import annotations

import os
import sys

from npa_sop_tui.sandbox.fake_gpu_tools import _gpus, _node, behaviour

NO_DRIVER = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running."
)


def nvidia_smi(args: list[str], b: dict[str, str]) -> int:
    """A node without GPUs has no driver; a GPU node answers as fake_gpu_tools.py does."""
    from npa_sop_tui.sandbox.fake_gpu_tools import nvidia_smi as gpu_nvidia_smi

    if _gpus(b)[0] == 0:
        print(NO_DRIVER)
        return 9
    return gpu_nvidia_smi(args, b)


def _bytes(text: str) -> int:
    units = {"K": 2**10, "M": 2**20, "G": 2**30}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1:].isalpha() else int(text)


def all_reduce_perf(args: list[str], b: dict[str, str]) -> int:
    """nccl-tests' all_reduce_perf, one MPI rank per task: rank 0 prints the table."""
    count, name = _gpus(b)
    if count == 0:
        print("all_reduce_perf: no CUDA-capable device is detected", file=sys.stderr)
        return 1
    opts = dict(zip(args[::2], args[1::2], strict=False))
    size, last = _bytes(opts.get("-b", "8")), _bytes(opts.get("-e", "128M"))
    factor = max(2, int(opts.get("-f", "2")))
    ranks = int(os.environ.get("SLURM_NTASKS") or "1")
    if os.environ.get("SLURM_PROCID", "0") != "0":
        return 0
    print(f"# nThread 1 nGpus 1 minBytes {size} maxBytes {last} step: {factor}(factor) "
          "warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0")  # fmt: skip
    print(f"#\n# Using devices\n#  Rank  0 Group  0 Pid 1 on {_node()} device  0 [0x18] {name}")
    print("#\n#       size         count      type   redop    root     time   algbw   busbw")
    total = 0.0
    rows = 0
    while size <= last:
        busbw = 360.0 * min(1.0, size / 2**28) * (2 * (ranks - 1) / ranks if ranks > 1 else 1)
        time_us = size / max(busbw, 1e-3) / 1e3
        print(f"{size:>12} {size // 4:>13}     float     sum      -1 {time_us:8.1f} "
              f"{busbw / 2:7.2f} {busbw:7.2f}")  # fmt: skip
        total, rows, size = total + busbw, rows + 1, size * factor
    print("# Out of bounds values : 0 OK")
    print(f"# Avg bus bandwidth    : {total / max(rows, 1):.3f}")
    return 0


def main(argv: list[str]) -> int:
    tool, args = (argv[0], argv[1:]) if argv else ("", [])
    b = behaviour()
    if tool == "nvidia-smi":
        return nvidia_smi(args, b)
    if tool == "all_reduce_perf":
        return all_reduce_perf(args, b)
    print(f"fake_node_tools: unknown tool {tool!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
