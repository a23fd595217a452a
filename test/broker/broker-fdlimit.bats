#!/usr/bin/env bats
# The broker holds a descriptor per mount.  It raises RLIMIT_NOFILE as far
# as it may; where the limit still caps it, it says so at start, leaves the
# mounts beyond it out of reach, and keeps descriptors to serve requests:
# it never dies on its socket.

load ../lib/broker

setup() {
	broker_setup
}

teardown() {
	broker_teardown
}

@test "300 mounts under a limit of 256 descriptors: it says so, starts, and serves" {
	local i
	broker_stop
	for ((i = 0; i < 300; i++)); do
		mkdir -p "$S/m/$i"
		mount -t tmpfs "m$i" "$S/m/$i"
	done
	mkdir "$S/new"
	# without CAP_SYS_RESOURCE: with it, the broker raises the hard limit
	(legacy() { setpriv --bounding-set -sys_resource "$LEGACY_SIM" -- "$@"; }
	 ulimit -n 256 && broker_start) 2>"$BATS_TEST_TMPDIR/start.err"
	BROKER_PID=$("$SHARECTL" status | sed -n 's/^sharebrokerd \([0-9]*\):.*/\1/p')
	[ -n "$BROKER_PID" ]
	grep -q "the descriptor limit (256) is reached" "$BATS_TEST_TMPDIR/start.err"
	[ "$(grep -c 'descriptor limit' "$BATS_TEST_TMPDIR/start.err")" -eq 1 ]
	assert_count_agrees
	host mount -t tmpfs new "$S/new"
	[ "$(call_result)" = 0 ]
	host umount "$S/new"
	[ "$(call_result)" = 0 ]
	assert_broker_serves
	# the broker's descriptors stay under its limit
	[ "$(ls "/proc/$BROKER_PID/fd" | wc -l)" -lt 256 ]
}
