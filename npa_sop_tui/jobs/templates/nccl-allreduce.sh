#!/bin/bash
# npa-summary: NCCL all-reduce bus bandwidth across all GPU nodes of a pool (nccl-tests)
# npa-nodes: all
# npa-gpus: all
#SBATCH --job-name=npa-nccl-allreduce
#SBATCH --exclusive
#SBATCH --time=20
# Edit freely: copy to ~/.npa/job-templates/nccl-allreduce.sh and npa uses your copy.
# One rank per GPU; npa reads "# Avg bus bandwidth" from the output when the job ends.
bin=${NCCL_TESTS_DIR:+$NCCL_TESTS_DIR/}all_reduce_perf
if ! command -v "$bin" >/dev/null 2>&1; then
  echo "all_reduce_perf (nccl-tests) is not in this image; set NCCL_TESTS_DIR (--env)" >&2
  exit 127
fi
ranks=${SLURM_GPUS_ON_NODE:-1}
cpus=${SLURM_CPUS_ON_NODE:-$ranks}
[ "$cpus" -lt "$ranks" ] && ranks=$cpus  # never more ranks than the node has CPUs
srun --ntasks-per-node="$ranks" --mpi="${NPA_MPI:-pmix}" \
  "$bin" -b "${NCCL_MIN_BYTES:-512M}" -e "${NCCL_MAX_BYTES:-8G}" -f 2 -g 1
