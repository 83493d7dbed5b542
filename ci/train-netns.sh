#!/bin/bash
# train-netns.sh GNNRUN WORK HOSTS SLOTS GEN_ARGS... -- TRAIN_ARGS...: gen,
# partition, dispatch and train across HOSTS fake hosts with SLOTS ranks
# each (network namespaces made by netns-up.sh, host names that resolve
# nowhere), with no variable set by hand: gnnrun must find the trainers'
# MASTER_ADDR and interfaces itself. Then the same train with MASTER_ADDR
# forced to an address where no host answers, which must fail fast.
#
# GEN_ARGS go to `gnnrun gen` (the graph lands in WORK/graph), which is
# partitioned into HOSTS*SLOTS parts (WORK/parts); TRAIN_ARGS follow
# `gnnrun train WORK/parts` (loader flags, then -- and the trainer). WORK
# must be a directory every host sees (any local one: the namespaces share
# the file system) and stays for the caller.
#
# Before training, `gnnrun sample WORK/parts` (sample_args below) with the host's
# graph and without (--host-graph=true|false), dumping to WORK/dump-true
# and WORK/dump-false, each run's output between
#   == sample host-graph=H
#   == sample host-graph=H exit=S
#
# Output: each run's output, then one line per train run that the caller
# checks:
#   == train exit=S seconds=T
#   == unreachable exit=S seconds=T baseline=B left=N
# B is the time of `gnnrun info` under the same mpirun, what starting and
# ending a job costs here (seconds on a loaded machine), and N the
# processes left in the hosts.
# Exit status 77: the machine forbids namespaces (see netns-up.sh); skip.
set -euo pipefail
sample_args=(--fanouts 4,3 --batch-size 32 --seed 5)
[ $# -ge 5 ] || { echo "usage: $0 GNNRUN WORK HOSTS SLOTS GEN_ARGS... -- TRAIN_ARGS..." >&2; exit 2; }
bin=$(realpath "$1")
work=$(realpath "$2")
hosts=$3
slots=$4
shift 4
gen=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	gen+=("$1")
	shift
done
[ "${1:-}" = -- ] || { echo "train-netns: want -- before the train arguments" >&2; exit 2; }
shift
here=$(cd "$(dirname "$0")" && pwd)

trap '"$here/netns-down.sh" || true' EXIT
"$here/netns-up.sh" "$hosts"
# shellcheck source=netns-mpirun.sh
. "$here/netns-mpirun.sh"

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

echo "== gen, partition, dispatch on $hosts hosts x $slots slots"
on_head gen "${gen[@]}" --out "$work/graph"
on_head partition --in "$work/graph" --parts "$np" --balance nodes,train --out "$work/asg"
on_head dispatch --in "$work/graph" --assignment "$work/asg" --out "$work/parts"

# The same batches with the host's graph (the default: each rank samples
# its host's partitions as its own, other hosts' through the transport)
# and without; the caller compares the dumps with a one-rank run's.
for hg in true false; do
	echo "== sample host-graph=$hg"
	status=0
	on_head sample "$work/parts" "${sample_args[@]}" --host-graph="$hg" --dump "$work/dump-$hg" || status=$?
	echo "== sample host-graph=$hg exit=$status"
done

echo "== train on $hosts hosts x $slots slots"
t0=$(now)
status=0
on_head train "$work/parts" "$@" || status=$?
echo "== train exit=$status seconds=$(since "$t0")"

# An address of the hosts' subnet that no host holds: connections to it
# hang (no ARP answer) rather than fail at once, as behind a firewall.
bad=$NET.99
t0=$(now)
on_head info >/dev/null
baseline=$(since "$t0")
echo "== train with MASTER_ADDR=$bad"
t0=$(now)
status=0
limit=30 on_head -x "MASTER_ADDR=$bad" train "$work/parts" "$@" 2>&1 || status=$?
secs=$(since "$t0")
# Ranks of other hosts end a moment after mpirun; give them 5 s.
for _ in $(seq 1 50); do
	[ -z "$(netns_pids)" ] && break
	sleep 0.1
done
left=$(netns_pids | wc -l)
[ "$left" = 0 ] || ps -o pid,args -p "$(netns_pids | paste -sd,)" || true
echo "== unreachable exit=$status seconds=$secs baseline=$baseline left=$left"
