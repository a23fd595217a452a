# restart.sh - sourced by broker-run.sh with BROKER_RESTART=1 (issue 9,
# "a restart loses nothing"): the run's broker is killed with SIGKILL and a
# new one started, which imports the table, takes the covered mounts from
# the dead one's holder and reads the saved propagation back, before every
# mount-family command of the scenario (native.sh's _spied) and once more
# before the views are read.  Nothing else changes, so the result must
# still be the kernel's.
#
# Environment: RESTART_BROKER (the broker's command line, words separated
# by spaces, no word with a space of its own), RESTART_STATE (its state
# directory, where sharebrokerd.pid says which process it is), RESTART_WRAP
# (legacy-sim, outside the scenario: inside it the scenario's own filter
# is inherited, and a second one would only slow every system call).

# The broker of the run, killed; returns once it is gone (a zombie is:
# its descriptors, the state directory's lock among them, are closed).
_restart_kill() {
	local pid st i
	read -r pid <"$RESTART_STATE/sharebrokerd.pid" 2>/dev/null || return 0
	[[ $pid ]] && kill -KILL "$pid" 2>/dev/null || return 0
	# SIGKILL takes effect within microseconds: spin (bash builtins
	# only), and sleep only if it takes longer
	for ((i = 0; ; i++)); do
		read -r st <"/proc/$pid/stat" 2>/dev/null || return 0
		[[ ${st##*) } == Z* ]] && return 0
		((i < 1000)) || sleep 0.001
	done
}

# SIGKILL, then a new broker with the same command line; the new one
# waits for the dead one's holder to let the lock go (pidfile.c).
restart_broker() {
	_restart_kill
	${RESTART_WRAP:-} $RESTART_BROKER 2>>"$RESTART_STATE/restart.err" ||
		echo "restart.sh: the broker did not start again" >&2
}

if declare -F _spied >/dev/null && ! declare -F _spied_once >/dev/null; then
	eval "_spied_once() $(declare -f _spied | sed 1d)"
	_spied() {
		restart_broker
		_spied_once "$@"
	}
fi
