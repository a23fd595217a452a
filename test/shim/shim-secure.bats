#!/usr/bin/env bats
# In a setuid program (AT_SECURE) the environment belongs to the
# unprivileged caller: it must neither pick the broker the program trusts
# (LIBSHARE_SOCKET) nor make it bypass the broker (LIBSHARE_FALLBACK).
#
# glibc ignores LD_PRELOAD paths in setuid programs, so the shim comes from
# /etc/ld.so.preload, in a mount namespace of the test's own; a network
# namespace of its own gives it the default address, @libshare, free of
# any real broker.  The setuid copy of `call` lives on a tmpfs, where suid
# is honoured whatever /tmp's options.

load helpers

setup() {
	shim_setup
	mkdir -p "$T/etc" "$T/suid" "$T/x/OK"
	cp /etc/ld.so.cache "$T/etc/" 2>/dev/null || true
	echo "$SHIM" > "$T/etc/ld.so.preload"
	mount -t tmpfs -o mode=755 libshare-suid "$T/suid"
	cp "$CALL" "$T/suid/call"
	chmod 4755 "$T/suid/call"
}

teardown() {
	shim_teardown
}

# secure_run DEFAULT ENV CMD...: CMD in namespaces of its own, brokers on
# @libshare (logging to $T/default.log) if DEFAULT is 1 and on $SOCK
# (logging to $LOG) if ENV is 1, LIBSHARE_SOCKET=$SOCK.
secure_run() {
	run unshare -m -n --propagation private -- bash -c '
		fb=$1 T=$2 sock=$3 default=$4 env=$5
		shift 5
		pids=
		trap "kill \$pids 2>/dev/null" EXIT
		touch "$T/default.log" "$T/env.log"
		[ "$default" = 0 ] || pids="$pids $("$fb" @libshare "$T/default.log" 3>&-)"
		[ "$env" = 0 ] || pids="$pids $("$fb" "$sock" "$T/env.log" 3>&-)"
		mount --bind "$T/etc" /etc
		LIBSHARE_SOCKET=$sock "$@"' \
		_ "$FAKEBROKER" "$T" "$SOCK" "$@"
}

AS_NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)

@test "control: a plain program follows LIBSHARE_SOCKET" {
	secure_run 1 1 "$T/suid/call" mount - "$T/x/OK" - 0 -
	expect_output "mount: ok"
	expect_lines "$T/env.log" "MOUNT 0x0 - $T/x/OK - -"
	expect_lines "$T/default.log"
}

@test "a setuid program ignores LIBSHARE_SOCKET: the default broker hears it" {
	secure_run 1 1 "${AS_NOBODY[@]}" "$T/suid/call" mount - "$T/x/OK" - 0 -
	expect_output "mount: ok"
	expect_lines "$T/default.log" "MOUNT 0x0 - $T/x/OK - -"
	expect_lines "$T/env.log"
}

@test "a setuid program ignores LIBSHARE_FALLBACK=native" {
	secure_run 0 0 env LIBSHARE_FALLBACK=native "${AS_NOBODY[@]}" \
		"$T/suid/call" mount "$T/etc" "$T/x/OK" - 0x1000 -
	expect_output "mount: ENOSYS"
}

@test "control: a plain program follows LIBSHARE_FALLBACK=native" {
	secure_run 0 0 env LIBSHARE_FALLBACK=native \
		"$T/suid/call" mount "$T/etc" "$T/x/OK" - 0x1000 - \
		access "$T/x/OK/ld.so.preload"
	expect_output "mount: ok" "access: ok"
}
