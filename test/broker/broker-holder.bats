#!/usr/bin/env bats
# A stopped broker's holder (holder.c) lives only while a next broker can
# use it (issue 26 item 4).  A broker in a throwaway namespace (unshare
# -m, as a test harness or a jail script runs it), given a covered mount
# and stopped, left its holder in pause() for ever: 341 of them after an
# hour of test runs, each pinning a namespace nobody could enter.  Now a
# holder ends when no other process is left in its mount namespace, at
# `sharectl stop --final`, and when a broker has adopted what it kept;
# its name and command line say what it is (sharebrokerhold), not
# sharebrokerd.

load ../lib/broker

setup() { broker_setup; }
teardown() { broker_teardown; }

# Whether pid $1 has ended (a zombie has: its descriptors are closed),
# waiting up to $2 (default 5) seconds.
ended() {
	local i st
	for ((i = 0; i < ${2:-5} * 20; i++)); do
		read -r st <"/proc/$1/stat" 2>/dev/null || return 0
		[[ ${st##*) } == Z* ]] && return 0
		sleep 0.05
	done
	return 1
}

# In a namespace of its own (unshare -m): a broker on state directory
# $S/c$1, a covered mount (LOW under TOP on $S/c$1/a) made through it, a
# `sharectl stop`.  Prints the pid of the holder left (checked to be one,
# named as one, by holder_in) and, if $2 is given, leaves `sleep $2` in
# the namespace, its pid in $S/c$1/sleeper.
throwaway() {
	local d=$S/c$1
	mkdir -p "$d/state" "$d/a"
	unshare -m --propagation private bash -c '
		d=$1 stay=$2
		export LIBSHARE_SOCKET=@libshare-bats-$$-throwaway
		"$SHAREBROKERD" --state-dir "$d/state" --log "$d/log" || exit 1
		LD_PRELOAD=$SHIM mount -t tmpfs LOW "$d/a" &&
		LD_PRELOAD=$SHIM mount -t tmpfs TOP "$d/a" || exit 1
		read -r broker _ <"$d/state/sharebrokerd.pid"
		if [ -n "$stay" ]; then
			sleep "$stay" 3>&- >/dev/null 2>&1 &
			echo $! >"$d/sleeper"
		fi
		"$SHARECTL" stop >/dev/null || exit 1
		while kill -0 "$broker" 2>/dev/null; do sleep 0.05; done
		holder_in "$d/state"' bash "$d" "${2:-}"
}
export -f holder_in
export SHAREBROKERD SHARECTL SHIM

@test "ten brokers stopped in throwaway namespaces leave no holder" {
	local i pids=() pid
	for ((i = 0; i < 10; i++)); do
		pid=$(throwaway "$i")
		[ -n "$pid" ]
		pids+=("$pid")
	done
	for pid in "${pids[@]}"; do
		ended "$pid" 5
	done
	for ((i = 0; i < 10; i++)); do     # its pid file gone with it
		[ ! -e "$S/c$i/state/holder.pid" ]
	done
}

@test "a holder keeps its namespace's covered mount while a process is there" {
	local pid sleeper
	pid=$(throwaway 0 30)
	[ -n "$pid" ]
	run ended "$pid" 3            # sleep is there: it stays, checking
	[ "$status" -ne 0 ]
	[ "$(cat "/proc/$pid/comm")" = sharebrokerhold ]
	read -r sleeper <"$S/c0/sleeper"
	[ "/proc/$sleeper/ns/mnt" -ef "/proc/$pid/ns/mnt" ]
	kill "$sleeper"
	ended "$pid" 5
}

@test "a holder's name and command line say sharebrokerhold" {
	local pid cmdline
	read -r pid _ <"$STATE/holder.pid"
	[ "$(cat "/proc/$pid/comm")" = sharebrokerhold ]
	cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline")
	[ "$(echo $cmdline)" = sharebrokerhold ]
	pgrep -x sharebrokerhold | grep -qx "$pid"
	run pgrep -f sharebrokerd
	[[ " $(echo $output) " != *" $pid "* ]]
}

@test "sharectl stop --final ends the holder; every mount stays" {
	local pid
	mkdir -p "$S/a"
	host mount -t tmpfs LOW "$S/a"
	host mount -t tmpfs TOP "$S/a"
	read -r pid _ <"$STATE/holder.pid"
	run "$SHARECTL" stop --final
	[ "$status" -eq 0 ]
	wait_gone "$BROKER_PID"
	ended "$pid" 2
	[ ! -e "$STATE/holder.pid" ]
	[ "$(awk -v p="$S/a" '$5 == p' /proc/self/mountinfo | wc -l)" = 2 ]
	grep -q "final stop: holder $pid ended" "$STATE/sharebrokerd.log"
	broker_start 2>"$BATS_TEST_TMPDIR/start.err"
	grep -q "no holder of a previous broker" "$BATS_TEST_TMPDIR/start.err"
	grep -q "on $S/a is covered: out of the broker's reach" \
		"$BATS_TEST_TMPDIR/start.err"     # nothing kept LOW for it
}

@test "--final is stop's alone" {
	run "$SHARECTL" status --final
	[ "$status" -eq 2 ]
	run "$SHARECTL" tree --final
	[ "$status" -eq 2 ]
	assert_broker_serves
}

@test "a broker that adopted a holder's mounts ends it; its own stays" {
	local old new
	mkdir -p "$S/a"
	host mount -t tmpfs LOW "$S/a"
	host mount -t tmpfs TOP "$S/a"
	read -r old _ <"$STATE/holder.pid"
	broker_stop
	run ended "$old" 2            # the test's namespace: kept
	[ "$status" -ne 0 ]
	broker_start
	ended "$old" 2
	read -r new _ <"$STATE/holder.pid"
	[ "$new" != "$old" ] && [ "$(cat "/proc/$new/comm")" = sharebrokerhold ]
	host umount "$S/a"            # TOP, then LOW: reached through old
	[ "$(call_result)" = 0 ]
	host umount "$S/a"
	[ "$(call_result)" = 0 ]
}
