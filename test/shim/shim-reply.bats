#!/usr/bin/env bats
# The shim believes only a well-formed reply to its own request: anything
# else fails the call with EIO.  A broker that hangs up without a reply is
# no broker (ENOSYS); text after a valid reply is not the shim's business.

load helpers

setup() {
	shim_setup
	start_broker
}

teardown() {
	shim_teardown
}

@test "a reply with a foreign magic, op, length or errno is EIO" {
	run shim "$CALL" mount - "$T/BADMAGIC" - 0 - mount - "$T/BADOP" - 0 - \
		mount - "$T/BADLEN" - 0 - mount - "$T/BADERRNO" - 0 -
	expect_output "mount: EIO" "mount: EIO" "mount: EIO" "mount: EIO"
	[ "$(grep -c '^MOUNT ' "$LOG")" -eq 4 ]
}

@test "a reply shorter than its header is EIO" {
	run shim "$CALL" umount "$T/SHORT"
	expect_output "umount: EIO"
	expect_log "UMOUNT 0x0 - $T/SHORT - -"
}

@test "a broker that hangs up without replying is no broker: ENOSYS" {
	run shim "$CALL" mount - "$T/HANGUP" - 0 -
	expect_output "mount: ENOSYS"
	expect_log "MOUNT 0x0 - $T/HANGUP - -"
}

@test "text after a valid reply is ignored" {
	run shim "$CALL" mount - "$T/TEXT" - 0 -
	expect_output "mount: ok"
}
