#!/usr/bin/env bats
# A broker that does not answer (stuck on a FUSE mount whose server never
# replies, or stopped) must not hang the programs that ask it: the call
# fails with ETIMEDOUT once LIBSHARE_TIMEOUT seconds have passed.

load helpers

setup() {
	shim_setup
	start_broker
}

teardown() {
	shim_teardown
}

@test "a broker that never answers: ETIMEDOUT after LIBSHARE_TIMEOUT seconds, not a hang" {
	local t0=$SECONDS
	LIBSHARE_TIMEOUT=1 run shim "$CALL" mount - "$T/SILENT" - 0 -
	expect_output "mount: ETIMEDOUT"
	[ $((SECONDS - t0)) -le 4 ]
	expect_log "MOUNT 0x0 - $T/SILENT - -"
}

@test "the next call after a timed-out one gets its answer" {
	LIBSHARE_TIMEOUT=1 run shim "$CALL" umount "$T/SILENT" \
		umount "$T/EBUSY"
	expect_output "umount: ETIMEDOUT" "umount: EBUSY"
}

@test "a bad LIBSHARE_TIMEOUT is the default, not 'for ever' or 'at once'" {
	LIBSHARE_TIMEOUT=abc run shim "$CALL" umount "$T/EPERM"
	expect_output "umount: EPERM"
	LIBSHARE_TIMEOUT=-5 run shim "$CALL" umount "$T/ENOENT"
	expect_output "umount: ENOENT"
}
