#!/bin/bash
# run-netns.sh GNNRUN [HOSTS [SLOTS]]: run the gnnrun binary GNNRUN with
# `mpirun --hostfile` over HOSTS fake hosts (default 3) with SLOTS ranks each
# (default 2): network namespaces made by netns-up.sh, reached through the
# ssh stand-in nsrsh, talking TCP over their own veth links. It runs
# `gnnrun info` and `gnnrun selftest` and checks that info saw HOSTS distinct
# host names and that selftest passed. It builds nothing, and removes the
# namespaces (and anything left running in them) on exit, failed or not.
#
# mpirun runs in the first namespace with an almost empty environment, as
# over ssh (netns-mpirun.sh has the flags and why).
#
# Environment: GNNRUN_NETNS_MPIRUN_FLAGS and GNNRUN_NETNS_TIMEOUT (see
# netns-mpirun.sh), and
#   GNNRUN_NETNS_SCALES        selftest --scales (default 0,3,1000, as the
#                              single-host tests; the default scales' 20000
#                              adds ~17 s of 7-byte-message rounds over TCP)
# Exit status 77: the machine forbids namespaces (see netns-up.sh); skip.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 GNNRUN [HOSTS [SLOTS]]" >&2; exit 2; }
bin=$(realpath "$1")
hosts=${2:-3}
slots=${3:-2}
[ -x "$bin" ] || { echo "run-netns: $bin is not an executable" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
scales=${GNNRUN_NETNS_SCALES:-0,3,1000}

work=$(mktemp -d /tmp/gnnrun-netns.XXXXXX)
cleanup() {
	"$here/netns-down.sh" || true
	rm -rf "$work"
}
trap cleanup EXIT
"$here/netns-up.sh" "$hosts"

# shellcheck source=netns-mpirun.sh
. "$here/netns-mpirun.sh"

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
