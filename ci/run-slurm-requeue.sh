#!/bin/bash
# run-slurm-requeue.sh GNNRUN PARTS CKPT -- TRAINER...: bring up the
# single-node Slurm of slurm-up.sh and submit launch/gnnrun.sbatch with
# `gnnrun train PARTS --checkpoint CKPT` and the trainer, 2 tasks, for each
# launcher (mpirun, srun --mpi=pmix; CKPT-<launcher> each). Once a job's
# log shows its first epoch ended, send its batch shell SIGUSR1 (`scancel
# --signal=USR1 --batch`, what Slurm's --signal=B:USR1@T sends at T
# seconds before the time limit): gnnrun checkpoints and exits 75, the
# script requeues the job, and it resumes from the checkpoint. Print each
# job's final state, exit code, restarts and log between "== job" lines.
#
# Environment:
#   GNNRUN_TRAIN_FLAGS    train's flags before the trainer (split on blanks)
#   GNNRUN_SLURM_TIMEOUT  seconds to wait for both jobs (default 300)
# Exit status 77: the machine forbids the test (see slurm-up.sh); skip.
set -euo pipefail
[ $# -ge 5 ] && [ "$4" = -- ] || { echo "usage: $0 GNNRUN PARTS CKPT -- TRAINER..." >&2; exit 2; }
bin=$(realpath "$1")
parts=$(realpath "$2")
ckpt=$3
shift 4
here=$(cd "$(dirname "$0")" && pwd)
script=$(cd "$here/.." && pwd)/launch/gnnrun.sbatch
limit=${GNNRUN_SLURM_TIMEOUT:-300}
read -r -a flags <<<"${GNNRUN_TRAIN_FLAGS:-}"
export SLURM_CONF=${GNNRUN_SLURM_CONF:-/etc/gnnrun-ci/slurm.conf}
export OMPI_MCA_mpi_yield_when_idle=1 # as in run-slurm.sh

work=$(mktemp -d /tmp/gnnrun-slurm.XXXXXX)
jobs=()
cleanup() {
	[ ${#jobs[@]} = 0 ] || scancel "${jobs[@]}" 2>/dev/null || true
	"$here/slurm-down.sh" || true
	rm -rf "$work"
}
trap cleanup EXIT
"$here/slurm-up.sh"

declare -A launcher_of signalled released
for launcher in mpirun srun; do
	jid=$(sbatch --parsable --chdir="$work" --output="$work/$launcher.out" \
		--job-name="gnnrun-requeue-$launcher" --ntasks-per-node=2 --gpus-per-task=0 --time=10 \
		--export="ALL,GNNRUN=$bin,GNNRUN_LAUNCHER=$launcher,GNNRUN_INFO=0" \
		"$script" train "$parts" "${flags[@]}" --checkpoint "$ckpt-$launcher" -- "$@")
	jobs+=("$jid")
	launcher_of[$jid]=$launcher
	echo "run-slurm-requeue: submitted job $jid ($launcher)"
done

deadline=$((SECONDS + limit))
while squeue -h -j "$(IFS=,; echo "${jobs[*]}")" 2>/dev/null | grep -q .; do
	for jid in "${jobs[@]}"; do
		out="$work/${launcher_of[$jid]}.out"
		if [ -z "${signalled[$jid]:-}" ] && grep -q "^train: epoch 1/[0-9]* done" "$out" 2>/dev/null; then
			scancel --signal=USR1 --batch "$jid"
			signalled[$jid]=1
			echo "run-slurm-requeue: sent job $jid's batch shell SIGUSR1"
		fi
		# Slurm holds a requeued job back (its BeginTime moves about two
		# minutes on): let it start in 10 s, once the first run's steps
		# are cleaned up (at once, slurmd refused it: "Job credential
		# revoked").
		if [ -n "${signalled[$jid]:-}" ] && [ -z "${released[$jid]:-}" ] &&
			squeue -h -j "$jid" -o %T 2>/dev/null | grep -q PENDING; then
			scontrol update JobId="$jid" StartTime=now+10 && released[$jid]=1
		fi
	done
	if [ $SECONDS -ge $deadline ]; then
		echo "run-slurm-requeue: FAIL: jobs still queued or running after $limit s:" >&2
		squeue >&2 || true
		exit 1
	fi
	sleep 0.2
done

for jid in "${jobs[@]}"; do
	launcher=${launcher_of[$jid]}
	show=$(scontrol show job "$jid")
	state=$(grep -o 'JobState=[A-Z_]*' <<<"$show" | cut -d= -f2)
	code=$(grep -o ' ExitCode=[0-9:]*' <<<"$show" | cut -d= -f2)
	restarts=$(grep -o 'Restarts=[0-9]*' <<<"$show" | cut -d= -f2)
	echo "== job $jid launcher=$launcher state=$state exit=$code restarts=$restarts signalled=${signalled[$jid]:-0}"
	cat "$work/$launcher.out" 2>/dev/null || echo "(no output file)"
	echo "== end job $jid"
done
