#!/usr/bin/env bats
# Load (issue 9 item 9): 16 clients in 4 jails and one on the host mount
# and umount at once through the shim, with propagation between the host
# and the jails (test/fuzz/load-run.sh says how), every call's answer
# checked, and the final state compared with the kernel's: the same run
# natively in a scratch mount namespace, with real propagation.  Compared:
# the kernel's table from the host and from each jail (without propagation
# fields: the broker's kernel table is all private), and the views the
# processes read through the shim (with them).  Tables are normalised by
# test/diff/mtnorm (ids and peer groups renumbered, creation order kept).
#
# LOAD_SECONDS (default 0: one round) makes the rounds go on that long;
# LOAD_REPEAT (default 1: make check's time) is the iterations per client
# per round;
# test/bench/load.sh runs it for a minute.

load ../lib/broker

LOADRUN=$(libshare_find test/fuzz/load-run.sh)
LSVIEW=$(libshare_find test/diff/lsview)
MTNORM=$(libshare_find test/diff/mtnorm)

setup() {
	broker_setup
	export S CALLER LSVIEW SHIM LEGACY_SIM LIBSHARE_SOCKET
}

teardown() {
	broker_teardown
}

# The views of a run's output, normalised: $1 "kernel" (the kernel's
# table) or "virtual" (through the shim); more arguments go to mtnorm.
views_of() {
	local part=$1
	shift
	awk -v want="$part" '
		$0 == "--- virtual" { part = "virtual"; next }
		/^--- view / && !part { part = "kernel" }
		part == want' | "$MTNORM" -b "$S" "$@"
}

@test "16 clients in 4 jails under load: every call answers as the kernel, the final state is the kernel's" {
	local start=$SECONDS fds0 mounts0 rss0
	fds0=$(find "/proc/$BROKER_PID/fd" -mindepth 1 | wc -l)
	mounts0=$(wc -l </proc/self/mountinfo)
	rss0=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$BROKER_PID/status")
	# natively one round: rounds leave nothing, the kernel's answers are
	# the same in each
	native env LOAD_SECONDS=0 "$LOADRUN" native >"$BATS_TEST_TMPDIR/native"
	"$LOADRUN" broker >"$BATS_TEST_TMPDIR/broker"
	local n=$BATS_TEST_TMPDIR/native b=$BATS_TEST_TMPDIR/broker
	grep '^round' "$b" | tail -n 3 | sed 's/^/# broker: /' >&3
	echo "# $(grep -c '^round' "$b") rounds through the broker," \
		"$((SECONDS - start)) s in all" >&3
	# every call answers as natively, in every round: 16 clients of 8
	# calls and the host's 2, LOAD_REPEAT times a round
	diff -u <(grep -E '^(= |last: )' "$n") <(grep -E '^(= |last: )' "$b")
	grep -q '^= .* = EINVAL$' "$n"
	run grep -c '^round [0-9]*: '$(((16 * 8 + 2) * ${LOAD_REPEAT:-1}))' calls' "$b"
	[ "$output" -eq "$(grep -c '^round' "$b")" ]
	run grep -A 20 '^unlike round 1' "$b"
	echo "$output"
	[ "$status" -eq 1 ]
	# the final state: the kernel's table, and what the processes see;
	# a jail 3 mount left on the shared tree has its copies on the host
	# and in every jail (5 in the host's view, 1 in each jail's)
	[ "$(views_of kernel <"$n" | grep -c '/j3-0 / none ')" -eq 9 ]
	diff -u <(views_of kernel -P <"$n") <(views_of kernel -P <"$b")
	diff -u <(views_of kernel <"$n") <(views_of virtual <"$b")
	# the broker holds a descriptor per mount and no more, load or not
	local fds1 mounts1
	fds1=$(find "/proc/$BROKER_PID/fd" -mindepth 1 | wc -l)
	mounts1=$(wc -l </proc/self/mountinfo)
	echo "# broker: $fds0 descriptors, $mounts0 mounts, VmRSS $rss0 KiB" \
		"before; $fds1, $mounts1, $(awk '$1 == "VmRSS:" { print $2 }' \
		"/proc/$BROKER_PID/status") KiB after" >&3
	[ $((fds1 - mounts1)) -eq $((fds0 - mounts0)) ]
}
