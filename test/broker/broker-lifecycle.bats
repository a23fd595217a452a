#!/usr/bin/env bats
# sharebrokerd's life: it starts detached and is ready when it returns, one
# broker per socket, SIGTERM and `sharectl stop` end it with every mount
# left in place, a restarted broker carries on, sharectl reports a missing
# broker, `sharectl jails` names the roots of jailed callers, and it refuses
# a table the kernel already propagates, or to run without root.

load ../lib/broker

setup() { broker_setup; }
teardown() { broker_teardown; }

@test "the broker is detached and answers as soon as it returns" {
	run "$SHARECTL" status
	[ "$status" -eq 0 ]
	# it imported the whole table of its namespace, which is ours
	local n
	n=$(wc -l </proc/self/mountinfo)
	[ "$output" = "sharebrokerd $BROKER_PID: $n mounts, 0 jails" ]
	# detached: a session of its own, not a child of this shell
	[ "$(ps -o sid= -p "$BROKER_PID" | tr -d ' ')" = "$BROKER_PID" ]
	[ "$(ps -o ppid= -p "$BROKER_PID" | tr -d ' ')" != "$$" ]
	[ -f "$STATE/sharebrokerd.log" ]
	# and it runs under the legacy simulation
	grep -q '^Seccomp:[[:space:]]*2' "/proc/$BROKER_PID/status"
}

@test "a second broker on the same socket fails with a message" {
	run legacy "$SHAREBROKERD" --socket "$LIBSHARE_SOCKET" --state-dir "$S/state2"
	[ "$status" -eq 1 ]
	[[ $output == *"$LIBSHARE_SOCKET: a broker is already listening"* ]]
	# the first one still answers, as itself
	run "$SHARECTL" status
	[ "$status" -eq 0 ]
	[[ $output == "sharebrokerd $BROKER_PID: "* ]]
}

@test "SIGTERM stops the broker and the mounts stay" {
	mkdir "$S/keep"
	host mount -t tmpfs keep "$S/keep"
	is_mountpoint "$S/keep"
	snapshot before
	kill -TERM "$BROKER_PID"
	wait_gone "$BROKER_PID" 5
	assert_table_unchanged before
	run "$SHARECTL" status
	[ "$status" -eq 1 ]
}

@test "sharectl stop stops the broker and the mounts stay" {
	mkdir "$S/keep"
	host mount -t tmpfs keep "$S/keep"
	snapshot before
	run "$SHARECTL" stop
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	wait_gone "$BROKER_PID" 5
	assert_table_unchanged before
	is_mountpoint "$S/keep"
}

@test "a restarted broker still propagates what it propagated before" {
	# RFC Example 1's setup: the jail's /floppy a slave of the host's
	mkdir -p "$S/floppy" "$J/floppy"
	host mount --bind "$S/floppy" "$S/floppy"
	host mount --make-shared "$S/floppy"
	host mount --bind "$S/floppy" "$J/floppy"
	jail mount --make-slave /floppy
	[ "$(call_result)" = 0 ]
	"$SHARECTL" stop
	wait_gone "$BROKER_PID" 5
	broker_start
	# design.md principle 3: what must survive a restart was written
	# before the reply; the kernel's table alone cannot tell
	host mount -t tmpfs DISK "$S/floppy"
	[ "$(call_result)" = 0 ]
	[ "$(mountpoints_of DISK)" = "$S/floppy"$'\n'"$J/floppy" ]
}

@test "sharectl status without a broker fails with a message" {
	"$SHARECTL" stop
	wait_gone "$BROKER_PID" 5
	run "$SHARECTL" status
	[ "$status" -eq 1 ]
	[ "$output" = "sharectl: no broker at $LIBSHARE_SOCKET: Connection refused" ]
	run "$SHARECTL" --socket "@libshare-bats-$$-none" stop
	[ "$status" -eq 1 ]
	[[ $output == "sharectl: no broker at @libshare-bats-$$-none: "* ]]
}

@test "sharectl jails lists the root of a jailed caller, and only that" {
	mkdir -p "$J/m" "$S/h"
	host mount -t tmpfs hostside "$S/h"
	[ "$(call_result)" = 0 ]
	run "$SHARECTL" jails
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	jail mount -t tmpfs inside /m
	[ "$(call_result)" = 0 ]
	# a root is listed while some process lives there
	background shimmed "$CALLER" --chroot "$J" sleep 30
	for ((i = 0; i < 50; i++)); do
		[ "$("$SHARECTL" jails)" = "$J" ] && break
		sleep 0.1
	done
	run "$SHARECTL" jails
	[ "$status" -eq 0 ]
	[ "$output" = "$J" ]
	run "$SHARECTL" status
	[[ $output == *", 1 jails" ]]
}

@test "the broker refuses to start where the kernel already propagates" {
	# natively, without the shim: the kernel itself makes it shared
	mount --make-shared "$S"
	run legacy "$SHAREBROKERD" --socket "$LIBSHARE_SOCKET-2" --state-dir "$S/state2"
	mount --make-private "$S"
	[ "$status" -eq 1 ]
	[[ $output == *"already propagates"*"($S)"*"--make-rprivate"* ]]
	run "$SHARECTL" --socket "$LIBSHARE_SOCKET-2" status
	[ "$status" -eq 1 ]
}

@test "the broker refuses to start without root" {
	cp "$SHAREBROKERD" "$PUBLIC/"      # the build tree need not be reachable
	run setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$PUBLIC/sharebrokerd" --socket "$LIBSHARE_SOCKET-2" \
		--state-dir "$S/state2"
	[ "$status" -eq 1 ]
	[ "$output" = "sharebrokerd: must run as root" ]
	run "$SHARECTL" --socket "$LIBSHARE_SOCKET-2" status
	[ "$status" -eq 1 ]
}

@test "without root the broker refuses before it reads its configuration" {
	# a file only root may read, as /etc/libshare's may be, or one under
	# a prefix in a mode-700 tree (make distcheck's): the user is owed
	# the refusal, not the file's EACCES (exit 2, a configuration error)
	local conf=$PUBLIC/root-only.conf
	echo "max-mounts = 6000" >"$conf"
	chmod 600 "$conf"
	cp "$SHAREBROKERD" "$PUBLIC/"      # the build tree need not be reachable
	run setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$PUBLIC/sharebrokerd" --config "$conf" \
		--socket "$LIBSHARE_SOCKET-2" --state-dir "$S/state2"
	[ "$status" -eq 1 ]
	[ "$output" = "sharebrokerd: must run as root" ]
	# --print-config needs no root: it reads the file, as before
	run setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$PUBLIC/sharebrokerd" --config "$conf" --print-config
	[ "$status" -eq 2 ]
	[ "$output" = "sharebrokerd: $conf: Permission denied" ]
	run "$PUBLIC/sharebrokerd" --config "$conf" --print-config
	[ "$status" -eq 0 ]
	[[ $output == *$'\nmax-mounts = 6000\n'* ]]
}
