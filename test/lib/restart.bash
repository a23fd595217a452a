# Bats/bash helper: a broker ended and started again on the same state
# directory (broker-restart.bats, broker-nsrestart.bats).  Load after
# broker.bash, whose broker_start it uses.

# Waits up to 5 s for pid $1 to end; a zombie has ended (its descriptors
# are closed; reaping it is up to whoever adopted it).
wait_dead() {
	local i st
	for ((i = 0; i < 500; i++)); do
		read -r st <"/proc/$1/stat" 2>/dev/null || return 0
		[[ ${st##*) } == Z* ]] && return 0
		sleep 0.01
	done
	return 1
}

# The broker ends as $1 says (kill: SIGKILL, term: SIGTERM, stop:
# sharectl stop) and a new one starts on the same state directory.
restart_by() {
	case $1 in
	kill) kill -KILL "$BROKER_PID" ;;
	term) kill -TERM "$BROKER_PID" ;;
	stop) "$SHARECTL" stop >/dev/null ;;
	esac
	wait_dead "$BROKER_PID" || return 1
	broker_start
}
