#!/usr/bin/env bats
# A filesystem whose server never answers (a FUSE mount that never reads
# its /dev/fuse: fusehang) delays only the requests that need it.  Every
# lookup in it blocks, natively too; the broker looks such names up in a
# thread of its own and sets the request aside (slow.c), so other callers,
# other jails' mounts and mount-table reads, and sharectl, go on.  When the
# server dies, the waiting request ends as natively: ENOTCONN.

load ../lib/broker

FUSEHANG=$(libshare_find test/broker/fusehang)

setup() {
	broker_setup
	[ -e /dev/fuse ] || skip "no /dev/fuse on this machine"
	mkdir -p "$S/fuse" "$S/y" "$S/other" "$J/tmp"
	background "$FUSEHANG" "$S/fuse"
	HANG=$BG
	HANG_OUT=$BATS_TEST_TMPDIR/bg.$((${#BG_PIDS[@]} - 1))
	wait_line "$HANG_OUT" ready
	is_mountpoint "$S/fuse"    # made behind the broker's back
}

teardown() {
	broker_teardown
}

# The bind that needs the stalled filesystem, waiting in the background.
start_waiting_bind() {
	background env LIBSHARE_TIMEOUT=${1:-60} LD_PRELOAD="$SHIM" \
		"$CALLER" mount "$S/fuse/x" "$S/y" none 4096
	WAITING=$BG
	WAITING_OUT=$BATS_TEST_TMPDIR/bg.$((${#BG_PIDS[@]} - 1))
	sleep 0.5
}

# Everything else still answers, each within 10 s (a stalled broker would
# hold them all for good; the shim gives up on it after LIBSHARE_TIMEOUT).
assert_others_served() {
	local LIBSHARE_TIMEOUT=10
	export LIBSHARE_TIMEOUT
	run timeout 10 "$SHARECTL" status
	[ "$status" -eq 0 ]
	run timeout 10 "$SHARECTL" tree
	[ "$status" -eq 0 ]
	run env LD_PRELOAD="$SHIM" "$CALLER" mount none "$S/other" tmpfs 0
	[ "$output" = "mount $S/other = 0" ]
	run env LD_PRELOAD="$SHIM" "$CALLER" umount "$S/other" 0
	[ "$output" = "umount $S/other = 0" ]
	run jail mount -t tmpfs jt /tmp
	[ "$status" -eq 0 ]
	run jail findmnt -rn -o TARGET
	[ "$status" -eq 0 ]
	[[ $output == *"/tmp"* ]]
	run jail umount /tmp
	[ "$status" -eq 0 ]
}

@test "a stalled FUSE mount, made behind the broker's back, stalls no other caller" {
	start_waiting_bind
	assert_others_served
	kill -0 "$WAITING"         # it waits, as it would on Linux
	! is_mountpoint "$S/y"
	grep -q "ready" "$HANG_OUT"
	kill -KILL "$HANG"         # the server dies: the connection is aborted
	for _ in $(seq 100); do
		kill -0 "$WAITING" 2>/dev/null || break
		sleep 0.1
	done
	! kill -0 "$WAITING" 2>/dev/null
	[ "$(cat "$WAITING_OUT")" = "mount $S/y = ENOTCONN" ]
	# the kernel's own answer to that lookup now
	run native stat "$S/fuse/x"
	[[ $output == *"Transport endpoint is not connected"* ]]
	! is_mountpoint "$S/y"
	assert_broker_serves
}

@test "a caller that gives up on a stalled filesystem: ETIMEDOUT, nothing done, a line in the log" {
	start_waiting_bind 1
	sleep 1
	wait "$WAITING" || true
	[ "$(cat "$WAITING_OUT")" = "mount $S/y = ETIMEDOUT" ]
	assert_others_served       # the broker noticed the hang-up meanwhile
	grep -q "gave up waiting for a stalled filesystem, or died: nothing done" \
		"$STATE/sharebrokerd.log"
	kill -KILL "$HANG"
	assert_broker_serves
	! is_mountpoint "$S/y"
}

@test "the stalled mount can be detached through the broker while a request waits on it" {
	start_waiting_bind
	same_as_kernel host umount -l "$S/fuse"
	! is_mountpoint "$S/fuse"
	assert_others_served
	kill -KILL "$HANG"
	for _ in $(seq 100); do
		kill -0 "$WAITING" 2>/dev/null || break
		sleep 0.1
	done
	# Served again from its start once the lookup ended, the request walks
	# the table as it is then: $S/fuse is a plain directory again, with no
	# x.  (Linux ends the lookup in flight with ENOTCONN: docs/design.md,
	# stalled filesystems.)
	[ "$(cat "$WAITING_OUT")" = "mount $S/y = ENOENT" ]
	assert_broker_serves
}

@test "a request waiting on another serving thread than the main one: set aside all the same, ended as natively" {
	broker_restart --threads 2     # imports the stalled mount: no lookup
	local call keep
	call=$(libshare_find test/shim/call)
	# the first connection, kept, is the main thread's: the next goes to
	# the other (door/loop.c)
	background env LD_PRELOAD="$SHIM" "$call" umount nowhere wait "$S/go"
	keep=$BATS_TEST_TMPDIR/bg.$((${#BG_PIDS[@]} - 1))
	wait_line "$keep" ENOENT
	start_waiting_bind
	assert_others_served
	kill -0 "$WAITING"
	! is_mountpoint "$S/y"
	kill -KILL "$HANG"
	for _ in $(seq 100); do
		kill -0 "$WAITING" 2>/dev/null || break
		sleep 0.1
	done
	[ "$(cat "$WAITING_OUT")" = "mount $S/y = ENOTCONN" ]
	touch "$S/go"
	assert_broker_serves
}
