#!/bin/bash
# npa-summary: one task on one node: hostname, CPUs and memory it sees
# npa-nodes: 1
# npa-gpus: 0
#SBATCH --job-name=npa-cpu-hello
#SBATCH --time=5
# Edit freely: copy to ~/.npa/job-templates/cpu-hello.sh and npa uses your copy.
echo "$(hostname) node=$SLURMD_NODENAME cpus=$(nproc) job=$SLURM_JOB_ID"
grep -m1 MemTotal /proc/meminfo
