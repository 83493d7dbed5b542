#!/bin/bash
# netns-down.sh: remove the namespaces and the bridge netns-up.sh made. A
# process still inside one of them (an orted or rank of a run that hung) was
# started by these tests: it is named and killed by PID first, because a
# namespace with processes outlives its name. Safe to run twice.
set -euo pipefail
P=${GNNRUN_NETNS_PREFIX:-gnnh}
for ns in $(ip netns list 2>/dev/null | awk -v re="^${P}([0-9]+|probe)$" '$1 ~ re {print $1}'); do
	pids=$(ip netns pids "$ns" 2>/dev/null || true)
	if [ -n "$pids" ]; then
		echo "netns-down: $ns still has processes $(echo $pids); killing them" >&2
		# shellcheck disable=SC2086
		kill $pids 2>/dev/null || true
		sleep 0.5
		# shellcheck disable=SC2086
		kill -9 $(ip netns pids "$ns" 2>/dev/null) 2>/dev/null || true
	fi
	ip netns del "$ns"
done
ip link del "${P}br0" 2>/dev/null || true
