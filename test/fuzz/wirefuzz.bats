#!/usr/bin/env bats
# The protocol fuzzer against a real broker (issue 9 item 9): whatever the
# fuzzer sends (test/fuzz/wirefuzz.c: mutated and random requests,
# descriptors attached, several messages per connection, early closes,
# silent connections, floods), the broker lives on as the same process,
# answers every case in time (op 0 EINVAL or a close for a malformed
# request, a reply for a well-formed one), holds as many descriptors and
# about as much memory as before, and no mount has changed.
#
# LIBSHARE_FUZZ_CASES (default 10000) and LIBSHARE_FUZZ_SEED (default 1,
# so that make check runs the same cases every time, as the differential
# suite's seeds do) set the run; the seed is printed, and a bad case prints
# the line that replays it.  test/bench/fuzz.sh runs 100,000 and more, with
# a new seed each time.

load ../lib/broker

WIREFUZZ=$(libshare_find test/fuzz/wirefuzz)

setup() {
	broker_setup
	[ -x "$WIREFUZZ" ] || { echo "not built: $WIREFUZZ" >&2; return 1; }
	mkdir -p "$S/fz/x" "$J/mnt" "$J/etc" "$S/outside"
	chmod 755 "$S" "$S/fz"
}

teardown() {
	broker_teardown
}

broker_fds() {
	find "/proc/$BROKER_PID/fd" -mindepth 1 | wc -l
}

broker_rss_kib() {
	awk '$1 == "VmRSS:" { print $2 }' "/proc/$BROKER_PID/status"
}

# Waits until the broker holds N descriptors (the fuzzer's last silent
# connections close with it; the broker drops them on its next turn).
settle_fds() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(broker_fds)" -le "$1" ] && return 0
		sleep 0.1
	done
}

# One part of the run: cases FIRST to FIRST+COUNT-1 by wirefuzz ARGS...,
# split among PROCS fuzzers at once (the broker serves them interleaved);
# their output shown, every one's exit status 0.  Every part adds the
# sandbox's paths to the fields' words.
fuzz_part() {
	local procs=$1 first=$2 count=$3 i rc=0 pids=()
	shift 3
	for ((i = 0; i < procs; i++)); do
		"$@" --seed "$seed" --first $((first + count * i / procs)) \
			--cases $((count * (i + 1) / procs - count * i / procs)) \
			--word "$S" --word "$S/fz/x" --word "$J" --word jail \
			--word "$J/mnt" --word "$S/outside" --word "$STATE" \
			>"$BATS_TEST_TMPDIR/fuzz.$i" 2>&1 &
		pids+=($!)
	done
	for ((i = 0; i < procs; i++)); do
		wait "${pids[$i]}" || rc=1
		sed 's/^/# /' "$BATS_TEST_TMPDIR/fuzz.$i" >&3
	done
	return $rc
}

@test "fuzzed requests: no crash, no hang, no descriptor or memory leak, no mount changed" {
	local cases=${LIBSHARE_FUZZ_CASES:-10000} seed=${LIBSHARE_FUZZ_SEED:-1}
	local nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
	local a=$((cases * 7 / 10)) b=$((cases * 8 / 10)) c=$((cases * 9 / 10))
	local fds0 rss0 fds1 rss1
	snapshot before
	fds0=$(broker_fds)
	rss0=$(broker_rss_kib)
	echo "# seed $seed; broker $BROKER_PID: $fds0 descriptors, VmRSS $rss0 KiB" >&3
	# unprivileged on the host (two fuzzers at once), unprivileged and
	# root in the jail, and root on the host among the sandbox's paths
	# (wirefuzz withholds what could change a mount)
	fuzz_part 2 0 "$a" $nobody "$WIREFUZZ"
	fuzz_part 1 "$a" $((b - a)) "$WIREFUZZ" --chroot "$J" --uid 65534
	fuzz_part 1 "$b" $((c - b)) "$WIREFUZZ" --chroot "$J"
	cd "$S/fz"
	fuzz_part 1 "$c" $((cases - c)) "$WIREFUZZ"
	settle_fds "$fds0"
	fds1=$(broker_fds)
	rss1=$(broker_rss_kib)
	echo "# after: $fds1 descriptors, VmRSS $rss1 KiB" >&3
	assert_broker_serves
	[ "$fds1" -eq "$fds0" ]
	((rss1 <= rss0 + 2048))
	assert_table_unchanged before
}
