#!/usr/bin/env bats
# Mounts moved behind the broker's back (a static binary, a tool run
# without the shim) are seen at their new place before the next request
# is served, with their propagation as a legacy kernel leaves it: a move
# propagates nothing.  Linux, propagating itself, does the same here: the
# move of a received mount's original takes nothing from the slaves.

load ../lib/broker

setup() {
	broker_setup
	mkdir -p "$S/floppy" "$J/floppy" "$S/other"
	host mount --bind "$S/floppy" "$S/floppy"
	host mount --make-shared "$S/floppy"
	host mount --bind "$S/floppy" "$J/floppy"
	host mount --make-slave "$J/floppy"
	mkdir "$S/floppy/a"
	host mount -t tmpfs disk "$S/floppy/a"
	[ "$(call_result)" = 0 ]
	grep -q " $J/floppy/a " /proc/self/mountinfo   # received by the jail
}

teardown() {
	broker_teardown
}

@test "a mount moved without the broker, then unmounted through it: the jail's copy stays" {
	mount --move "$S/floppy/a" "$S/other"       # behind the broker's back
	host umount "$S/other"
	[ "$(call_result)" = 0 ]
	! grep -q " $S/other " /proc/self/mountinfo
	grep -q " $J/floppy/a " /proc/self/mountinfo
	grep -q "moved behind the broker's back to $S/other" \
		"$STATE/sharebrokerd.log"
}

@test "a mount moved without the broker is where sharectl tree shows it, and keeps receiving" {
	mount --move "$S/floppy" "$S/other"
	run "$SHARECTL" tree
	[[ $output == *"$S/other "* ]]
	[[ $output != *"$S/floppy "* ]]
	# still the master of the jail's copy: a new mount there reaches it
	mkdir "$S/other/b"
	host mount -t tmpfs disk2 "$S/other/b"
	[ "$(call_result)" = 0 ]
	grep -q " $J/floppy/b " /proc/self/mountinfo
}
