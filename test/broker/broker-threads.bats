#!/usr/bin/env bats
# Connections served from several threads (daemon/broker/door/loop.c):
# each connection belongs to one thread, handed to it by the main thread
# at the accept (the one with the fewest first), and its requests are
# served in order; deciding and carrying out a request takes the graph's
# lock.  Nothing a caller sees may depend on which thread serves it: many
# processes at once each get their own answers, a stop or a request
# waiting on a stalled filesystem works from any thread, and the broker
# ends whole.

load ../lib/broker

setup() {
	broker_setup
	CALL=$(libshare_find test/shim/call)
	mkdir -p "$S/keep" "$S/y0" "$S/y1" "$S/y2" "$S/y3" "$S/y4" "$S/y5"
	cd "$S"
}

teardown() {
	broker_teardown
}

# The broker's serving threads but the main one, by their names.
serving() {
	grep -l '^serving-' /proc/"$BROKER_PID"/task/*/comm 2>/dev/null | wc -l
}

# A client that keeps its connection (on the main thread when it is the
# first) until $S/go exists; the next connection goes to another thread.
keep_one() {
	background env LD_PRELOAD="$SHIM" "$CALL" umount nowhere wait "$S/go"
	KEEPER=$BG
	wait_line "$BATS_TEST_TMPDIR/bg.$((${#BG_PIDS[@]} - 1))" ENOENT
}

@test "--threads N: N threads serve, one of them the main thread; 1 is the one loop of old" {
	broker_restart --threads 3
	[ "$(serving)" -eq 2 ]
	broker_restart --threads 1
	[ "$(serving)" -eq 0 ]
	run shimmed "$CALLER" mount none y0 tmpfs 0 umount y0 0
	[ "$output" = "$(printf 'mount y0 = 0\numount y0 = 0')" ]
	# by default one per processor, at most 4
	broker_restart
	local cpus=$(nproc)
	((cpus > 4)) && cpus=4
	[ "$(serving)" -eq $((cpus - 1)) ]
}

@test "six processes at once on four threads: each answer its own, the table as it was" {
	broker_restart --threads 4
	local before i
	before=$(sandbox_lines)
	rmdir y3 y4 y5
	for i in 0 1 2 3 4 5; do
		background env LD_PRELOAD="$SHIM" "$CALLER" --repeat 30 \
			mount none "y$i" tmpfs 0 umount "y$i" 0
	done
	for p in "${BG_PIDS[@]}"; do
		wait "$p"
	done
	for i in 0 1 2; do
		[ "$(grep -c "^mount y$i = 0$" "$BATS_TEST_TMPDIR/bg.$i")" -eq 30 ]
		[ "$(grep -c "^umount y$i = 0$" "$BATS_TEST_TMPDIR/bg.$i")" -eq 30 ]
		[ "$(wc -l <"$BATS_TEST_TMPDIR/bg.$i")" -eq 60 ]
	done
	for i in 3 4 5; do
		[ "$(grep -c "^mount y$i = ENOENT$" "$BATS_TEST_TMPDIR/bg.$i")" -eq 30 ]
		[ "$(grep -c "^umount y$i = ENOENT$" "$BATS_TEST_TMPDIR/bg.$i")" -eq 30 ]
	done
	[ "$(sandbox_lines)" = "$before" ]
	assert_count_agrees
}

@test "a stop served by another thread than the main one ends the broker" {
	broker_restart --threads 2
	keep_one
	run "$SHARECTL" stop          # on the other thread: the keeper has the main one
	[ "$status" -eq 0 ]
	wait_gone "$BROKER_PID" 5
	grep -q "stopped: every mount stays where it is" "$STATE/sharebrokerd.log"
	touch "$S/go"
	local rc=0
	wait "$KEEPER" || rc=$?        # its connection closed under it: no hang
	[ "$rc" -eq 2 ]                # its last call's answer, ENOENT
}

@test "a connection's requests on another thread: mounts and propagation as on the main one" {
	broker_restart --threads 2
	keep_one
	mkdir y0/sub
	run shimmed "$CALLER" mount "$S/y0" "$S/y0" none 4096 \
		mount none "$S/y0" none 1048576 mount "$S/y0" "$S/y1" none 4096 \
		mount none "$S/y0/sub" tmpfs 0
	[ "$output" = "$(printf 'mount %s = 0\n' "$S/y0" "$S/y0" "$S/y1" "$S/y0/sub")" ]
	is_mountpoint "$S/y1/sub"      # received: y1 is y0's peer
	run shimmed findmnt -rn -o TARGET,PROPAGATION
	[[ $output == *"$S/y1 shared"* ]]
	[[ $output == *"$S/y1/sub shared"* ]]
	touch "$S/go"
}
