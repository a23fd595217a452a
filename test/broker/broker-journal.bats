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
	grep -q '^libshare-state 3$' "$STATE/state"
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

# The lines set ("+ ...") by the journal's records since its last
# compaction.
set_lines() { grep -c '^+ ' "$STATE/journal" || true; }

@test "a change journals the lines of the mounts it changed, not the lines of their ring of 200 peers" {
	mkdir -p "$S/p"
	for i in $(seq 200); do
		mkdir "$S/p/$i"
		host mount --bind "$S/a" "$S/p/$i"
	done
	mkdir "$S/p/new"
	broker_restart             # a snapshot at start: the journal empty
	[ "$(size "$STATE/journal")" -eq 0 ]
	# joins the ring: its line, and those of the peers around it
	host mount --bind "$S/a" "$S/p/new"
	[ "$(set_lines)" -le 3 ]
	# leaves the ring for a slave list: its line, its neighbours' in the
	# ring, its master's
	host mount --make-slave "$S/p/100"
	[ "$(set_lines)" -le 8 ]
	host umount "$S/p/7"
	[ "$(set_lines)" -le 11 ]
	[ "$(size "$STATE/journal")" -lt 4096 ]
	broker_restart
	mkdir -p "$S/a/y/z"
	host mount -t tmpfs Z "$S/a/y/z"
	is_mountpoint "$S/b/y/z"
	is_mountpoint "$S/p/new/y/z"
	is_mountpoint "$S/p/100/y/z"
	is_mountpoint "$S/p/200/y/z"
	! is_mountpoint "$S/p/7/y/z"
}

# A ring and slave lists made by many records, each with a few lines:
# their order, which the order of propagated copies shows, comes back
# after a restart as the kernel has it.
rings() {
	local w=$S/w p
	mkdir -p "$w"
	host mount -t tmpfs W "$w"
	mkdir "$w/a" "$w/p1" "$w/p2" "$w/p3" "$w/p4" "$w/p5" "$w/s2" "$w/s3"
	host mount -t tmpfs A "$w/a"
	host mount --make-shared "$w/a"
	mkdir "$w/a/x"
	for p in p1 p2 p3 p4; do
		host mount --bind "$w/a" "$w/$p"
	done
	host mount --make-slave "$w/p2"
	host mount --bind "$w/p1" "$w/p5"
	host mount --make-private "$w/p3"
	host mount --bind "$w/p2" "$w/s2"
	host mount --make-slave "$w/p4"
	host mount --make-shared "$w/p4"
	host mount --bind "$w/p4" "$w/s3"
	host mount --make-slave "$w/s3"
}

# The mount points of the copies of T, in the kernel's table order.
copies_of_t() {
	awk -v s="$S" '{ for (i = 7; $i != "-"; i++) ; if ($(i + 2) == "T")
		print substr($5, length(s) + 1) }' /proc/self/mountinfo
}

@test "after a restart, rings and slave lists written line by line propagate in the kernel's order" {
	kernel=$(native bash -c "$(declare -f rings copies_of_t)
		S='$S'; host() { \"\$@\"; }
		rings && mount -t tmpfs T '$S/w/a/x' && copies_of_t")
	rings
	broker_restart
	host mount -t tmpfs T "$S/w/a/x"
	[ "$(copies_of_t | wc -l)" -ge 5 ]
	if [ "$(copies_of_t)" != "$kernel" ]; then
		diff <(echo "$kernel") <(copies_of_t) >&2
		return 1
	fi
}

@test "a state of format 2 (trees whole, in pre-order, no links) is read in its line order and written again as format 3" {
	kernel=$(native bash -c "$(declare -f rings copies_of_t)
		S='$S'; host() { \"\$@\"; }
		rings && mount -t tmpfs T '$S/w/a/x' && copies_of_t")
	rings
	broker_restart             # a whole save: each tree in pre-order
	broker_stop
	[ ! -s "$STATE/journal" ]
	sed -i -E '1s/^libshare-state 3$/libshare-state 2/
		/^[0-9]/s/ [0-9]+ [0-9]+$//' "$STATE/state"
	grep -qx 'libshare-state 2' "$STATE/state"
	awk '/^[0-9]/ { n++; if (NF != 7) exit 1 } END { exit n < 5 }' \
		"$STATE/state"
	broker_start
	grep -qx 'libshare-state 3' "$STATE/state"
	host mount -t tmpfs T "$S/w/a/x"
	if [ "$(copies_of_t)" != "$kernel" ]; then
		diff <(echo "$kernel") <(copies_of_t) >&2
		return 1
	fi
}
