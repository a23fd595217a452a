#!/usr/bin/env bats
# The broker on a filesystem path (LIBSHARE_SOCKET=/PATH, not @NAME): a
# jail whose tree holds the socket reaches it by its own path; a socket
# file left by a broker killed with SIGKILL is stale (a connect to it is
# refused) and the next broker replaces it; a live one is a running
# broker's, and a second broker refuses to start there and leaves it
# alone (door/sock.c, server_listen()).

load ../lib/broker

setup() {
	# inside the jail's tree, as a jail's /run would hold it: the jail
	# names it /sharebrokerd.sock
	BROKER_SOCKET=$BATS_TEST_TMPDIR/sb/jail/sharebrokerd.sock
	broker_setup
	mkdir -p "$J/m" "$S/h"
}

teardown() { broker_teardown; }

# CMD in the jail, the shim told the socket's path as the jail sees it.
jail_by_path() {
	LIBSHARE_SOCKET=/sharebrokerd.sock jail "$@"
}

@test "a broker on a path socket: a socket anyone may connect to, host and jail calls go through" {
	[ "$LIBSHARE_SOCKET" = "$J/sharebrokerd.sock" ]
	[ -S "$LIBSHARE_SOCKET" ]
	[ "$(stat -c %a "$LIBSHARE_SOCKET")" = 666 ]
	grep -q "started: socket $LIBSHARE_SOCKET," "$STATE/sharebrokerd.log"
	host mount -t tmpfs hostside "$S/h"
	[ "$(call_result)" = 0 ]
	jail_by_path mount -t tmpfs inside /m
	[ "$(call_result)" = 0 ]
	[ "$(mountpoints_of inside)" = "$J/m" ]
	# the jail has no other way to a broker: a path it lacks is none
	LIBSHARE_SOCKET=/elsewhere.sock run shimmed "$CALLER" --chroot "$J" \
		umount /m 0
	[ "$output" = "umount /m = ENOSYS" ]
	is_mountpoint "$J/m"
	jail_by_path umount /m
	[ "$(call_result)" = 0 ]
	! is_mountpoint "$J/m"
}

@test "a stale socket file of a broker killed by SIGKILL is replaced at the next start" {
	local old
	old=$(stat -c %i "$LIBSHARE_SOCKET")
	kill -KILL "$BROKER_PID"
	wait_gone "$BROKER_PID" 5
	# the file stays, and nobody listens on it
	[ -S "$LIBSHARE_SOCKET" ]
	run "$SHARECTL" status
	[ "$status" -eq 1 ]
	[ "$output" = "sharectl: no broker at $LIBSHARE_SOCKET: Connection refused" ]
	broker_start
	[ -S "$LIBSHARE_SOCKET" ]
	[ "$(stat -c %i "$LIBSHARE_SOCKET")" != "$old" ]
	assert_broker_serves
	jail_by_path mount -t tmpfs inside /m
	[ "$(call_result)" = 0 ]
	[ "$(mountpoints_of inside)" = "$J/m" ]
}

@test "a live path socket: a second broker refuses with a message and leaves the socket alone" {
	local old
	old=$(stat -c %i "$LIBSHARE_SOCKET")
	run legacy "$SHAREBROKERD" --socket "$LIBSHARE_SOCKET" \
		--state-dir "$S/state2"
	[ "$status" -eq 1 ]
	[[ $output == *"$LIBSHARE_SOCKET: a broker is already listening"* ]]
	# the same file, still the first broker's
	[ "$(stat -c %i "$LIBSHARE_SOCKET")" = "$old" ]
	assert_broker_serves
	jail_by_path mount -t tmpfs inside /m
	[ "$(call_result)" = 0 ]
	[ "$(mountpoints_of inside)" = "$J/m" ]
}
