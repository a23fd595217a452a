#!/usr/bin/env bats
# util-linux mount(8) and umount(8), with the shim preloaded, reach the
# broker with the arguments they gave mount(2) and umount2(2), and the
# broker's errno is what they report.  The fake broker mounts nothing, so
# nothing must be mounted either: the shim forwards instead of calling the
# kernel.

load helpers

setup() {
	shim_setup
	mkdir -p "$T/a" "$T/x/OK" "$T/x/EPERM" "$T/x/ENOENT"
	start_broker
}

teardown() {
	shim_teardown
}

@test "mount --bind reaches the broker as MS_BIND, and only the broker" {
	run shim mount --bind "$T/a" "$T/x/OK"
	[ "$status" -eq 0 ]
	expect_log "MOUNT 0x1000 $T/a $T/x/OK none -"
	run mountpoint -q "$T/x/OK"
	[ "$status" -ne 0 ]
}

@test "mount -t tmpfs sends source, type and the option string" {
	run shim mount -t tmpfs -o size=1m,mode=755 tmpfs "$T/x/OK"
	[ "$status" -eq 0 ]
	expect_log "MOUNT 0x0 tmpfs $T/x/OK tmpfs size=1m,mode=755"
}

@test "propagation changes and bind remounts keep their flags" {
	shim mount --make-rshared "$T/x/OK"
	shim mount -o remount,ro,bind "$T/x/OK"
	expect_log "MOUNT 0x104000 none $T/x/OK - -" \
		"MOUNT 0x1021 none $T/x/OK none -"
}

@test "umount and umount -l send the target and the flags" {
	shim umount "$T/x/OK"
	shim umount -l "$T/x/OK"
	expect_log "UMOUNT 0x0 - $T/x/OK - -" "UMOUNT 0x2 - $T/x/OK - -"
}

@test "the broker's EPERM is mount's 'permission denied'" {
	run shim mount --bind "$T/a" "$T/x/EPERM"
	[ "$status" -eq 32 ]
	[[ "$output" == *"$T/x/EPERM: permission denied"* ]]
	expect_log "MOUNT 0x1000 $T/a $T/x/EPERM none -"
}

@test "the broker's ENOENT is mount's 'No such file or directory'" {
	run shim mount --bind "$T/a" "$T/x/ENOENT"
	[ "$status" -eq 32 ]
	[[ "$output" == *"No such file or directory"* ]]
}

@test "the broker's EPERM is umount's 'must be superuser'" {
	run shim umount "$T/x/EPERM"
	[ "$status" -eq 32 ]
	[[ "$output" == *"must be superuser to unmount"* ]]
	expect_log "UMOUNT 0x0 - $T/x/EPERM - -"
}

@test "a broker on a filesystem path is reached as well" {
	SOCK=$T/broker.sock
	start_broker
	run shim mount --bind "$T/a" "$T/x/OK"
	[ "$status" -eq 0 ]
	expect_log "MOUNT 0x1000 $T/a $T/x/OK none -"
}
