#!/bin/bash
# npa-summary: one task per GPU node: hostname, nvidia-smi -L, GPU count against the preset
# npa-nodes: all
# npa-gpus: all
#SBATCH --job-name=npa-gpu-hello
#SBATCH --time=10
# Edit freely: copy to ~/.npa/job-templates/gpu-hello.sh and npa uses your copy.
srun --ntasks-per-node=1 bash -c '
  expected=${SLURM_GPUS_ON_NODE:-0}
  found=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU ")
  nvidia-smi -L
  if [ "$found" -eq "$expected" ]; then verdict=ok; else verdict=MISMATCH; fi
  echo "$(hostname) node=$SLURMD_NODENAME gpus=$found expected=$expected $verdict"
  [ "$verdict" = ok ]
'
