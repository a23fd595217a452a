#!/usr/bin/env bats
# A restart of the broker loses nothing (issue 9 item 3): mounts covered
# on their mountpoint while the broker restarts stay within its reach
# (the dead broker's holder keeps them for the next one, holder.c), with
# their propagation.  Each scenario runs through the broker, restarted by
# SIGKILL, by SIGTERM and by `sharectl stop`, and natively in a scratch
# copy of the namespace (the kernel propagates there itself); the answers
# of every command and the sandbox's table must be the kernel's:
#   - a covered mount, once uncovered, unmounts (0; EBUSY before);
#   - an rbind of a tree holding a covered mount copies it (EIO before);
#   - a covered shared mount keeps its peer: umount and mount propagate;
# and a broker stopped with nothing covered leaves no holder behind.

load ../lib/broker

setup() { broker_setup; }
teardown() { broker_teardown; }

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

# Runs the steps ($@, one command each, "restart" for a restart) through
# the broker with restarts as $HOW says; prints each step's exit status,
# then the table.
through_broker() {
	local step rc
	for step in "$@"; do
		if [ "$step" = restart ]; then
			restart_by "$HOW" || echo "restart failed"
			continue
		fi
		# a failure is an answer to compare, not the end (bats: set -e)
		host $step >/dev/null 2>&1 && rc=0 || rc=$?
		echo "$rc $step"
	done
	table
}

# The same steps as the kernel answers them, in a scratch namespace.
natively() {
	native bash -c "
		$(declare -f table)
		S='$S'
		for step in \"\$@\"; do
			[ \"\$step\" = restart ] && continue
			\$step >/dev/null 2>&1
			echo \"\$? \$step\"
		done
		table" bash "$@"
}

# Asserts that the steps give through the restarted broker what they give
# natively.
same_across_restarts() {
	local kernel broker
	kernel=$(natively "$@")
	# not in a subshell: the restarts set BROKER_PID for the teardown
	through_broker "$@" >"$BATS_TEST_TMPDIR/broker.out"
	broker=$(cat "$BATS_TEST_TMPDIR/broker.out")
	if [ "$broker" != "$kernel" ]; then
		echo "restarted by $HOW, unlike the kernel (-kernel +broker):" >&2
		diff <(echo "$kernel") <(echo "$broker") >&2
		return 1
	fi
	# the broker that answered last still counts the kernel's mounts
	assert_count_agrees
}

covered_umount() {
	mkdir -p "$S/a"
	same_across_restarts \
		"mount -t tmpfs LOW $S/a" \
		"mount -t tmpfs TOP $S/a" \
		restart \
		"umount $S/a" \
		"umount $S/a"
}

covered_rbind() {
	mkdir -p "$S/a" "$S/b"
	same_across_restarts \
		"mount -t tmpfs A $S/a" \
		"mkdir $S/a/sub" \
		"mount -t tmpfs LOW $S/a/sub" \
		"mount -t tmpfs TOP $S/a/sub" \
		restart \
		"mount --rbind $S/a $S/b" \
		"umount $S/b/sub" \
		"umount $S/b/sub" \
		"umount $S/b"
}

# a and b peers, both covered by the propagated TOP: after the restart,
# TOP's umount, and a mount and umount under a, reach b too.
covered_peers() {
	mkdir -p "$S/a" "$S/b"
	same_across_restarts \
		"mount -t tmpfs A $S/a" \
		"mount --make-shared $S/a" \
		"mount --bind $S/a $S/b" \
		"mount -t tmpfs TOP $S/a" \
		restart \
		"umount $S/a" \
		"mkdir $S/a/x" \
		"mount -t tmpfs X $S/a/x" \
		"umount $S/b/x" \
		"mount -t tmpfs Y $S/b/x" \
		restart \
		"umount $S/a/x"
}

@test "covered mount unmounts after a restart: SIGKILL" {
	HOW=kill covered_umount
}

@test "covered mount unmounts after a restart: SIGTERM" {
	HOW=term covered_umount
}

@test "covered mount unmounts after a restart: sharectl stop" {
	HOW=stop covered_umount
}

@test "rbind of a tree holding a covered mount after a restart: SIGKILL" {
	HOW=kill covered_rbind
}

@test "rbind of a tree holding a covered mount after a restart: SIGTERM" {
	HOW=term covered_rbind
}

@test "rbind of a tree holding a covered mount after a restart: sharectl stop" {
	HOW=stop covered_rbind
}

@test "covered peers keep propagating after restarts: SIGKILL" {
	HOW=kill covered_peers
}

@test "covered peers keep propagating after restarts: SIGTERM" {
	HOW=term covered_peers
}

@test "covered peers keep propagating after restarts: sharectl stop" {
	HOW=stop covered_peers
}

# The holder: gone after a clean stop when nothing is covered; kept, and
# then ended by the next broker, which reaches what it kept, when
# something is.
@test "a holder stays only while a stopped broker left covered mounts" {
	local pid i
	mkdir -p "$S/a"
	host mount -t tmpfs LOW "$S/a"
	read -r pid _ <"$STATE/holder.pid"
	[ "$(cat "/proc/$pid/comm")" = sharebrokerhold ]
	"$SHARECTL" stop >/dev/null
	wait_dead "$BROKER_PID"
	wait_dead "$pid"              # nothing covered: it exits at once
	[ ! -e "$STATE/holder.pid" ]
	broker_start
	host mount -t tmpfs TOP "$S/a"
	read -r pid _ <"$STATE/holder.pid"
	"$SHARECTL" stop >/dev/null
	wait_dead "$BROKER_PID"
	sleep 0.2
	[ "$(cat "/proc/$pid/comm")" = sharebrokerhold ]   # LOW is covered
	broker_start
	wait_dead "$pid"              # the new broker ended it
	host umount "$S/a"
	[ "$(call_result)" = 0 ]
	host umount "$S/a"            # LOW, reached through the old holder
	[ "$(call_result)" = 0 ]
	! is_mountpoint "$S/a"
}
