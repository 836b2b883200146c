#!/usr/bin/env bash
# Capture real Slurm output for the parser tests beside this folder, from the Slurm 26.05
# lab of scripts/substrate.sh (its login sshd on 127.0.0.1:2224; another lab with
# NPA_SAMPLE_PORT=2223). It drains gpu-1 with a reason (so the samples carry a reason, its
# who/when, and the Extra=/InstanceId= fields Soperator's slurmd sets after it), captures,
# and resumes the node. `version.txt` records which Slurm printed the samples.
#
# Usage: bash tests/status/slurm_samples/capture.sh
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
LAB=${NPA_SUBSTRATE_DIR:-${LAB:-/tmp/npa-substrate}}
PORT=${NPA_SAMPLE_PORT:-2224}
REASON="gpu_health_check: XID 79 | nvlink down"
ssh_lab() {
  ssh -q -i "$LAB/client_ed25519" -o UserKnownHostsFile="$LAB/known_hosts" -o BatchMode=yes \
    -p "$PORT" slurmops@127.0.0.1 "$@"
}
ssh_lab "scontrol update nodename=gpu-1 state=drain reason='$REASON'"
trap 'ssh_lab "scontrol update nodename=gpu-1 state=resume" || true' EXIT
ssh_lab sinfo -V >"$HERE/version.txt"
ssh_lab "scontrol show node gpu-1 -o" >"$HERE/scontrol_show_node_drained.txt"
ssh_lab "scontrol show node gpu-0 -o" >"$HERE/scontrol_show_node_idle.txt"
ssh_lab "sinfo -h -N -a -o '%N|%P|%a|%l|%t|%T|%C|%m|%G|%f|%E'" >"$HERE/sinfo_summary.txt"
for v in v0.0.44 v0.0.45; do
  ssh_lab "sinfo -a --json=$v" >"$HERE/sinfo_$v.json"
done
echo "captured from $(cat "$HERE/version.txt") into $HERE"
