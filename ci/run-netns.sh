#!/bin/bash
# run-netns.sh GNNRUN [HOSTS [SLOTS]]: run the gnnrun binary GNNRUN with
# `mpirun --hostfile` over HOSTS fake hosts (default 3) with SLOTS ranks each
# (default 2): network namespaces made by netns-up.sh, reached through the
# ssh stand-in nsrsh, talking TCP over their own veth links. It runs
# `gnnrun info` and `gnnrun selftest` and checks that info saw HOSTS distinct
# host names and that selftest passed. It builds nothing, and removes the
# namespaces (and anything left running in them) on exit, failed or not.
#
# mpirun runs in the first namespace, like a head node that is also a compute
# node, with an almost empty environment (NSRSH_CLEAN_ENV=1), as over ssh.
#
# One-sided windows (selftest's window step) need an RMA-capable transport
# between hosts. With Debian's OpenMPI 4.1.4 over plain TCP only osc/ucx
# provides one: the default osc/rdma needs a BTL with RDMA and atomics (tcp
# has neither) and osc/pt2pt refuses MPI_THREAD_MULTIPLE, so without
# `--mca osc ucx` MPI_Win_create fails with MPI_ERR_WIN. UCX then sends the
# window reads between hosts over tcp/eth0. The ranks of one host share its
# IPC namespace, and there UCX 1.13's shared-memory transports lose
# osc/ucx's derived-datatype gets (selftest's repeated GetBlocks and
# GetRanges read back zeros from the second or third on), so UCX_TLS keeps
# UCX on tcp and self. The namespaces hide from OpenMPI that all hosts share this
# machine's cores, so mpi_yield_when_idle stops idle ranks from spinning
# (without it, selftest --scales 0,3,100 took 15 s instead of 0.3 s on 2
# cores that other jobs were using too).
#
# Environment:
#   GNNRUN_NETNS_MPIRUN_FLAGS  extra mpirun flags
#                              (default: --mca osc ucx -x UCX_NET_DEVICES=eth0
#                              -x UCX_TLS=tcp,self --mca mpi_yield_when_idle 1;
#                              UCX must not use lo, which is each namespace's
#                              own)
#   GNNRUN_NETNS_SCALES        selftest --scales (default 0,3,1000, as the
#                              single-host tests; the default scales' 20000
#                              adds ~17 s of 7-byte-message rounds over TCP)
#   GNNRUN_NETNS_TIMEOUT       seconds per mpirun (default 120)
# Exit status 77: the machine forbids namespaces (see netns-up.sh); skip.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 GNNRUN [HOSTS [SLOTS]]" >&2; exit 2; }
bin=$(realpath "$1")
hosts=${2:-3}
slots=${3:-2}
[ -x "$bin" ] || { echo "run-netns: $bin is not an executable" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
P=${GNNRUN_NETNS_PREFIX:-gnnh}
NET=${GNNRUN_NETNS_NET:-10.79.0}
flags=${GNNRUN_NETNS_MPIRUN_FLAGS:---mca osc ucx -x UCX_NET_DEVICES=eth0 -x UCX_TLS=tcp,self --mca mpi_yield_when_idle 1}
scales=${GNNRUN_NETNS_SCALES:-0,3,1000}
limit=${GNNRUN_NETNS_TIMEOUT:-120}

work=$(mktemp -d /tmp/gnnrun-netns.XXXXXX)
cleanup() {
	"$here/netns-down.sh" || true
	rm -rf "$work"
}
trap cleanup EXIT
"$here/netns-up.sh" "$hosts"

for i in $(seq 1 "$hosts"); do echo "$P$i slots=$slots"; done >"$work/hosts"
np=$((hosts * slots))
# mpirun reaches the other hosts through nsrsh, which must be an absolute
# path: the daemons it starts call it again (tree spawn).
mpirun="mpirun --allow-run-as-root --oversubscribe -np $np --hostfile $work/hosts \
--mca plm_rsh_agent $here/nsrsh --mca btl self,vader,tcp \
--mca btl_tcp_if_include $NET.0/24 --mca oob_tcp_if_include $NET.0/24 $flags"

# on_head CMD: run CMD with mpirun on the first host, under a time limit.
on_head() {
	echo "+ $mpirun $bin $*" >&2
	NSRSH_CLEAN_ENV=1 timeout -k 5 "$limit" "$here/nsrsh" "${P}1" "cd $work && exec $mpirun $bin $*"
}

echo "== gnnrun info on $hosts hosts x $slots slots"
on_head info | tee "$work/info.out"
seen=$(awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ {print $3}' "$work/info.out" | sort -u | wc -l)
if [ "$seen" != "$hosts" ]; then
	echo "run-netns: FAIL: gnnrun info saw $seen distinct hosts, want $hosts" >&2
	exit 1
fi
echo "== gnnrun selftest on $hosts hosts x $slots slots"
on_head selftest --scales "$scales" | tee "$work/selftest.out"
grep -q "^selftest passed" "$work/selftest.out" || { echo "run-netns: FAIL: no 'selftest passed'" >&2; exit 1; }
for i in $(seq 1 "$hosts"); do
	echo "eth0 of $P$i: $(ip -n "$P$i" -s link show eth0 | awk '/TX:/ {getline; print $1 " bytes sent"}')"
done
echo "run-netns: PASS ($np ranks on $hosts hosts)"
