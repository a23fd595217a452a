#!/usr/bin/env bats
# A state that cannot be written is an error, not a success (issue 9 item
# 6, what must be true 5).  Before: with the state directory full, a mount
# returned 0 and propagated but was not saved, and its propagation was gone
# after a restart.  Now the request's intent is written before it runs and
# the state after: a propagating mount, bind or umount on a full state
# directory returns ENOSPC and leaves the kernel's table and the graph as
# they were; once there is room again it works, and survives a restart.
# (Kills in the middle of a plan: test/diff/fault-diff.sh.)

load ../lib/broker

setup() {
	broker_setup
	# a small filesystem of its own for the state, filled by the tests
	broker_stop
	mount -t tmpfs -o size=256k tiny "$STATE"
	broker_start
	mkdir -p "$S/a" "$S/b" "$S/c"
	host mount -t tmpfs A "$S/a"
	host mount --make-shared "$S/a"
	host mount --bind "$S/a" "$S/b"
	host mount --bind "$S/a" "$S/c"
	host mount --make-slave "$S/c"
	mkdir -p "$S/a/x" "$S/a/y" "$S/d"
}
teardown() { broker_teardown; }

# The broker restarts first: a record of the intent is written over the
# last (intent.c), so the file keeps its room between plans, and only a
# start empties it; the next request's record then needs room again.
fill() {
	broker_restart
	dd if=/dev/zero of="$STATE/filler" bs=4k 2>/dev/null || true
}

# The graph as processes see it: the virtual mountinfo, propagation fields
# included, of the sandbox's mounts, without the ids (a restarted broker
# numbers its mounts afresh; groups are numbered in table order anyway).
graph() {
	shimmed cat /proc/self/mountinfo |
		awk -v s="$S" 'index($5, s) == 1 { $1 = $2 = ""; print }'
}

# NAME: the kernel's table and the graph as they are now, to compare.
save_views() {
	snapshot "$1"
	graph >"$BATS_TEST_TMPDIR/graph.$1"
	grep -q shared: "$BATS_TEST_TMPDIR/graph.$1"   # the broker's, not the kernel's
}

assert_views_unchanged() {
	assert_table_unchanged "$1"
	diff -u "$BATS_TEST_TMPDIR/graph.$1" <(graph)
}

@test "a propagating mount on a full state directory fails with ENOSPC and changes nothing" {
	fill
	save_views before
	run host mount -t tmpfs X "$S/a/x"
	[ "$status" -ne 0 ]
	[ "$(call_result)" = ENOSPC ]
	assert_views_unchanged before
	! is_mountpoint "$S/b/x"
	rm "$STATE/filler"
	host mount -t tmpfs X "$S/a/x"
	is_mountpoint "$S/b/x"
	is_mountpoint "$S/c/x"
}

@test "a bind into a shared mount on a full state directory fails with ENOSPC and changes nothing" {
	fill
	save_views before
	run host mount --bind "$S/d" "$S/a/y"
	[ "$(call_result)" = ENOSPC ]
	assert_views_unchanged before
	rm "$STATE/filler"
	host mount --bind "$S/d" "$S/a/y"
	is_mountpoint "$S/c/y"
}

@test "a propagating umount on a full state directory fails with ENOSPC and changes nothing" {
	host mount -t tmpfs X "$S/a/x"
	fill
	save_views before
	run host umount "$S/b/x"
	[ "$(call_result)" = ENOSPC ]
	assert_views_unchanged before
	rm "$STATE/filler"
	host umount "$S/b/x"
	! is_mountpoint "$S/a/x"
	! is_mountpoint "$S/c/x"
}

@test "a mount that succeeded once the state directory has room again keeps its propagation across a restart" {
	fill
	run host mount -t tmpfs X "$S/a/x"
	[ "$(call_result)" = ENOSPC ]
	rm "$STATE/filler"
	host mount -t tmpfs X "$S/a/x"
	save_views after
	broker_restart
	assert_views_unchanged after
	mkdir -p "$S/a/x/z"
	host mount -t tmpfs Z "$S/a/x/z"
	is_mountpoint "$S/b/x/z"      # the copies still receive
	is_mountpoint "$S/c/x/z"
}

# The broker again, its saves failing on demand: LIBSHARE_FAULT=fail:K
# (intent.c) makes the K-th write after the arming fail with ENOSPC: 1 the
# intent, 2 the state once the plan ran.
faulty_broker() {
	broker_stop
	LIBSHARE_FAULT=file:$STATE/fault broker_start
}

@test "a mount whose state cannot be saved once it ran is undone, and fails with ENOSPC" {
	faulty_broker
	save_views before
	echo fail:2 >"$STATE/fault"
	run host mount -t tmpfs X "$S/a/x"
	[ "$(call_result)" = ENOSPC ]
	assert_views_unchanged before
	host mount -t tmpfs X "$S/a/x"
	is_mountpoint "$S/c/x"
}

@test "an umount whose state cannot be saved once it ran is kept, and its record is the state until a save works" {
	# e is a slave of p's group; once p goes, of p2's: a state file from
	# before the umount names p as its master
	mkdir -p "$S/p" "$S/p2" "$S/e"
	host mount -t tmpfs P "$S/p"
	host mount --make-shared "$S/p"
	host mount --bind "$S/p" "$S/p2"
	host mount --bind "$S/p" "$S/e"
	host mount --make-slave "$S/e"
	faulty_broker
	echo fail:2 >"$STATE/fault"
	host umount "$S/p"             # unmounts cannot be taken back
	[ "$(call_result)" = 0 ]
	[ -s "$STATE/intent" ]
	save_views after
	graph | grep -q " $S/e .* master:"
	broker_restart                 # the state file still lacks the umount
	assert_views_unchanged after
	[ ! -s "$STATE/intent" ]
	mkdir -p "$S/p2/y"
	host mount -t tmpfs Y "$S/p2/y"
	is_mountpoint "$S/e/y"
}
