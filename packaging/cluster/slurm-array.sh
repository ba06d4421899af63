#!/bin/bash
# One sapiens-cli run spread over a Slurm job array: task i of N takes the i-th contiguous part of the
# sorted pictures (or, when INPUT is one video file, of its frames) and writes results.shard-i-of-N.json
# into the shared output folder. When every task has finished, join the manifests (and for a video its
# annotated video and keypoints):  sapiens-cli merge "$OUTPUT"
#
#   INPUT=/shared/frames OUTPUT=/shared/results sbatch --array=0-15 packaging/cluster/slurm-array.sh
#   INPUT=/shared/match.mp4 OUTPUT=/shared/match sbatch --array=0-15 packaging/cluster/slurm-array.sh
#
#SBATCH --job-name=sapiens2
#SBATCH --cpus-per-task=8
#SBATCH --mem=24G
#SBATCH --output=sapiens2-%A_%a.log
set -euo pipefail
: "${INPUT:?set INPUT to the pictures folder on the shared file system}"
: "${OUTPUT:?set OUTPUT to the shared output folder}"
TASKS="${TASKS:-pose,seg,normal,albedo,pointmap}"
COUNT="${SLURM_ARRAY_TASK_COUNT:?run through sbatch --array}"
INDEX=$((SLURM_ARRAY_TASK_ID - ${SLURM_ARRAY_TASK_MIN:-0} + 1))
exec sapiens-cli --threads "${SLURM_CPUS_PER_TASK:-0}" run "$INPUT" --task "$TASKS" --output "$OUTPUT" \
  --shard "$INDEX/$COUNT" ${MODEL_DIR:+--model-dir "$MODEL_DIR"} ${EXTRA_ARGS:-}
