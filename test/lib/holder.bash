# Bats/bash helper: the holders brokers leave (sharebrokerd's holder.c).
# A broker that stops or dies while some mount it manages is covered
# leaves a holder process ("sharebrokerhold") keeping it for the next
# broker; a test that stops its broker for good ends it too, or the
# process (and the test's mount namespace with it) would outlive the test.
# And what a run's cleanup asks of its detached broker and its mounts
# (test/diff/broker-run.sh, fault-run.sh): builtins and one awk, no
# process per question.

# Whether process $1 is, still, a broker on socket $2: not a zombie, and
# an argument of its command line is the socket's name (a pid reused by
# another process is not).
broker_on() {
	local st arg args=()
	{ read -r st <"/proc/$1/stat"; } 2>/dev/null && [[ ${st##*) } != Z* ]] ||
		return 1
	mapfile -d '' -t args 2>/dev/null <"/proc/$1/cmdline"
	for arg in "${args[@]}"; do
		[[ $arg == "$2" ]] && return 0
	done
	return 1
}

# Mountpoints at or below $1, deepest (latest) first.
mounts_under() {
	awk -v d="$1" '$5 == d || index($5, d "/") == 1 { m[n++] = $5 }
		END { while (n) print m[--n] }' /proc/self/mountinfo
}

# The pid of the holder DIR/holder.pid names ("PID FD"), if that process
# still is a holder and its descriptor FD still is DIR: a pid reused by
# another process, even another run's holder, is not ours.
holder_in() {
	local pid fd comm
	read -r pid fd <"$1/holder.pid" 2>/dev/null || return 1
	read -r comm <"/proc/$pid/comm" 2>/dev/null || return 1
	[[ $comm == sharebrokerhold && /proc/$pid/fd/$fd -ef $1 ]] &&
		echo "$pid"
}

# Ends the holder of every DIR/**/holder.pid (holder_in) and waits until
# it is gone.  The search stays out of a state directory's own places:
# ns/ holds copies of the broker's whole tree, where /tmp shows the state
# directories of other runs going on at the same time, whose holders would
# pass holder_in() there and be killed (their brokers' covered mounts then
# out of reach after a restart), and /proc, where find would wander for
# long.  Not -xdev: a state directory may be a mount of its own (a tiny
# tmpfs, to fill it).
end_holders() {
	local f pid comm i
	for f in $(find "$@" \( -name ns -o -name stage -o -name park \
		    -o -name newroot \) -prune -o -name holder.pid -print \
		    2>/dev/null); do
		pid=$(holder_in "${f%/*}") || continue
		kill -KILL "$pid" 2>/dev/null
		for ((i = 0; i < 100; i++)); do
			read -r comm <"/proc/$pid/stat" 2>/dev/null || break
			[[ ${comm##*) } == Z* ]] && break
			sleep 0.05
		done
	done
	return 0
}
