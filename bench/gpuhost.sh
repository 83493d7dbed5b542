#!/bin/bash
# bench/gpuhost.sh OUT [RANKS [DEVICE]]: the mini-batch pipeline on one
# host at several rank counts, with the host's graph (--host-graph, the
# default) and without, for a device session's few minutes: R-MAT 20 with
# 128 float32 features in K = 4 partitions balanced on nodes, training
# nodes and edges; `gnnrun loader --device DEVICE` (default cuda; host to
# try it where there is no GPU) at each rank count of RANKS (default
# 1,2,4,8), fanouts 15,10,5, batches of 1024, 32 batches a rank per epoch,
# 2 epochs, no trainer. OUT/gpuhost.md gets a row a run: batches/s per
# rank and in all; OUT/runs/ each run's output and report. The data is made under OUT/data (about a
# minute on 16 cores) unless OUT/data/parts exists.
#
# It runs bin/gnnrun (make build: the MPI build) under the mpirun on PATH,
# as root where it must, and fails on the first run that fails.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 OUT [RANKS [DEVICE]]" >&2; exit 2; }
out=$(mkdir -p "$1" && cd "$1" && pwd)
ranks=${2:-1,2,4,8}
device=${3:-cuda}
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/bin/gnnrun
[ -x "$bin" ] || { echo "gpuhost: $bin is missing: make build" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "gpuhost: no mpirun on PATH" >&2; exit 2; }
flags=(--oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && flags+=(--allow-run-as-root)
run() { mpirun "${flags[@]}" -np "$@"; }

data=$out/data
if [ ! -e "$data/parts" ]; then
	mkdir -p "$data"
	run 1 "$bin" gen --scale 20 --feat-dim 128 --classes 10 --out "$data/graph" >"$data/gen.log" 2>&1
	run 4 "$bin" partition --in "$data/graph" --parts 4 --balance nodes,train,edges --out "$data/asg" >"$data/partition.log" 2>&1
	run 4 "$bin" dispatch --in "$data/graph" --assignment "$data/asg" --out "$data/parts.tmp" >"$data/dispatch.log" 2>&1
	mv "$data/parts.tmp" "$data/parts"
fi

mkdir -p "$out/runs"
md=$out/gpuhost.md
{
	echo "# The pipeline on one host, with the host's graph and without"
	echo
	echo "\`bench/gpuhost.sh\` on $(hostname) ($(nproc) cores; $(command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name --format=csv,noheader | head -1 || echo "no GPU")), commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown), device $device: R-MAT 20, 128 features, K = 4, \`gnnrun loader --fanouts 15,10,5 --batch-size 1024 --epochs 2 --batches-per-epoch 32\`."
	echo
	echo "| ranks | --host-graph | batches/s per rank | batches/s in all | input rows copied from the host's other partitions |"
	echo "|---|---|---|---|---|"
} >"$md"
for np in ${ranks//,/ }; do
	for hg in true false; do
		name=np$np-hg$hg
		run "$np" "$bin" loader "$data/parts" --fanouts 15,10,5 --batch-size 1024 --epochs 2 --batches-per-epoch 32 \
			--device "$device" --host-graph=$hg --report "$out/runs/$name.json" >"$out/runs/$name.out" 2>&1 ||
			{ echo "gpuhost: $name failed:" >&2; tail -20 "$out/runs/$name.out" >&2; exit 1; }
		line=$(grep -E 'batches/s per rank, [0-9.]+ in all' "$out/runs/$name.out")
		per=$(sed -E 's/.* ([0-9.]+) batches\/s per rank.*/\1/' <<<"$line")
		all=$(sed -E 's/.* ([0-9.]+) in all.*/\1/' <<<"$line")
		host=$(grep -oE '[0-9,]+ of them from this host.s other ranks. partitions' "$out/runs/$name.out" | cut -d' ' -f1 || true)
		echo "| $np | $hg | $per | $all | ${host:-–} |" >>"$md"
		echo "gpuhost: $np ranks, --host-graph=$hg: $all batches/s in all" >&2
	done
done
echo "gpuhost: $md" >&2
