#!/usr/bin/env bats
# Programs that call mount(2) and friends themselves, every way they can:
# the libc wrappers, syscall(), from many threads, across fork and vfork,
# with every descriptor closed.  Each call is answered as the fake broker
# decides from the target's name, and a successful call leaves errno as it
# was ("ok" from call means exactly that: see call.c).

load helpers

setup() {
	shim_setup
	start_broker
}

teardown() {
	shim_teardown
}

@test "mount, umount2 and umount through libc" {
	run shim "$CALL" mount src "$T/OK" ext4 0x8001 opt=1,b \
		umount2 "$T/OK" 0xa umount "$T/EPERM"
	expect_output "mount: ok" "umount2: ok" "umount: EPERM"
	expect_log "MOUNT 0x8001 src $T/OK ext4 opt=1,b" \
		"UMOUNT 0xa - $T/OK - -" "UMOUNT 0x0 - $T/EPERM - -"
}

@test "NULL source, type and data travel as absent" {
	run shim "$CALL" mount - "$T/OK" - 0x4000 -
	expect_output "mount: ok"
	expect_log "MOUNT 0x4000 - $T/OK - -"
}

@test "syscall(SYS_mount), SYS_umount2 and SYS_pivot_root" {
	run shim "$CALL" sys-mount none "$T/OK" tmpfs 0x20 mode=700 \
		sys-umount2 "$T/ENOENT" 2 sys-pivot_root "$T/new" "$T/new/old"
	expect_output "sys-mount: ok" "sys-umount2: ENOENT" "sys-pivot_root: ok"
	expect_log "MOUNT 0x20 none $T/OK tmpfs mode=700" \
		"UMOUNT 0x2 - $T/ENOENT - -" \
		"PIVOT_ROOT 0x0 $T/new $T/new/old - -"
}

@test "errno: kept across a success, the broker's after a failure" {
	run shim "$CALL" mount - "$T/OK" - 0 - mount - "$T/EBUSY" - 0 - \
		sys-umount2 "$T/OK" 0
	expect_output "mount: ok" "mount: EBUSY" "sys-umount2: ok"
}

@test "8 threads x 50 mounts each get their own answer" {
	run shim "$THREADS" "$T/th"
	[ "$status" -eq 0 ]
	expect_output "400 calls, 0 wrong"
	[ "$(grep -c "^MOUNT 0x1000 src $T/th/" "$LOG")" -eq 400 ]
	[ "$(sort -u "$LOG" | wc -l)" -eq 400 ]
}

@test "parent and child of fork both mount" {
	run shim "$CALL" fork mount - "$T/OK" - 0 -
	expect_output "child mount: ok" "parent mount: ok"
	expect_log "MOUNT 0x0 - $T/OK - -" "MOUNT 0x0 - $T/OK - -"
}

@test "a vfork child mounts, then _exits" {
	run shim "$CALL" vfork mount - "$T/OK" - 0 - \
		vfork mount - "$T/EPERM" - 0 - mount - "$T/ENOENT" - 0 -
	expect_output "vfork mount: ok" "vfork mount: EPERM" "mount: ENOENT"
	expect_log "MOUNT 0x0 - $T/OK - -" "MOUNT 0x0 - $T/EPERM - -" \
		"MOUNT 0x0 - $T/ENOENT - -"
}

@test "a program that closed every descriptor still mounts" {
	run shim "$CALL" closefds mount - "$T/OK" - 0 -
	[ "$status" -eq 0 ]
	run shim "$CALL" closefds mount - "$T/ENOENT" - 0 -
	[ "$status" -eq 2 ]            # ENOENT, from the broker
	expect_log "MOUNT 0x0 - $T/OK - -" "MOUNT 0x0 - $T/ENOENT - -"
}
