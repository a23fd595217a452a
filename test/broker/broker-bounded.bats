#!/usr/bin/env bats
# Bounded resources (issue 9, item 8): what the broker keeps does not grow
# with the number of requests it has served.  After many mount/umount
# pairs that propagate, its state directory has as many entries and it
# holds as many descriptors as after ten; requests from ever new roots
# leave its memory flat.  make check runs a few hundred; test/bench/
# bounded.sh runs the same with 100,000 pairs and 5,000 roots.
#
# Environment: BOUNDED_PAIRS (default 300), BOUNDED_ROOTS (default 100),
# BOUNDED_REQS requests per root (default 5).

load ../lib/broker

setup() {
	broker_setup
	PAIRS=${BOUNDED_PAIRS:-300}
	ROOTS=${BOUNDED_ROOTS:-100}
	REQS=${BOUNDED_REQS:-5}
}

teardown() {
	broker_teardown
}

entries() { find "$STATE" | wc -l; }
fds() { ls "/proc/$BROKER_PID/fd" | wc -l; }
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$BROKER_PID/status"; }

# N bind/umount pairs on $S/a/x, each propagated to the peer $S/b; every
# call must answer 0.  The umounts are lazy: busy-ness is broker-busy.bats's
# to test, and its scan of /proc would make the long run take hours.
pairs() {
	shimmed "$CALLER" --repeat "$1" mount "$S/src" "$S/a/x" - 4096 \
		umount "$S/a/x" 2 >"$BATS_TEST_TMPDIR/pairs.out"
	[ "$(grep -c ' = 0$' "$BATS_TEST_TMPDIR/pairs.out")" -eq $((2 * $1)) ]
}

@test "after many propagating mount/umount pairs: the same state entries and descriptors as after ten" {
	mkdir -p "$S/a" "$S/b" "$S/src"
	host mount -t tmpfs shared "$S/a"
	host mount --make-shared "$S/a"
	host mount --bind "$S/a" "$S/b"
	mkdir "$S/a/x"
	pairs 10
	local e0 f0 r0 e1 f1 r1
	e0=$(entries) f0=$(fds) r0=$(rss)
	pairs "$PAIRS"
	e1=$(entries) f1=$(fds) r1=$(rss)
	echo "after 10 and $PAIRS more pairs: state entries $e0 -> $e1," \
		"descriptors $f0 -> $f1, VmRSS $r0 -> $r1 kB" >&2
	[ "$e1" -eq "$e0" ]
	[ "$f1" -eq "$f0" ]
	[ "$r1" -le $((r0 + 1024)) ]
	! is_mountpoint "$S/b/x"
}

@test "requests from many roots that come and go: memory flat, jail list small" {
	local i r0 r1 n
	for ((i = 0; i < ROOTS; i++)); do mkdir -p "$S/r$i/x"; done
	n=$((ROOTS / 10 > 0 ? ROOTS / 10 : 1))
	for ((i = 0; i < n; i++)); do
		shimmed "$CALLER" --chroot "$S/r$i" --repeat "$REQS" \
			mount none /x tmpfs 0 umount /x 2 >/dev/null
	done
	r0=$(rss)
	for ((i = n; i < ROOTS; i++)); do
		shimmed "$CALLER" --chroot "$S/r$i" --repeat "$REQS" \
			mount none /x tmpfs 0 umount /x 2 >"$BATS_TEST_TMPDIR/r.out"
		[ "$(grep -c ' = 0$' "$BATS_TEST_TMPDIR/r.out")" -eq $((2 * REQS)) ]
	done
	r1=$(rss)
	run "$SHARECTL" status
	echo "$((ROOTS * REQS * 2)) requests from $ROOTS roots: VmRSS $r0 -> $r1 kB; $output" >&2
	[ "$r1" -le $((r0 + 1024)) ]
	[[ $output =~ \ ([0-9]+)\ jails$ ]]
	[ "${BASH_REMATCH[1]}" -eq 0 ]   # no process lives in any of them
}
