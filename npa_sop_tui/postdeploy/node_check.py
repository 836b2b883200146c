"""The check one GPU node runs, and how its output is read.

The script runs as one exclusive Slurm task on the node. It counts GPUs with `nvidia-smi`,
maps their model exactly (the word after "NVIDIA": H100, H200, B200, B300, GB300; a GB200 is
not a B200, nor any other model a platform) to the health checker's platform tag
`<GPUs>x<model>`, the GPU count being the pool preset's (8xH100, 1xH100, 4xGB300),
then runs Nebius's node health checker on the CUDA samples deviceQuery, vectorAdd,
simpleMultiGPU and p2pBandwidthLatencyTest with `-f json-partial`. Lines starting with
`NPA_GPU_CHECK` mark each stage so the output can be read without jq on the node; the GPU
count is compared with the preset here, not on the node.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

TESTS = ("deviceQuery", "vectorAdd", "simpleMultiGPU", "p2pBandwidthLatencyTest")
MARK = "NPA_GPU_CHECK"
HC_STDOUT = "/opt/soperator-outputs/health_checker_cmd_stdout"


def node_script(gpus: int) -> str:
    """The script for a node of a pool whose preset has `gpus` GPUs."""
    tests = ",".join(TESTS)
    return f"""node="${{SLURMD_NODENAME:-$(hostname)}}"
if ! names=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1); then
  echo "{MARK} node=$node stage=nvidia-smi status=FAIL message=$(printf '%s' "$names" | head -n1)"
  exit 1
fi
count=$(printf '%s\\n' "$names" | grep -c .)
name=$(printf '%s\\n' "$names" | sort -u | head -n1)
echo "{MARK} node=$node stage=gpus count=$count name=$name"
model=$(printf '%s\\n' "$name" | awk '{{for (i = 1; i <= NF; i++)
  if ($i != "NVIDIA") {{print $i; exit}}}}')
case "$model" in
  GB300|H100|H200|B200|B300) platform={int(gpus)}x$model ;;
  *) echo "{MARK} node=$node stage=platform status=FAIL message=unsupported GPU '$name'"
     exit 1 ;;
esac
echo "{MARK} node=$node stage=health-checker platform=$platform"
health-checker run -e soperator -p "$platform" -n {tests} -f json-partial \\
  --tests-stdout-path {HC_STDOUT}
rc=$?
echo "{MARK} node=$node stage=done rc=$rc"
"""


@dataclass
class NodeOutcome:
    node: str
    status: str  # PASS | FAIL
    gpus: int | None = None
    check: str | None = None
    message: str = ""
    tests: list[str] = field(default_factory=list)


_KV = re.compile(r"(\w+)=")


def _marks(stdout: str) -> list[dict[str, str]]:
    """Marker lines as dicts; `name` and `message` run to the end of the line."""
    out = []
    for line in stdout.splitlines():
        if not line.startswith(MARK + " "):
            continue
        fields: dict[str, str] = {}
        rest = line[len(MARK) + 1 :]
        while rest:
            m = _KV.match(rest)
            if m is None:
                break
            key = m.group(1)
            rest = rest[m.end() :]
            if key in ("name", "message"):
                fields[key], rest = rest.strip(), ""
            else:
                value, _, rest = rest.partition(" ")
                fields[key] = value
        out.append(fields)
    return out


def _health_json(stdout: str) -> dict[str, Any] | None:
    """The health checker's JSON between its start and end markers: one object, printed on
    one line or pretty-printed over several."""
    lines = stdout.splitlines()
    start = next((i for i, ln in enumerate(lines) if "stage=health-checker" in ln), None)
    if start is None:
        return None
    body: list[str] = []
    for line in lines[start + 1 :]:
        if line.startswith(MARK + " "):
            break
        body.append(line)
    text = "\n".join(body)
    candidates = [text, *reversed(body)]
    block = re.search(r"^\s*\{.*^\s*\}", text, re.DOTALL | re.MULTILINE)
    if block:
        candidates.insert(1, block.group(0))
    for candidate in candidates:
        try:
            doc = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(doc, dict) and "status" in doc:
            return doc
    return None


def _first_failure(doc: dict[str, Any]) -> tuple[str, str]:
    for test in doc.get("tests") or []:
        for check in test.get("checks") or []:
            state = check.get("state") or {}
            if state.get("status") not in (None, "PASS"):
                name = f"{test.get('name', '?')}.{check.get('name', '?')}"
                return name, str(state.get("error") or state.get("status"))
    return "health-checker", f"status {doc.get('status')}"


def read_node_output(
    node: str, expected_gpus: int, exit_status: int, stdout: str, stderr: str
) -> NodeOutcome:
    marks = _marks(stdout)
    if not marks:
        reason = (stderr.strip().splitlines() or [f"srun exited with {exit_status}"])[-1]
        return NodeOutcome(node, "FAIL", check="srun", message=reason)
    failed = next((m for m in marks if m.get("status") == "FAIL"), None)
    if failed is not None:
        return NodeOutcome(
            node, "FAIL", check=failed.get("stage"), message=failed.get("message", "")
        )
    gpus_mark = next((m for m in marks if m.get("stage") == "gpus"), {})
    count = int(gpus_mark.get("count", "0") or 0)
    if count != expected_gpus:
        return NodeOutcome(
            node,
            "FAIL",
            gpus=count,
            check="nvidia-smi",
            message=f"nvidia-smi lists {count} GPU(s); the preset has {expected_gpus}",
        )
    doc = _health_json(stdout)
    if doc is None:
        done = next((m for m in marks if m.get("stage") == "done"), None)
        why = "no result" if done is None else f"exit {done.get('rc')}, no JSON result"
        return NodeOutcome(node, "FAIL", gpus=count, check="health-checker", message=why)
    tests = [str(t.get("name")) for t in doc.get("tests") or []]
    if doc.get("status") != "PASS":
        check, message = _first_failure(doc)
        return NodeOutcome(node, "FAIL", count, check, message, tests)
    missing = [t for t in TESTS if t not in tests]
    if missing:
        return NodeOutcome(
            node, "FAIL", count, "health-checker", f"did not run {', '.join(missing)}", tests
        )
    return NodeOutcome(node, "PASS", gpus=count, tests=tests)
