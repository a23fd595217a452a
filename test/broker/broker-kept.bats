#!/usr/bin/env bats
# A connection that lasts (shim/conn.c): the shim keeps one per process
# between its calls, and nothing a program or the kernel would tell apart
# changes for it: fork, exec and threads between two calls, a privilege
# given up or taken back in between, a descriptor the program closes or
# covers with its own, a broker that restarts, and a connection handed to
# another process (whose requests are its own, not the connecting one's).

load ../lib/broker

setup() {
	broker_setup
	CALL=$(libshare_find test/shim/call)
	mkdir -p "$S/x" "$S/y0" "$S/y1" "$S/y2" "$S/y3"
	cd "$S"
}

teardown() {
	broker_teardown
}

@test "one connection for many calls, and none carried across exec" {
	run shimmed "$CALL" sockets umount nowhere umount nowhere \
		umount nowhere sockets exec "$CALL" sockets umount nowhere \
		sockets
	local n=${lines[0]#sockets: }
	[ "${lines[1]}" = "umount: ENOENT" ]
	[ "${lines[3]}" = "umount: ENOENT" ]
	[ "${lines[4]}" = "sockets: $((n + 1))" ]
	[ "${lines[5]}" = "sockets: $n" ]          # CLOEXEC: gone with exec
	[ "${lines[6]}" = "umount: ENOENT" ]
	[ "${lines[7]}" = "sockets: $((n + 1))" ]
	[ "${#lines[@]}" -eq 8 ]
}

@test "the kept connection stays out of the lowest numbers: a daemon that closed them gets 0 again" {
	run shimmed "$CALL" closefds umount nowhere opens-zero
	[ "$status" -eq 0 ]
	run shimmed "$CALL" closefds opens-zero
	[ "$status" -eq 0 ]            # control: without a call, the same
}

@test "a fork between two calls: parent and child at once, each answer its own" {
	# the parent (worker 0) mounts on x0 = y0, which is there; the child
	# (worker 1) on y1's missing twin: every answer tells whose it is
	rmdir y1
	run shimmed "$CALLER" --warm --fork --repeat 40 \
		mount none 'y%t' tmpfs 0 umount 'y%t' 0
	[ "$status" -eq 0 ]
	[ "$(grep -c '^0 mount y0 = 0$' <<<"$output")" -eq 40 ]
	[ "$(grep -c '^0 umount y0 = 0$' <<<"$output")" -eq 40 ]
	[ "$(grep -c '^1 mount y1 = ENOENT$' <<<"$output")" -eq 40 ]
	[ "$(grep -c '^1 umount y1 = ENOENT$' <<<"$output")" -eq 40 ]
	[ "${#lines[@]}" -eq 160 ]
}

@test "threads at once: each answer its own" {
	rmdir y2 y3
	run shimmed "$CALLER" --warm --threads 4 --repeat 25 \
		mount none 'y%t' tmpfs 0 umount 'y%t' 0
	[ "$status" -eq 0 ]
	for t in 0 1; do
		[ "$(grep -c "^$t mount y$t = 0\$" <<<"$output")" -eq 25 ]
		[ "$(grep -c "^$t umount y$t = 0\$" <<<"$output")" -eq 25 ]
	done
	for t in 2 3; do
		[ "$(grep -c "^$t mount y$t = ENOENT\$" <<<"$output")" -eq 25 ]
	done
	[ "${#lines[@]}" -eq 200 ]
}

@test "privilege given up and taken back between calls: as the kernel answers" {
	# the connection is first made with euid 65534, then used as root,
	# then as 65534 again: each call has the privilege it has then
	same_as_kernel shimmed "$CALLER" euid 65534 mount none x tmpfs 0 \
		euid 0 mount none x tmpfs 0 euid 65534 umount x 0 \
		euid 0 umount x 0
	[ "$(sed -n 1,8p <<<"$output")" = "euid 65534 = 0
mount x = EPERM
euid 0 = 0
mount x = 0
euid 65534 = 0
umount x = EPERM
euid 0 = 0
umount x = 0" ]
}

@test "a caller whose ids do not fit in 16 bits: its credentials go through, EPERM as natively" {
	same_as_kernel shimmed setpriv --reuid=100000 --regid=100000 \
		--clear-groups "$CALLER" mount none x tmpfs 0 umount x 0
	[ "$(sed -n 1,2p <<<"$output")" = "mount x = EPERM
umount x = EPERM" ]
}

@test "a program that closes the kept connection, or covers it with a file of its own, still gets through" {
	run shimmed "$CALL" umount nowhere closefds mount - "$S/x" tmpfs 0 - \
		umount "$S/x"
	[ "$status" -eq 0 ]
	# the shim's number now holds the program's file: nothing is written
	# into it, and it is not closed under the program
	run shimmed "$CALL" umount nowhere cover "$S/own" \
		mount - "$S/x" tmpfs 0 - umount "$S/x" covered
	[ "${lines[0]}" = "umount: ENOENT" ]
	[ "${lines[1]}" = "mount: ok" ]
	[ "${lines[2]}" = "umount: ok" ]
	[ "${lines[3]}" = "covered: 1 ok" ]
	[ ! -s "$S/own" ]
}

@test "a broker restarted between two calls: the next call goes to the new one" {
	background shimmed "$CALL" umount nowhere wait "$S/go" \
		mount - "$S/x" tmpfs 0 - umount "$S/x"
	local out=$BATS_TEST_TMPDIR/bg.0
	wait_file "$out"
	for ((i = 0; i < 100; i++)); do
		grep -q 'umount: ENOENT' "$out" && break
		sleep 0.05
	done
	broker_restart
	touch "$S/go"
	wait "$BG"
	[ "$(cat "$out")" = "umount: ENOENT
mount: ok
umount: ok" ]
}

@test "a connection a root process hands to an unprivileged one serves the new holder as itself: EPERM" {
	snapshot before
	# rawclient connects as root, then a child of it that is uid 65534
	# sends, its parent alive and holding the connection too
	run "$RAWCLIENT" --op mount --field 0=none --field 1=x \
		--field 2=tmpfs --give 65534
	[ "$output" = "reply op=1 error=EPERM" ]
	assert_table_unchanged before
	run "$RAWCLIENT" --op mount --field 0=none --field 1=x \
		--field 2=tmpfs
	[ "$output" = "reply op=1 error=0" ]
	run shimmed "$CALLER" umount x 0
	[ "$output" = "umount x = 0" ]
}
