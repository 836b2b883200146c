#!/usr/bin/env python3
"""Stand-ins for a GPU node's tools, printing the real tools' output formats.

One file, standard library only, called as `fake_gpu_tools.py <tool> [args]` (the test
substrate and the sandbox install small wrappers named after each tool):

- `nvidia-smi` (`--query-gpu=name --format=csv,noheader`, `-L`, or the plain table);
- `deviceQuery`, `vectorAdd`, `simpleMultiGPU`, `p2pBandwidthLatencyTest` (CUDA samples);
- `health-checker run -e soperator -p <platform> -n <tests> -f json-partial`, which runs the
  samples named in `-n` and reports like Nebius's health-checker: one JSON object with
  `status` (PASS/FAIL/ERROR) and `tests[].checks[].state.{status,error}`.

What a node does comes from `<behaviour dir>/<node>` (dir: `$NPA_FAKE_GPU_DIR`, else this
file's `../behaviour`), `key=value` lines; a missing file means a healthy 8×H100 node:

    gpus=7             nvidia-smi lists this many GPUs
    name=NVIDIA H200   their name
    fail=vectorAdd     this sample fails
    hang=1             health-checker never returns (a stuck check)
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

SAMPLES = ("deviceQuery", "vectorAdd", "simpleMultiGPU", "p2pBandwidthLatencyTest")
DEFAULT_NAME = "NVIDIA H100 80GB HBM3"


def _node() -> str:
    return os.environ.get("SLURMD_NODENAME") or os.uname().nodename


def behaviour() -> dict[str, str]:
    base = os.environ.get("NPA_FAKE_GPU_DIR")
    folder = Path(base) if base else Path(__file__).resolve().parent.parent / "behaviour"
    try:
        text = (folder / _node()).read_text()
    except OSError:
        return {}
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line)
    return {k.strip(): v.strip() for k, v in pairs}


def _gpus(b: dict[str, str]) -> tuple[int, str]:
    return int(b.get("gpus", "8")), b.get("name", DEFAULT_NAME)


def nvidia_smi(args: list[str], b: dict[str, str]) -> int:
    count, name = _gpus(b)
    if any(a.startswith("--query-gpu=name") for a in args):
        for _ in range(count):
            print(name)
        return 0
    if "-L" in args:
        for i in range(count):
            print(f"GPU {i}: {name} (UUID: GPU-{i:08x}-fake-0000-0000-{i:012x})")
        return 0
    print("+-----------------------------------------------------------------------------+")
    print("| NVIDIA-SMI 550.127.08    Driver Version: 550.127.08    CUDA Version: 12.4    |")
    print("|-------------------------------+----------------------+----------------------+")
    for i in range(count):
        print(f"|   {i}  {name[:26]:<26}   On | 00000000:{i:02X}:00.0 Off |                    0 |")
    print("+-----------------------------------------------------------------------------+")
    return 0


def sample(tool: str, b: dict[str, str]) -> int:
    count, name = _gpus(b)
    failed = b.get("fail") == tool
    if tool == "deviceQuery":
        print("deviceQuery Starting...\n\n CUDA Device Query (Runtime API) version (CUDART static "
              "linking)\n")  # fmt: skip
        print(f"Detected {count} CUDA Capable device(s)\n")
        for i in range(count):
            print(f'Device {i}: "{name}"')
            print("  CUDA Driver Version / Runtime Version          12.4 / 12.4")
            print("  CUDA Capability Major/Minor version number:    9.0")
        print(f"deviceQuery, CUDA Driver = CUDART, CUDA Driver Version = 12.4, CUDA Runtime "
              f"Version = 12.4, NumDevs = {count}")  # fmt: skip
        print(f"Result = {'FAIL' if failed else 'PASS'}")
    elif tool == "vectorAdd":
        print("[Vector addition of 50000 elements]")
        print("Copy input data from the host memory to the CUDA device")
        print("CUDA kernel launch with 196 blocks of 256 threads")
        print("Copy output data from the CUDA device to the host memory")
        if failed:
            print("Result verification failed at element 0!", file=sys.stderr)
            return 1
        print("Test PASSED")
        print("Done")
    elif tool == "simpleMultiGPU":
        print("Starting simpleMultiGPU")
        print(f"CUDA-capable device count: {count}")
        print("Generating input data...\n")
        print("Computing with multiple GPUs...")
        print("  GPU Processing time: 21.734000 (ms)\n")
        print("Computing with Host CPU...\n")
        print("Comparing GPU and Host CPU results...")
        print(f"  GPU sum: 16777280.000000\n  CPU sum: {16777294.395033 if failed else 16777280.0}")
        print(f"  Relative difference: {'8.6E-01' if failed else '8.6E-08'} \n")
        if failed:
            return 1
    elif tool == "p2pBandwidthLatencyTest":
        print("[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]")
        for i in range(count):
            print(f"Device: {i}, {name}, pciBusID: {i + 0x18:x}, pciDeviceID: 0, pciDomainID:0")
        print("Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)")
        if failed:
            print("Cuda failure p2pBandwidthLatencyTest.cu:360: 'peer access is not supported'")
            return 1
        print("NOTE: The CUDA Samples are not meant for performance measurements. Results may "
              "vary when GPU Boost is enabled.")  # fmt: skip
    return 1 if failed else 0


def _passed(tool: str, rc: int, out: str) -> bool:
    if rc != 0:
        return False
    return {
        "deviceQuery": "Result = PASS" in out,
        "vectorAdd": "Test PASSED" in out,
        "simpleMultiGPU": "Relative difference: 8.6E-08" in out,
        "p2pBandwidthLatencyTest": "NOTE: The CUDA Samples" in out,
    }.get(tool, rc == 0)


def health_checker(args: list[str], b: dict[str, str]) -> int:
    if not args or args[0] != "run":
        print("usage: health-checker run -e ENV -p PLATFORM -n TESTS -f FORMAT", file=sys.stderr)
        return 2
    tests = args[args.index("-n") + 1].split(",") if "-n" in args else list(SAMPLES)
    if b.get("hang"):
        time.sleep(3600)
    import contextlib
    import io

    results, status = [], "PASS"
    for test in tests:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            rc = sample(test, b) if test in SAMPLES else 0
        ok = _passed(test, rc, buf.getvalue())
        state = {"status": "PASS" if ok else "FAIL"}
        if not ok:
            status = "FAIL"
            state["error"] = f"{test} exited with {rc}: {buf.getvalue().strip().splitlines()[-1]}"
        results.append({"name": test, "checks": [{"name": "result", "state": state}]})
    platform = args[args.index("-p") + 1] if "-p" in args else ""
    print(json.dumps({"status": status, "platform": platform, "node": _node(), "tests": results}))
    return 0 if status == "PASS" else 1


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    tool, args = argv[0], argv[1:]
    b = behaviour()
    if tool == "nvidia-smi":
        return nvidia_smi(args, b)
    if tool == "health-checker":
        return health_checker(args, b)
    if tool in SAMPLES:
        return sample(tool, b)
    print(f"fake_gpu_tools: unknown tool {tool!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
