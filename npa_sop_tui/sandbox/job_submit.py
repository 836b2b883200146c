"""`sbatch` inside a sandbox job: `python -m npa_sop_tui.sandbox.job_submit <jobs root> …`.

It submits a new job of the same sandbox cluster (sandbox/local_jobs.py), on the nodes the
cluster had when the calling job was submitted (`nodes.json` in the jobs folder), and
prints what sbatch prints: `Submitted batch job <id>` (`--parsable`: the ID alone).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from npa_sop_tui.errors import NpaError
from npa_sop_tui.jobs.model import JobRequest
from npa_sop_tui.sandbox.job_tools import saved_nodes


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sbatch", add_help=True)
    parser.add_argument("-J", "--job-name")
    parser.add_argument("-N", "--nodes", type=int)
    parser.add_argument("-t", "--time")
    parser.add_argument("-D", "--chdir")
    parser.add_argument("--gpus-per-node", type=int)
    parser.add_argument("--wrap")
    parser.add_argument("--parsable", action="store_true")
    parser.add_argument("script", nargs="?")
    return parser


def main(argv: list[str]) -> int:
    from npa_sop_tui.sandbox.local_jobs import LocalJobs

    root, rest = Path(argv[0]), argv[1:]
    args, _unknown = _parser().parse_known_args(rest)  # other options: accepted, not simulated
    if args.wrap is not None:
        request = JobRequest(command=args.wrap)
    else:
        text = Path(args.script).read_text() if args.script else sys.stdin.read()
        request = JobRequest(script=text, script_name=args.script or "stdin")
    request.job_name, request.nodes, request.time = args.job_name, args.nodes, args.time
    request.workdir, request.gpus_per_node = args.chdir, args.gpus_per_node
    jobs = LocalJobs(root.parent.name, lambda: saved_nodes(root), root=root)
    try:
        job = asyncio.run(jobs.submit(request))
    except NpaError as exc:
        print(f"sbatch: error: {exc.message}", file=sys.stderr)
        return 1
    print(job.id if args.parsable else f"Submitted batch job {job.id}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
