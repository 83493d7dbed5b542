#!/bin/bash
# netns-up.sh [N]: N fake hosts for multi-host mpirun tests, as network
# namespaces ${GNNRUN_NETNS_PREFIX}1..N (default gnnh1..gnnhN) with addresses
# ${GNNRUN_NETNS_NET}.11.. (default 10.79.0.11..) on a veth pair each, joined
# by the bridge ${GNNRUN_NETNS_PREFIX}br0. The bridge has no address, so
# nothing is routed off the machine: all traffic stays between the namespaces.
# ci/nsrsh reaches a host by name or address; netns-down.sh removes them all.
#
# Exit status 77 means the machine forbids it (not root, or namespaces or
# bridges not permitted); the caller should skip, not fail.
set -euo pipefail
N=${1:-3}
P=${GNNRUN_NETNS_PREFIX:-gnnh}
NET=${GNNRUN_NETNS_NET:-10.79.0}
BR=${P}br0
here=$(cd "$(dirname "$0")" && pwd)

skip() { echo "netns-up: SKIP: $*" >&2; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root for ip netns"
command -v ip >/dev/null || skip "no ip command (iproute2)"
command -v unshare >/dev/null || skip "no unshare command (util-linux)"

"$here/netns-down.sh" >/dev/null 2>&1 || true # leftovers of a run that died

# Probe: may this process make namespaces and bridges at all?
if ! err=$(ip netns add "${P}probe" 2>&1); then
	skip "ip netns add is not permitted here: $err"
fi
ip netns del "${P}probe"
if ! err=$(ip link add "$BR" type bridge 2>&1); then
	skip "cannot create a bridge: $err"
fi
ip link set "$BR" up
for i in $(seq 1 "$N"); do
	ns=$P$i
	ip netns add "$ns"
	ip link add "veth-$ns" type veth peer name eth0 netns "$ns"
	ip link set "veth-$ns" master "$BR" up
	ip -n "$ns" addr add "$NET.$((10 + i))/24" dev eth0
	ip -n "$ns" link set eth0 up
	ip -n "$ns" link set lo up
done
echo "netns-up: hosts ${P}1..${P}$N on $NET.0/24" >&2
