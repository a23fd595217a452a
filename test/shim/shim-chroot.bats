#!/usr/bin/env bats
# chroot(2) is the caller's own: the shim performs the real chroot, then
# tells the broker the new root with a CHROOT notice.  A failed chroot
# sends nothing; a notice nobody hears changes nothing.

load helpers

setup() {
	shim_setup
	MARK=/libshare-marker.${T##*.}    # in the new root only
	mkdir -p "$T/root"
	touch "$T/root$MARK"
}

teardown() {
	shim_teardown
}

@test "chroot happens, then the broker hears CHROOT" {
	start_broker
	run shim "$CALL" access "$MARK" chroot "$T/root" access "$MARK"
	expect_output "access: ENOENT" "chroot: ok" "access: ok"
	expect_log "CHROOT 0x0 - - - -"
}

@test "syscall(SYS_chroot) as well" {
	start_broker
	run shim "$CALL" sys-chroot "$T/root" access "$MARK"
	expect_output "sys-chroot: ok" "access: ok"
	expect_log "CHROOT 0x0 - - - -"
}

@test "a failing chroot returns the kernel's errno and sends nothing" {
	start_broker
	run shim "$CALL" chroot "$T/missing" sys-chroot "$T/root$MARK"
	expect_output "chroot: ENOENT" "sys-chroot: ENOTDIR"
	expect_log
}

@test "without a broker chroot still succeeds, errno kept" {
	run shim "$CALL" chroot "$T/root" access "$MARK"
	expect_output "chroot: ok" "access: ok"
}
