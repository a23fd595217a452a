#!/usr/bin/env bats
# What the shim answers itself, as the kernel would, without asking the
# broker: a NULL or over-long path where the kernel fails on it before
# anything the broker knows matters.  What it cannot know travels: mount
# data up to the page the kernel copies, and pivot_root's NULL paths
# (pivot_root(2) checks privilege first).

load helpers

setup() {
	shim_setup
	start_broker
}

teardown() {
	shim_teardown
}

@test "a NULL target is EFAULT, and the broker hears nothing" {
	run shim "$CALL" mount src - tmpfs 0 - umount - umount2 - 0 \
		sys-mount src - tmpfs 0 -
	expect_output "mount: EFAULT" "umount: EFAULT" "umount2: EFAULT" \
		"sys-mount: EFAULT"
	expect_log
}

@test "umount2 checks its flags before the path, as the kernel does" {
	run shim "$CALL" umount2 - 0x10 umount2 =4096 0x10
	expect_output "umount2: EINVAL" "umount2: EINVAL"
	expect_log
}

@test "a target of PATH_MAX bytes is ENAMETOOLONG; one less travels" {
	run shim "$CALL" mount - =4096 - 0 - umount =4096 \
		sys-pivot_root /new =4096 mount - =4095 - 0 -
	expect_output "mount: ENAMETOOLONG" "umount: ENAMETOOLONG" \
		"sys-pivot_root: ENAMETOOLONG" "mount: ok"
	[ "$(wc -l < "$LOG")" -eq 1 ]
	[ "$(awk '{ print $1, length($4) }' "$LOG")" = "MOUNT 4095" ]
}

@test "a source or type of PATH_MAX bytes is EINVAL, checked before the target" {
	run shim "$CALL" mount =4096 /t - 0 - mount - /t =4096 0 - \
		mount =4096 - - 0 -
	expect_output "mount: EINVAL" "mount: EINVAL" "mount: EINVAL"
	expect_log
}

@test "mount data is sent up to the page the kernel copies" {
	run shim "$CALL" mount - "$T/OK" - 0 =5000
	expect_output "mount: ok"
	[ "$(awk '{ print length($6) }' "$LOG")" -eq 4095 ]
}

@test "pivot_root's NULL paths travel as absent" {
	run shim "$CALL" sys-pivot_root - -
	expect_output "sys-pivot_root: ok"
	expect_log "PIVOT_ROOT 0x0 - - - -"
}
