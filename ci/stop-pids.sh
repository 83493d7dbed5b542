# stop-pids.sh (sourced): stop_pidfiles FILE... sends SIGTERM to the process
# named in each pid file, waits up to 10 s for all of them to end (a zombie
# counts as ended: stopped daemons are re-parented to PID 1, which reaps them
# a little later), then SIGKILLs what is left and removes the pid files.
stop_pidfiles() {
	local f p pids=() live=()
	for f in "$@"; do
		[ -s "$f" ] || continue
		p=$(tr -dc 0-9 <"$f")
		[ -n "$p" ] && kill -0 "$p" 2>/dev/null && pids+=("$p")
	done
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for _ in $(seq 1 100); do
		live=()
		for p in "${pids[@]}"; do alive "$p" && live+=("$p"); done
		[ ${#live[@]} = 0 ] && break
		sleep 0.1
	done
	for p in "${live[@]}"; do
		echo "stop: PID $p did not stop in 10 s; killing it" >&2
		kill -9 "$p" 2>/dev/null || true
	done
	rm -f "$@"
}

# alive PID: the process exists and is not a zombie.
alive() {
	local s
	s=$(awk '/^State:/ {print $2}' "/proc/$1/status" 2>/dev/null) || return 1
	[ -n "$s" ] && [ "$s" != Z ]
}
