#!/bin/bash
# run-slurm.sh GNNRUN: bring up the single-node Slurm of slurm-up.sh, submit
# launch/gnnrun.sbatch with sbatch twice, 4 tasks each, once with mpirun
# inside the allocation and once with srun --mpi=pmix, running GNNRUN (an
# absolute path to the gnnrun binary) `info` then `selftest`, and check that
# both jobs ended COMPLETED with exit code 0:0, saw 4 ranks and passed the
# selftest. Each job's log is printed between "== job" lines. It builds
# nothing, and stops the daemons it started on exit, failed or not.
#
# It polls squeue instead of using `sbatch --wait`, which only checks every
# 10 s. The node books 8 fake GPUs and the script asks for one per task, so
# both jobs run at once, each rank with a GPU of its own (gnnrun info shows
# which).
#
# Environment:
#   GNNRUN_SLURM_SCALES   selftest --scales (default 0,3,1000)
#   GNNRUN_SLURM_TIMEOUT  seconds to wait for both jobs (default 180)
# Exit status 77: the machine forbids the test (see slurm-up.sh); skip.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 GNNRUN" >&2; exit 2; }
bin=$(realpath "$1")
[ -x "$bin" ] || { echo "run-slurm: $bin is not an executable" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
script=$(cd "$here/.." && pwd)/launch/gnnrun.sbatch
scales=${GNNRUN_SLURM_SCALES:-0,3,1000}
limit=${GNNRUN_SLURM_TIMEOUT:-180}
export SLURM_CONF=${GNNRUN_SLURM_CONF:-/etc/gnnrun-ci/slurm.conf}
# The node claims more CPUs than the machine has, so OpenMPI does not know the
# 4 ranks share fewer cores and would let idle ranks spin: a selftest took
# 36-45 s instead of about 1 s. Yielding is what it does by itself when it
# sees oversubscription. (sbatch exports this to the job, and MPI_Init reads
# it under mpirun and srun alike.)
export OMPI_MCA_mpi_yield_when_idle=1

work=$(mktemp -d /tmp/gnnrun-slurm.XXXXXX)
jobs=()
cleanup() {
	[ ${#jobs[@]} = 0 ] || scancel "${jobs[@]}" 2>/dev/null || true
	"$here/slurm-down.sh" || true
	rm -rf "$work"
}
trap cleanup EXIT
"$here/slurm-up.sh"

declare -A launcher_of
for launcher in mpirun srun; do
	jid=$(sbatch --parsable --chdir="$work" --output="$work/$launcher-%j.out" \
		--job-name="gnnrun-$launcher" --ntasks-per-node=4 --time=5 \
		--export="ALL,GNNRUN=$bin,GNNRUN_LAUNCHER=$launcher" \
		"$script" selftest --scales "$scales")
	jobs+=("$jid")
	launcher_of[$jid]=$launcher
	echo "run-slurm: submitted job $jid ($launcher)"
done

deadline=$((SECONDS + limit))
while squeue -h -j "$(IFS=,; echo "${jobs[*]}")" 2>/dev/null | grep -q .; do
	if [ $SECONDS -ge $deadline ]; then
		echo "run-slurm: FAIL: jobs still queued or running after $limit s:" >&2
		squeue >&2 || true
		exit 1
	fi
	sleep 0.2
done

fail=0
for jid in "${jobs[@]}"; do
	launcher=${launcher_of[$jid]}
	state=$(scontrol show job "$jid" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
	code=$(scontrol show job "$jid" | grep -o ' ExitCode=[0-9:]*' | cut -d= -f2)
	out="$work/$launcher-$jid.out"
	echo "== job $jid launcher=$launcher state=$state exit=$code"
	cat "$out" 2>/dev/null || echo "(no output file $out)"
	echo "== end job $jid"
	if [ "$state" != COMPLETED ] || [ "$code" != 0:0 ]; then
		echo "run-slurm: FAIL: job $jid ($launcher) ended $state with exit code $code" >&2
		fail=1
	elif ! grep -q "^world: 4 ranks" "$out" || ! grep -q "^selftest passed: .* on 4 ranks" "$out"; then
		echo "run-slurm: FAIL: job $jid ($launcher) did not show 4 ranks and 'selftest passed'" >&2
		fail=1
	fi
done
[ $fail = 0 ] || exit 1
echo "run-slurm: PASS (mpirun and srun --mpi=pmix, 4 ranks each)"
