#!/bin/bash
# slurm-up.sh: a single-node Slurm (munged, slurmctld, slurmd) on this machine,
# for the launcher tests. Needs root; no systemd: the daemons are started by
# hand and their PIDs kept in $GNNRUN_CI_STATE, so slurm-down.sh stops exactly
# these processes. Installs Debian's slurmctld, slurmd, slurm-client and munge
# with apt-get when they are missing.
#
# The cluster has its own config ($GNNRUN_SLURM_CONF), spool, pid files and
# ports (6917/6918 unless GNNRUN_SLURM_PORT says otherwise), so it does not
# touch a Slurm the machine may already run. Every Slurm command needs
#   export SLURM_CONF=$GNNRUN_SLURM_CONF   (default /etc/gnnrun-ci/slurm.conf)
#
# The node advertises GNNRUN_SLURM_CPUS CPUs (default 8, more than the real
# cores so 4-task jobs fit on a 2-core machine) and GNNRUN_SLURM_GPUS GPUs
# (default 8) that exist only in Slurm's books (see gres.conf below), so a
# batch script asking for --gpus-per-task runs as on a GPU node.
#
# Exit status 77 means the machine forbids the test (not root, or Slurm cannot
# be installed); the caller should skip, not fail.
set -euo pipefail

STATE=${GNNRUN_CI_STATE:-/run/gnnrun-ci}
CONF=${GNNRUN_SLURM_CONF:-/etc/gnnrun-ci/slurm.conf}
PORT=${GNNRUN_SLURM_PORT:-6917}
NCPU=${GNNRUN_SLURM_CPUS:-8}
NGPU=${GNNRUN_SLURM_GPUS:-8}
SPOOL=/var/spool/gnnrun-ci
LOGS=/var/log/gnnrun-ci
here=$(cd "$(dirname "$0")" && pwd)

skip() { echo "slurm-up: SKIP: $*" >&2; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root to start slurmctld, slurmd and munged"

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null ||
	! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
	command -v apt-get >/dev/null || skip "Slurm is not installed and there is no apt-get"
	echo "slurm-up: installing slurmctld slurmd slurm-client munge" >&2
	export DEBIAN_FRONTEND=noninteractive
	if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends \
		slurmctld slurmd slurm-client munge >/dev/null; }; then
		skip "apt-get could not install slurmctld slurmd slurm-client munge"
	fi
fi

# Leftovers of an earlier run that died before its slurm-down.sh.
"$here/slurm-down.sh" >/dev/null 2>&1 || true

node=$(hostname -s) # slurmd finds its NodeName from the short host name
mkdir -p "$(dirname "$CONF")" "$STATE" "$LOGS"
rm -rf "$SPOOL"
mkdir -p "$SPOOL/ctld" "$SPOOL/d"
cat >"$CONF" <<CONF
# Written by gnnrun's ci/slurm-up.sh: a one-node cluster for the launcher tests.
ClusterName=gnnrunci
SlurmctldHost=${node}(127.0.0.1)
SlurmctldPort=${PORT}
SlurmdPort=$((PORT + 1))
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=pmix
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
$([ "$NGPU" -gt 0 ] && echo GresTypes=gpu)
ReturnToService=2
MailProg=/bin/true
StateSaveLocation=${SPOOL}/ctld
SlurmdSpoolDir=${SPOOL}/d
SlurmctldPidFile=${STATE}/slurmctld.pid
SlurmdPidFile=${STATE}/slurmd.pid
SlurmctldLogFile=${LOGS}/slurmctld.log
SlurmdLogFile=${LOGS}/slurmd.log
SlurmdParameters=config_overrides
NodeName=${node} NodeAddr=127.0.0.1 CPUs=${NCPU} RealMemory=4000 $([ "$NGPU" -gt 0 ] && echo "Gres=gpu:${NGPU}") State=UNKNOWN
PartitionName=ci Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
# Slurm's gpu gres needs device files; these fake GPUs are character devices
# that are clones of /dev/null (1,3), which nothing opens. Slurm books them
# and sets CUDA_VISIBLE_DEVICES for the tasks that get them, as on a real
# GPU node.
gres=$(dirname "$CONF")/gres.conf
: >"$gres"
if [ "$NGPU" -gt 0 ]; then
	mkdir -p "$SPOOL/fakegpu"
	for i in $(seq 0 $((NGPU - 1))); do mknod "$SPOOL/fakegpu/nvidia$i" c 1 3; done
	echo "NodeName=${node} Name=gpu File=${SPOOL}/fakegpu/nvidia[0-$((NGPU - 1))]" >"$gres"
fi
export SLURM_CONF=$CONF

# munged: reuse one that already answers (its socket is shared), else start
# one and remember its PID so slurm-down.sh stops only ours.
if ! munge -n >/dev/null 2>&1; then
	if [ ! -s /etc/munge/munge.key ]; then
		mungekey --create
		chown munge:munge /etc/munge/munge.key
		chmod 0600 /etc/munge/munge.key
	fi
	install -d -o munge -g munge -m 0755 /run/munge
	rm -f /run/munge/munged.pid
	runuser -u munge -- /usr/sbin/munged # daemonizes; PID in /run/munge/munged.pid
	for _ in $(seq 1 50); do [ -s /run/munge/munged.pid ] && break; sleep 0.1; done
	cp /run/munge/munged.pid "$STATE/munged.pid"
fi
munge -n | unmunge >/dev/null

/usr/sbin/slurmctld -f "$CONF" # daemonizes; PID in $STATE/slurmctld.pid
/usr/sbin/slurmd -f "$CONF"    # daemonizes; PID in $STATE/slurmd.pid
for _ in $(seq 1 100); do
	[ "$(sinfo -h -o %T 2>/dev/null)" = idle ] && break
	sleep 0.2
done
state=$(sinfo -h -o %T 2>/dev/null || true)
if [ "$state" != idle ]; then
	echo "slurm-up: node is '$state', not idle; last log lines:" >&2
	tail -n 20 "$LOGS/slurmctld.log" "$LOGS/slurmd.log" >&2 || true
	exit 1
fi
echo "slurm-up: node $node idle (SLURM_CONF=$CONF)" >&2
