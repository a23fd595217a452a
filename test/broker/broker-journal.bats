#!/usr/bin/env bats
# The state as a snapshot and a journal (issue 10 item 7, docs/design.md
# "Persistence"): a request appends what it changed instead of writing
# the whole state again.  The journal is compacted into the snapshot, so
# it stays bounded; a record cut short by a crash, or one whose checksum
# does not match, is ignored and cut off, and the broker starts from
# what is whole.  (Kills in the middle of each write: fault-diff.sh.)

load ../lib/broker

setup() {
	broker_setup
	mkdir -p "$S/a" "$S/b" "$S/src"
	host mount -t tmpfs A "$S/a"
	host mount --make-shared "$S/a"
	host mount --bind "$S/a" "$S/b"
	mkdir -p "$S/a/x" "$S/a/y"
}
teardown() { broker_teardown; }

size() { stat -c %s "$1"; }

# the propagation of a and of what is mounted on a/y still works
assert_propagates() {
	mkdir -p "$S/a/y/z"
	host mount -t tmpfs Z "$S/a/y/z"
	is_mountpoint "$S/b/y/z"
	host umount "$S/a/y/z"
	! is_mountpoint "$S/b/y/z"
}

@test "the journal is compacted: after 400 propagating pairs it stays bounded, and a restart loses nothing" {
	shimmed "$CALLER" --repeat 400 mount "$S/src" "$S/a/x" - 4096 \
		umount "$S/a/x" 2 >"$BATS_TEST_TMPDIR/pairs.out"
	[ "$(grep -c ' = 0$' "$BATS_TEST_TMPDIR/pairs.out")" -eq 800 ]
	# 800 records of a few hundred bytes each were written: the bound
	# is 64 KiB (and twice the snapshot) plus the record that crossed it
	[ "$(size "$STATE/journal")" -lt $((64 * 1024 + 4096)) ]
	grep -q '^libshare-state 2$' "$STATE/state"
	host mount -t tmpfs Y "$S/a/y"
	is_mountpoint "$S/b/y"
	broker_restart
	assert_propagates
}

@test "a record cut short at the journal's end is ignored and cut off" {
	host mount -t tmpfs Y "$S/a/y"
	whole=$(size "$STATE/journal")
	[ "$whole" -gt 0 ]
	broker_stop
	# a record whose length runs past the end: a write a crash cut
	printf '@ 7 900 12345678\n+ 1 99 0:1 5 0 0 / /x' >>"$STATE/journal"
	broker_start 2>"$BATS_TEST_TMPDIR/start.err"
	grep -q 'journal: a record cut short' "$BATS_TEST_TMPDIR/start.err"
	# cut off, then written whole into the snapshot at start
	[ "$(size "$STATE/journal")" -le "$whole" ]
	! grep -q '^@ 7 ' "$STATE/journal"
	assert_propagates
}

@test "a record whose checksum does not match is ignored and cut off" {
	host mount -t tmpfs Y "$S/a/y"
	broker_stop
	# whole in length, wrong in sum: a disk's or a crash's garbage
	body='- 1
'
	printf '@ 7 %d 00000000\n%s' "${#body}" "$body" >>"$STATE/journal"
	broker_start 2>"$BATS_TEST_TMPDIR/start.err"
	grep -q 'journal: a record cut short' "$BATS_TEST_TMPDIR/start.err"
	assert_propagates
}
