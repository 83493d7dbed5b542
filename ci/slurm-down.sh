#!/bin/bash
# slurm-down.sh: stop the daemons slurm-up.sh started, by the PIDs it kept in
# $GNNRUN_CI_STATE (munged only if slurm-up.sh started it), wait until they
# are gone, and remove the fake GPU device nodes. The config, the spool and
# the logs (/var/log/gnnrun-ci) stay for a look after a failure. Safe to run
# twice.
set -euo pipefail
STATE=${GNNRUN_CI_STATE:-/run/gnnrun-ci}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=stop-pids.sh
. "$here/stop-pids.sh"
stop_pidfiles "$STATE/slurmd.pid" "$STATE/slurmctld.pid" "$STATE/munged.pid"
rm -rf /var/spool/gnnrun-ci/fakegpu
