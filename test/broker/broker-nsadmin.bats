#!/usr/bin/env bats
# Mount namespaces shown to the administrator (issue 11, item 4): sharectl
# ns lists them with their roots and processes, sharectl tree --ns PID and
# /proc/PID/mountinfo read through the shim show PID's namespace as PID
# itself sees it, and sharectl graph draws each namespace as a box.  A jail
# cannot look at a process outside it.

load ../lib/broker

setup() {
	broker_setup
	mkdir -p "$S/sh" "$S/priv"
	host mount -t tmpfs SH "$S/sh"
	host mount --make-shared "$S/sh"
	host mount -t tmpfs PRIV "$S/priv"
	# a process in a namespace of its own: a copy, the shared mount a peer
	background legacy env LD_PRELOAD="$SHIM" sh -c \
		"echo \$\$ >$BATS_TEST_TMPDIR/pid; exec unshare -m --propagation unchanged sleep 60"
	local i
	for ((i = 0; i < 100; i++)); do
		P=$(cat "$BATS_TEST_TMPDIR/pid" 2>/dev/null || true)
		[ -n "$P" ] && [ "$(readlink "/proc/$P/root")" != / ] && break
		sleep 0.05
	done
	[ "$(readlink "/proc/$P/root")" != / ]
}

# Only the broker's own namespace is left.
one_namespace() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$("$SHARECTL" ns | wc -l)" -eq 1 ] && return 0
		sleep 0.05
	done
	return 1
}

teardown() {
	[ -z "${P:-}" ] || kill "$P" 2>/dev/null || true
	one_namespace || echo "a namespace outlived its process" >&2
	broker_teardown
}

@test "sharectl ns: the broker's own namespace and the copy, with its root and its process" {
	run "$SHARECTL" ns
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[[ ${lines[0]} == "mnt:["*"] / (the broker's own), "*" mounts, "*" processes" ]]
	[[ ${lines[1]} == "mnt:["*"] $(readlink "/proc/$P/root"), "*" mounts, 1 processes: $P" ]]
	# the number is the one the ns file shows
	n=$(legacy env LD_PRELOAD="$SHIM" readlink "/proc/$P/ns/mnt")
	[[ ${lines[1]} == "$n "* ]]
	# an unprivileged caller may not list them
	run setpriv --reuid 65534 --regid 65534 --clear-groups "$SHARECTL" ns
	[ "$status" -eq 1 ]
	[[ $output == *"Operation not permitted"* ]]
}

@test "sharectl tree --ns PID shows PID's namespace as PID sees it" {
	run "$SHARECTL" tree --ns "$P"
	[ "$status" -eq 0 ]
	local theirs=$output
	[[ $theirs == *"$S/sh "*"shared"* ]]
	run legacy env LD_PRELOAD="$SHIM" nsenter -m -t "$P" "$SHARECTL" tree
	[ "$status" -eq 0 ]
	[ "$output" = "$theirs" ]
	run "$SHARECTL" tree --ns 999999999
	[ "$status" -eq 1 ]
	[[ $output == *"process 999999999: No such process"* ]]
	run "$SHARECTL" tree --ns 12x
	[ "$status" -eq 2 ]
}

@test "/proc/PID/mountinfo through the shim is PID's own table, as on Linux" {
	local mine theirs
	theirs=$(legacy env LD_PRELOAD="$SHIM" cat "/proc/$P/mountinfo")
	mine=$(legacy env LD_PRELOAD="$SHIM" nsenter -m -t "$P" cat /proc/self/mountinfo)
	[ -n "$theirs" ]
	[ "$theirs" = "$mine" ]
	# not the host's own: the copy's mounts have ids of their own
	[ "$theirs" != "$(legacy env LD_PRELOAD="$SHIM" cat /proc/self/mountinfo)" ]
	grep -q " $S/sh .* shared:" <<<"$theirs"
	# findmnt --task reads it too
	run legacy env LD_PRELOAD="$SHIM" findmnt --task "$P" -n -o PROPAGATION "$S/sh"
	[ "$output" = shared ]
}

@test "a jail sees no process outside it" {
	run jail "$SHARECTL" tree --ns "$P"
	[ "$status" -eq 1 ]
	[[ $output == *"No such process"* ]]
	# its read of the other's table is the kernel's: no /proc in the jail
	run jail cat "/proc/$P/mountinfo"
	[[ $output != *"shared:"* ]]
}

@test "sharectl graph draws each namespace as a box, peers joined across them" {
	run "$SHARECTL" graph
	[ "$status" -eq 0 ]
	[ "$(grep -c 'subgraph cluster_ns' <<<"$output")" -eq 2 ]
	grep -q 'style=dotted, dir=none, label="shared:' <<<"$output"
	# back to one namespace, one picture without boxes
	kill "$P"
	one_namespace
	run "$SHARECTL" graph
	! grep -q 'cluster_ns' <<<"$output"
}
