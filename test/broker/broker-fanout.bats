#!/usr/bin/env bats
# A fan-out (issue 10 item 2): a mount on a shared mount received by many
# slaves, then its umount.  The executor binds each copy straight onto its
# place (copy.c: no staging directory, nothing left on the broker's own
# places) and takes the copies out from several threads at once
# (umounts.c), which must leave the broker answering its signals.

load ../lib/broker

N=24

setup() {
	broker_setup
	mkdir -p "$S/a" "$S/src"
	host mount -t tmpfs A "$S/a"
	host mount --make-shared "$S/a"
	mkdir -p "$S/a/t"
	for ((i = 0; i < N; i++)); do
		mkdir -p "$S/r$i"
		host mount --bind "$S/a" "$S/r$i"
		host mount --make-slave "$S/r$i"
	done
	echo hello >"$S/src/f"
}
teardown() { broker_teardown; }

# The kernel's mounts under the sandbox at mountpoint .../NAME, counted.
count_at() {
	sandbox_lines | awk -v n="/$1" 'substr($5, length($5) - length(n) + 1) == n' |
		wc -l
}

@test "a bind received by $N slaves is in each of them and leaves nothing on the staging place" {
	host mount --bind "$S/src" "$S/a/t"
	[ "$(call_result)" = 0 ]
	[ "$(count_at t)" -eq $((N + 1)) ]
	for ((i = 0; i < N; i++)); do
		[ "$(cat "$S/r$i/t/f")" = hello ]
	done
	[ -z "$(ls -A "$STATE/stage")" ]
	# the broker's graph says the same: every copy a slave of the bind
	run shimmed cat /proc/self/mountinfo
	[ "$(grep -c " $S/r[0-9]*/t .* master:" <<<"$output")" -eq "$N" ]
}

@test "its umount takes every copy, and the broker still stops on SIGTERM at once" {
	host mount --bind "$S/src" "$S/a/t"
	host umount "$S/a/t"
	[ "$(call_result)" = 0 ]
	[ "$(count_at t)" -eq 0 ]
	for ((i = 0; i < N; i++)); do
		! is_mountpoint "$S/r$i/t"
	done
	# mounted again and taken again: the threads serve a second batch
	host mount --bind "$S/src" "$S/a/t"
	[ "$(count_at t)" -eq $((N + 1)) ]
	host umount "$S/a/t"
	[ "$(count_at t)" -eq 0 ]
	kill -TERM "$BROKER_PID"
	wait_gone "$BROKER_PID" 5
}

@test "a file bind fans out too, and goes again" {
	touch "$S/a/ft"
	host mount --bind "$S/src/f" "$S/a/ft"
	[ "$(call_result)" = 0 ]
	[ "$(count_at ft)" -eq $((N + 1)) ]
	for ((i = 0; i < N; i++)); do
		[ "$(cat "$S/r$i/ft")" = hello ]
	done
	[ -z "$(ls -A "$STATE/stage")" ]
	host umount "$S/a/ft"
	[ "$(count_at ft)" -eq 0 ]
}

# A fan-out's copies are bound in batches (execplan.c): the record says
# "P" for every copy of the batch before the first is made, "D" for all
# once the last is.  A broker killed between two copies of the batch, right
# after the kernel bound one, or after the last, restarts into the mount
# not made: every copy the batch made is found and taken away, and none
# is left that the record did not name.
@test "a fan-out killed in the middle of its batch of copies restarts with none of them" {
	local k
	broker_stop
	LIBSHARE_FAULT=file:$STATE/fault broker_start
	for k in step:2 step:13 copy:1 copy:13 step:25; do
		echo "$k" >"$STATE/fault"
		run host mount --bind "$S/src" "$S/a/t"
		! broker_alive
		grep -q 'fault injection: killed' "$STATE/sharebrokerd.log"
		LIBSHARE_FAULT=file:$STATE/fault broker_start 2>"$S/start"
		grep -q "recovery: a plan of $((N + 1)) steps was cut short .*undone" \
			"$S/start"
		[ "$(count_at t)" -eq 0 ] || { echo "$k: $(count_at t) left"; false; }
		: >"$STATE/sharebrokerd.log"
	done
	host mount --bind "$S/src" "$S/a/t"
	[ "$(count_at t)" -eq $((N + 1)) ]
	host umount "$S/a/t"
	[ "$(count_at t)" -eq 0 ]
}

# More copies than one batch holds (64, execplan.c): the first batch's
# record says "D" when the broker dies in the second, whose copies say
# "P".  Recovery takes away both: the one done and the one in flight.
@test "a fan-out of 70 killed in its second batch restarts with none of its copies" {
	local i k
	for ((i = N; i < 70; i++)); do
		mkdir -p "$S/r$i"
		host mount --bind "$S/a" "$S/r$i"
		host mount --make-slave "$S/r$i"
	done
	broker_stop
	LIBSHARE_FAULT=file:$STATE/fault broker_start
	for k in step:68 copy:70; do
		echo "$k" >"$STATE/fault"
		run host mount --bind "$S/src" "$S/a/t"
		! broker_alive
		LIBSHARE_FAULT=file:$STATE/fault broker_start 2>"$S/start"
		grep -q "recovery: a plan of 71 steps was cut short .*undone" \
			"$S/start"
		[ "$(count_at t)" -eq 0 ] || { echo "$k: $(count_at t) left"; false; }
	done
	host mount --bind "$S/src" "$S/a/t"
	[ "$(count_at t)" -eq 71 ]
	[ "$(cat "$S/r69/t/f")" = hello ]
}
