# netns-mpirun.sh (sourced by run-netns.sh and train-netns.sh): the mpirun
# command line over the fake hosts of netns-up.sh, and on_head, which runs
# gnnrun with it on the first host. The caller sets bin (the gnnrun binary),
# hosts, slots and work (a directory every host sees) and here (ci/).
#
# mpirun runs in the first namespace, like a head node that is also a compute
# node, with an almost empty environment (NSRSH_CLEAN_ENV=1), as over ssh:
# a program that needs a variable mpirun did not pass (-x) fails here too.
#
# One-sided windows (selftest's window step, the rma transports) need an
# RMA-capable transport between hosts. With Debian's OpenMPI 4.1.4 over plain
# TCP only osc/ucx provides one: the default osc/rdma needs a BTL with RDMA
# and atomics (tcp has neither) and osc/pt2pt refuses MPI_THREAD_MULTIPLE, so
# without `--mca osc ucx` MPI_Win_create fails with MPI_ERR_WIN. UCX then
# sends the window reads between hosts over tcp/eth0. The ranks of one host
# share its IPC namespace, and there UCX 1.13's shared-memory transports lose
# osc/ucx's derived-datatype gets (selftest's repeated GetBlocks and
# GetRanges read back zeros from the second or third on), so UCX_TLS keeps
# UCX on tcp and self. The namespaces hide from OpenMPI that all hosts share
# this machine's cores, so mpi_yield_when_idle stops idle ranks from spinning
# (without it, selftest --scales 0,3,100 took 15 s instead of 0.3 s on 2
# cores that other jobs were using too).
#
# Environment:
#   GNNRUN_NETNS_MPIRUN_FLAGS  extra mpirun flags
#                              (default: --mca osc ucx -x UCX_NET_DEVICES=eth0
#                              -x UCX_TLS=tcp,self --mca mpi_yield_when_idle 1;
#                              UCX must not use lo, which is each namespace's
#                              own)
#   GNNRUN_NETNS_TIMEOUT       seconds per mpirun (default 120)
P=${GNNRUN_NETNS_PREFIX:-gnnh}
NET=${GNNRUN_NETNS_NET:-10.79.0}
netns_flags=${GNNRUN_NETNS_MPIRUN_FLAGS:---mca osc ucx -x UCX_NET_DEVICES=eth0 -x UCX_TLS=tcp,self --mca mpi_yield_when_idle 1}
limit=${GNNRUN_NETNS_TIMEOUT:-120}

for i in $(seq 1 "$hosts"); do echo "$P$i slots=$slots"; done >"$work/hosts"
np=$((hosts * slots))
# mpirun reaches the other hosts through nsrsh, which must be an absolute
# path: the daemons it starts call it again (tree spawn).
mpirun="mpirun --allow-run-as-root --oversubscribe -np $np --hostfile $work/hosts \
--mca plm_rsh_agent $here/nsrsh --mca btl self,vader,tcp \
--mca btl_tcp_if_include $NET.0/24 --mca oob_tcp_if_include $NET.0/24 $netns_flags"

# on_head [-x NAME=VALUE ...] ARGS...: run gnnrun ARGS with mpirun on the
# first host, in $work, under a time limit; leading -x options go to mpirun.
on_head() {
	local extra=
	while [ "${1:-}" = -x ]; do
		extra="$extra -x $2"
		shift 2
	done
	echo "+ $mpirun$extra $bin $*" >&2
	NSRSH_CLEAN_ENV=1 timeout -k 5 "$limit" "$here/nsrsh" "${P}1" "cd $work && exec $mpirun$extra $bin $*"
}

# netns_pids: the processes still inside the fake hosts, one per line.
netns_pids() {
	local i
	for i in $(seq 1 "$hosts"); do ip netns pids "$P$i" 2>/dev/null || true; done
}
