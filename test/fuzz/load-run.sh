#!/bin/bash
# load-run.sh native|broker - one side of the load test (load.bats): 16
# clients in 4 jails and one on the host mount and umount at once, rounds
# after rounds, then a few mounts made one after the other; prints a line
# per round and the final views.
#
# The sandbox $S (a private tmpfs) gets a shared directory, $S/shared,
# bound into every jail $S/jN at /shared: as a slave in jails 1 and 2 (the
# host's mounts reach them, theirs stay in), as a peer in jails 3 and 4
# (their mounts reach the host and every jail).  Every client has targets
# of its own, on its jail's own directories and on the shared tree, so that
# each call's answer is the same whatever the interleaving: 0, or the
# errno of the two calls that fail (a umount of what is no longer mounted,
# a mount on a missing directory), the same in every round.  A round is
# LOAD_REPEAT (default 1) iterations of mount/bind/umount pairs per client
# and leaves nothing; rounds run until LOAD_SECONDS (default 0: one round)
# have passed.  The last phase leaves mounts behind, one after the other
# (so their order is the kernel's creation order), example1's included: a
# jail's own mount on a copy that the host then unmounts.
#
# native: plain commands, for a scratch mount namespace of the kernel's
# own (unshare -m), whose propagation is real.  broker: the host's commands
# and the clients through $SHIM to the broker at $LIBSHARE_SOCKET, under
# $LEGACY_SIM; then the views once more as read through the shim (after a
# line "--- virtual").
# Output: "round N: C calls in T s"; after round 1 its calls' answers,
# "= COUNT CALL" sorted, after every other round "as round 1" or "unlike
# round 1" and the difference; "last: CALL" for each call of the last
# phase; then
# "--- view V" and mountinfo as seen from V, for /, $S/j1 ... $S/j4.
# Environment: S, CALLER, LSVIEW, and for broker SHIM, LEGACY_SIM,
# LIBSHARE_SOCKET.
set -u
mode=$1
repeat=${LOAD_REPEAT:-1}

# A command as this side runs it: through the shim under legacy-sim, or as is.
via() {
	if [ "$mode" = broker ]; then
		"$LEGACY_SIM" -- env LD_PRELOAD="$SHIM" "$@"
	else
		"$@"
	fi
}

setup() {
	local n t
	mkdir -p "$S/shared/h"
	for n in 1 2 3 4; do
		mkdir -p "$S/j$n/shared" "$S/j$n/own/src"
		for t in 0 1 2 3; do
			mkdir -p "$S/shared/j$n-$t" "$S/j$n/own/t$t" "$S/j$n/own/b$t"
		done
	done
	via mount --bind "$S/shared" "$S/shared"
	via mount --make-shared "$S/shared"
	for n in 1 2 3 4; do
		via mount --bind "$S/shared" "$S/j$n/shared"
	done
	via mount --make-slave "$S/j1/shared"
	via mount --make-slave "$S/j2/shared"
}

# One client's iteration in jail $1 (worker %t): a tmpfs and a bind on its
# own targets, a tmpfs on the shared tree, their umounts, and two calls
# that fail.
steps() {
	echo mount none /own/t%t tmpfs 0 \
	     mount /own/src /own/b%t - bind \
	     mount none "/shared/j$1-%t" tmpfs 0 \
	     umount "/shared/j$1-%t" 0 \
	     umount /own/b%t detach \
	     umount /own/t%t 0 \
	     umount /own/t%t 0 \
	     mount none /own/missing%t tmpfs 0
}

# One round: every client at once; each line of theirs checked.
round() {
	local out=$1 n pids=()
	for n in 1 2 3 4; do
		# shellcheck disable=SC2046 # steps are words
		via "$CALLER" --chroot "$S/j$n" --threads 4 --repeat "$repeat" \
			$(steps "$n") >"$out.$n" 2>&1 &
		pids+=($!)
	done
	via "$CALLER" --repeat "$repeat" mount none "$S/shared/h" tmpfs 0 \
		umount "$S/shared/h" 0 >"$out.h" 2>&1 &
	pids+=($!)
	wait "${pids[@]}"
	cat "$out".[1-4h]
}

last_phase() {
	local n
	via "$CALLER" mount none "$S/shared/h" tmpfs 0
	for n in 1 2 3 4; do
		via "$CALLER" --chroot "$S/j$n" mount none "/shared/j$n-0" tmpfs 0 \
			mount none /own/t0 tmpfs 0
	done
	via "$CALLER" --chroot "$S/j1" mount none /shared/h tmpfs 0
	via "$CALLER" umount "$S/shared/h" 0
}

views() {
	local n
	echo "--- view /"
	cat /proc/self/mountinfo
	for n in 1 2 3 4; do
		echo "--- view $S/j$n"
		"$LSVIEW" "$S/j$n"
	done
}

virtual_views() {
	local n
	echo "--- view /"
	via "$LSVIEW" -s /
	for n in 1 2 3 4; do
		echo "--- view $S/j$n"
		via "$LSVIEW" -s "$S/j$n"
	done
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
setup >"$work/setup" 2>&1 || { cat "$work/setup"; exit 1; }
end=$((SECONDS + ${LOAD_SECONDS:-0}))
r=0
while :; do
	r=$((r + 1))
	t=$SECONDS
	round "$work/out" | LC_ALL=C sort | uniq -c >"$work/calls"
	echo "round $r: $(awk '{ n += $1 } END { print n }' "$work/calls")" \
		"calls in $((SECONDS - t)) s"
	if ((r == 1)); then
		mv "$work/calls" "$work/first"
		sed 's/^ *\([0-9]*\) /= \1 /' "$work/first"
	elif cmp -s "$work/first" "$work/calls"; then
		echo "as round 1"
	else
		echo "unlike round 1:"
		diff "$work/first" "$work/calls"
	fi
	((SECONDS < end)) || break
done
last_phase 2>&1 | sed 's/^/last: /'
views
if [ "$mode" = broker ]; then
	echo "--- virtual"
	virtual_views
fi
