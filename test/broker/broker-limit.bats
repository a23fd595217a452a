#!/usr/bin/env bats
# The mount limit (`sharebrokerd --max-mounts N`, standing for the kernel's
# fs.mount-max) through the broker.
#
# The kernel's rule (semantics.md 3.2 step 1 and 9; S14): the mounts an
# operation attaches, its copies included (every receiver counted, all in
# the one namespace that the host and its chroot jails share), plus the
# mounts already there may not exceed the limit: reaching it is allowed,
# passing it is ENOSPC ("No space left on device" in mount(8)'s message)
# and nothing of the operation happens.  A move is not counted.
# fs.mount-max is global, so the kernel is not run with a low limit here:
# the expected answers are that rule's.  Each test starts the broker with
# N = the mounts it imports + a few (the graph counts the whole namespace,
# as the kernel does).
#
# Asserted: mounts succeed up to the limit and the next one fails ENOSPC,
# through mount(8) and through mount(2) (caller); the failing call changes
# nothing (the kernel's table is the same before and after); an umount
# makes room again; a move at the limit succeeds; a mount whose copies
# (a peer in the jail) would pass the limit fails as a whole, none of the
# copies made, while one that fits without copies succeeds; an rbind of a
# tree that does not fit fails as a whole.

load ../lib/broker

# Restarts the broker with room for $1 more mounts than the table has
# when it starts: counted once the old broker is gone, with whatever of
# its own went with it (a count taken before saw one mount more, under
# load, and the limit came one too late).
with_room() {
	broker_stop
	broker_start --max-mounts $(($(wc -l </proc/self/mountinfo) + $1))
}

setup() {
	broker_setup
	mkdir -p "$S/l1" "$S/l2" "$S/l3" "$S/m"
}

teardown() { broker_teardown; }

@test "mount(8) succeeds up to the limit, then fails ENOSPC and changes nothing" {
	with_room 2
	host mount -t tmpfs L1 "$S/l1"
	[ "$(call_result)" = 0 ]
	host mount -t tmpfs L2 "$S/l2"
	[ "$(call_result)" = 0 ]
	# the limit is reached, not passed
	[[ $("$SHARECTL" status) == "sharebrokerd $BROKER_PID: $(wc -l </proc/self/mountinfo) mounts,"* ]]
	snapshot before
	run host mount -t tmpfs L3 "$S/l3"
	[ "$status" -eq 32 ]
	[[ $output == *"No space left on device"* ]]
	[ "$(call_result)" = ENOSPC ]
	assert_table_unchanged before
	# a bind counts as much as a new mount
	run host mount --bind "$S/l1" "$S/l3"
	[ "$status" -eq 32 ]
	[ "$(call_result)" = ENOSPC ]
	assert_table_unchanged before
	assert_count_agrees
}

@test "mount(2) returns ENOSPC at the limit; an umount makes room; a move is not counted" {
	with_room 2
	run shimmed "$CALLER" mount - "$S/l1" tmpfs 0 mount - "$S/l2" tmpfs 0 \
		mount - "$S/l3" tmpfs 0
	[ "$output" = "$(printf '%s\n' "mount $S/l1 = 0" "mount $S/l2 = 0" \
		"mount $S/l3 = ENOSPC")" ]
	[ -z "$(mountpoints_of none | grep -x "$S/l3")" ]
	run shimmed "$CALLER" mount "$S/l1" "$S/m" - move
	[ "$output" = "mount $S/m = 0" ]
	is_mountpoint "$S/m"
	run is_mountpoint "$S/l1"
	[ "$status" -ne 0 ]
	run shimmed "$CALLER" umount "$S/l2" 0 mount - "$S/l3" tmpfs 0 \
		mount - "$S/l2" tmpfs 0
	[ "$output" = "$(printf '%s\n' "umount $S/l2 = 0" "mount $S/l3 = 0" \
		"mount $S/l2 = ENOSPC")" ]
	assert_count_agrees
}

@test "a mount whose copy in the jail would pass the limit fails as a whole" {
	mkdir -p "$S/A" "$J/a" "$S/free"
	host mount -t tmpfs A "$S/A"
	host mount --make-shared "$S/A"
	host mount --bind "$S/A" "$J/a"
	[ "$(call_result)" = 0 ]
	mkdir "$S/A/sub"
	with_room 1
	# the state file kept the peers: a mount on $S/A needs two places
	snapshot before
	run host mount -t tmpfs SUB "$S/A/sub"
	[ "$status" -eq 32 ]
	[[ $output == *"No space left on device"* ]]
	[ "$(call_result)" = ENOSPC ]
	assert_table_unchanged before
	[ -z "$(mountpoints_of SUB)" ]
	# the same from inside the jail
	run jail mount -t tmpfs SUB /a/sub
	[ "$(call_result)" = ENOSPC ]
	assert_table_unchanged before
	# one that has no copies fits in the one place left
	host mount -t tmpfs FREE "$S/free"
	[ "$(call_result)" = 0 ]
	[ "$(mountpoints_of FREE)" = "$S/free" ]
	assert_count_agrees
}

@test "with room for the mount and its copy, both are made" {
	mkdir -p "$S/A" "$J/a"
	host mount -t tmpfs A "$S/A"
	host mount --make-shared "$S/A"
	host mount --bind "$S/A" "$J/a"
	mkdir "$S/A/sub"
	with_room 2
	host mount -t tmpfs SUB "$S/A/sub"
	[ "$(call_result)" = 0 ]
	[ "$(mountpoints_of SUB)" = "$S/A/sub"$'\n'"$J/a/sub" ]
	assert_count_agrees
}

@test "an rbind of a tree that does not fit fails as a whole" {
	mkdir -p "$S/T"
	host mount -t tmpfs T "$S/T"
	mkdir "$S/T/in"
	host mount -t tmpfs TIN "$S/T/in"
	[ "$(call_result)" = 0 ]
	with_room 1
	snapshot before
	run host mount --rbind "$S/T" "$S/m"
	[ "$status" -eq 32 ]
	[ "$(call_result)" = ENOSPC ]
	assert_table_unchanged before
	# the plain bind of its top fits
	host mount --bind "$S/T" "$S/m"
	[ "$(call_result)" = 0 ]
	[ "$(mountpoints_of T)" = "$S/T"$'\n'"$S/m" ]
	[ "$(mountpoints_of TIN)" = "$S/T/in" ]
	assert_count_agrees
}
