#!/usr/bin/env bats
# A broker started on a state directory an earlier broker used (issue 13
# item 2): stopped, killed with SIGKILL, or seeded with junk (stage/N of the
# wrong kind, a mount left on stage/N and on park/N, a state file of an
# older format, an unfinished save).  The new broker sweeps or sets it
# aside, says so, and every bind works as the kernel's: a file onto a file,
# a directory onto a directory, a file onto a file inside a jail.
# Before: each directory bind left an empty stage/N, numbers start again
# after a restart, and a file bind then failed with "Is a directory".

load ../lib/broker

setup() { broker_setup; }
teardown() { broker_teardown; }

# What an earlier broker's requests leave: directory binds and umounts.
used_by_a_broker() {
	local i
	mkdir -p "$S/d" "$S/e"
	for ((i = 0; i < 5; i++)); do
		host mount --bind "$S/d" "$S/e"
		host umount "$S/e"
	done
}

# Every kind of bind, each as the kernel answers it.
binds_work() {
	touch "$S/f" "$S/g" "$J/f" "$J/g"
	mkdir -p "$S/d" "$S/e"
	echo file >"$S/f"
	same_as_kernel host mount --bind "$S/f" "$S/g"
	[ "$(cat "$S/g")" = file ]
	same_as_kernel host mount --bind "$S/d" "$S/e"
	same_as_kernel jail mount --bind /f /g
	is_mountpoint "$J/g"
}

@test "a directory bind leaves nothing in stage/" {
	used_by_a_broker
	[ -z "$(ls -A "$STATE/stage")" ]
	[ -z "$(ls -A "$STATE/park")" ]
}

@test "after a stop, a broker on the same directory binds files and directories" {
	used_by_a_broker
	broker_restart
	binds_work
}

@test "after SIGKILL, a broker on the same directory binds files and directories" {
	used_by_a_broker
	kill -KILL "$BROKER_PID"
	wait_gone "$BROKER_PID" 5
	broker_start
	binds_work
}

@test "a state directory seeded with junk is swept, and the broker says so" {
	local i
	broker_stop
	# directories where files will be staged, and the reverse
	for ((i = 1; i <= 64; i++)); do
		mkdir "$STATE/stage/$i"
	done
	rmdir "$STATE/stage/7" && mkdir -p "$STATE/stage/7/deeper"
	touch "$STATE/stage/x" "$STATE/park/2"
	# mounts a plan cut short left on its places
	mkdir -p "$STATE/park/3"
	mount -t tmpfs left-staged "$STATE/stage/9"
	mount -t tmpfs left-parked "$STATE/park/3"
	# a state file of an older format, unreadable to anyone but root, and
	# a save cut short
	printf 'libshare-state 1\n1 2 3\n' >"$STATE/state"
	chmod 000 "$STATE/state"
	mkdir "$STATE/state.new"
	broker_start 2>"$BATS_TEST_TMPDIR/start.err"
	cat "$BATS_TEST_TMPDIR/start.err"
	grep -q "stage/9: 1 mount left by an earlier broker, detached" \
		"$BATS_TEST_TMPDIR/start.err"
	grep -q "park/3: 1 mount left by an earlier broker, detached" \
		"$BATS_TEST_TMPDIR/start.err"
	grep -q "stage: 65 leftovers removed" "$BATS_TEST_TMPDIR/start.err"
	grep -q "state.new: an unfinished save, removed" "$BATS_TEST_TMPDIR/start.err"
	grep -q "state: not a state file of format 2 or 3; set aside" \
		"$BATS_TEST_TMPDIR/start.err"
	# the leftover mounts are gone from the kernel and were never imported
	[ -z "$(mounts_of left-staged)" ]
	[ -z "$(mounts_of left-parked)" ]
	assert_count_agrees
	[ -z "$(ls -A "$STATE/stage")" ]
	[ -f "$STATE/state.old" ]
	binds_work
	# the broker saves its state again, in its own format
	head -n 1 "$STATE/state" | grep -qx 'libshare-state 3'
}

@test "a state file that is a directory is set aside" {
	broker_stop
	mkdir -p "$STATE/state" "$STATE/state.old/junk"
	rm -f "$STATE/state" 2>/dev/null || true
	mkdir -p "$STATE/state/inner"
	broker_start 2>"$BATS_TEST_TMPDIR/start.err"
	grep -q "state: not a regular file; set aside" "$BATS_TEST_TMPDIR/start.err"
	[ -d "$STATE/state.old/inner" ]
	host mount --make-shared "$S"
	[ -f "$STATE/state" ]
}

@test "a second broker on a state directory in use refuses, and sweeps nothing" {
	mkdir -p "$S/d" "$S/e"
	mkdir "$STATE/stage/99"
	mount -t tmpfs in-flight "$STATE/stage/99"
	run legacy "$SHAREBROKERD" --socket "@libshare-bats-second-$$" \
		--state-dir "$STATE"
	[ "$status" -eq 1 ]
	[[ $output == *"a broker (pid $BROKER_PID) already uses this state directory"* ]]
	[ -n "$(mounts_of in-flight)" ]
	umount -l "$STATE/stage/99"   # the broker holds it now: drift
	assert_broker_serves
}
