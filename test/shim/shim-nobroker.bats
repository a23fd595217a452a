#!/usr/bin/env bats
# Without a broker the forwarded calls fail with ENOSYS, the facility is
# missing; a "broker" that is not root is no broker, whatever it listens
# on; LIBSHARE_FALLBACK=native hands the call to the kernel instead, and
# only when no broker answered.

load helpers

setup() {
	shim_setup
	mkdir -p "$T/a" "$T/b" "$T/x/EPERM"
	touch "$T/a/marker"
}

teardown() {
	shim_teardown
}

NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)

# The squatter sees the shim connect and leave without a word.
wait_empty() {
	local i
	for i in $(seq 100); do
		[ -s "$LOG" ] && break
		sleep 0.05
	done
	expect_log EMPTY
}

@test "no broker: ENOSYS, which mount reports as 'Function not implemented'" {
	run shim "$CALL" mount "$T/a" "$T/b" - 0x1000 - umount "$T/b"
	expect_output "mount: ENOSYS" "umount: ENOSYS"
	run shim mount --bind "$T/a" "$T/b"
	[ "$status" -eq 32 ]
	[[ "$output" == *"Function not implemented"* ]]
	[ ! -e "$T/b/marker" ]
}

@test "a broker that is not root gets no request: ENOSYS" {
	start_broker "${NOBODY[@]}"
	run shim "$CALL" mount "$T/a" "$T/b" - 0x1000 -
	expect_output "mount: ENOSYS"
	wait_empty
}

@test "nor does one on a filesystem path" {
	chmod 777 "$T"
	SOCK=$T/squat.sock
	start_broker "${NOBODY[@]}"
	run shim "$CALL" umount "$T/b"
	expect_output "umount: ENOSYS"
	wait_empty
}

@test "LIBSHARE_FALLBACK=native: without a broker the kernel mounts" {
	LIBSHARE_FALLBACK=native run shim "$CALL" mount "$T/a" "$T/b" - 0x1000 -
	expect_output "mount: ok"
	[ -e "$T/b/marker" ]
	LIBSHARE_FALLBACK=native run shim "$CALL" sys-umount2 "$T/b" 0 \
		sys-umount2 "$T/b" 0
	expect_output "sys-umount2: ok" "sys-umount2: EINVAL"
	[ ! -e "$T/b/marker" ]
}

@test "LIBSHARE_FALLBACK=native: the broker's refusal stands" {
	start_broker
	LIBSHARE_FALLBACK=native run shim "$CALL" mount "$T/a" "$T/x/EPERM" - \
		0x1000 -
	expect_output "mount: EPERM"
	[ ! -e "$T/x/EPERM/marker" ]
	expect_log "MOUNT 0x1000 $T/a $T/x/EPERM - -"
}

@test "any other LIBSHARE_FALLBACK is no fallback" {
	LIBSHARE_FALLBACK=yes run shim "$CALL" mount "$T/a" "$T/b" - 0x1000 -
	expect_output "mount: ENOSYS"
	[ ! -e "$T/b/marker" ]
}
