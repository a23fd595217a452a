#!/usr/bin/env bats
# An open mount table stays live (issue 13 item 3, daemon/broker/tab/fusetab.c):
# through the shim, as on Linux, a read from offset 0 shows the table as
# it is now, and poll, select and epoll report POLLPRI|POLLERR once after
# every change: one made through the broker, one propagated between host
# and jail, one made behind the broker's back.  findmnt --poll (libmount's
# monitor) sees them within a second.  The broker's own filesystem shows
# nowhere and outlives it nowhere.

load ../lib/broker

MTPOLL=$(libshare_find test/shim/mtpoll)
LIBMOUNT_SO=$(ldd "$(command -v findmnt)" | awk '$1 == "libmount.so.1" { print $3 }')

setup() {
	broker_setup
	mkdir -p "$S/d" "$J/d" "$S/share/x" "$S/share/y" "$J/share"
}

teardown() { broker_teardown; }

# A peer of $S/share in the jail: mounts go both ways.
share_with_jail() {
	host mount --bind "$S/share" "$S/share"
	host mount --make-shared "$S/share"
	host mount --bind "$S/share" "$J/share"
}

# CMD in the jail as jail() runs it, libmount preloaded: mapped before
# spy's chroot, it is there for mtpoll's dlopen, which the jail could not
# serve.
jail_libmount() {
	legacy env LD_PRELOAD="$SPY $SHIM $LIBMOUNT_SO" SPY_ROOT="$J" \
		SPY_LOG="$SPY_LOG" "$@"
}

# WHERE (host or jail) runs mtpoll ARGS in the background; returns once it
# is armed (it has read the table and waits).  POLLED: its output file.
poller() {
	local where=$1 i
	shift
	POLLED=$BATS_TEST_TMPDIR/bg.${#BG_PIDS[@]}
	background "$where" "$MTPOLL" "$@"
	for ((i = 0; i < 250; i++)); do
		grep -q '^armed' "$POLLED" 2>/dev/null && return 0
		sleep 0.02
	done
	echo "mtpoll never armed:" >&2
	cat "$POLLED" >&2
	return 1
}

# Waits for the poller; its output in $output, the milliseconds from its
# arming to the event in $ms (empty: none).
poller_result() {
	wait "$BG" || true
	output=$(cat "$POLLED")
	echo "$output" | sed -n '1,5p'
	ms=$(sed -n 's/^event: .* in \([0-9]*\)\.[0-9]* ms$/\1/p' <<<"$output")
}

# WHERE runs findmnt --poll --first-only in the background, armed once the
# broker served it a table (its log says so: a table more than before) and
# libmount had the time to add it to epoll.
tables_served() {
	grep -c 'mounttable from pid .*: ok' "$STATE/sharebrokerd.log" || true
}

findmnt_poll() {
	local i n
	n=$(tables_served)
	FINDMNT_OUT=$BATS_TEST_TMPDIR/bg.${#BG_PIDS[@]}
	background "$1" findmnt --poll --first-only --timeout 3000 \
		-o ACTION,TARGET
	for ((i = 0; i < 250; i++)); do
		(($(tables_served) > n)) && break
		sleep 0.02
	done
	sleep 0.3
}

# Runs CMD, then waits for findmnt; $output its lines, $ms the time from
# CMD's start to findmnt's end.
findmnt_after() {
	local t0
	t0=$(date +%s%N)
	"$@"
	wait "$BG" || true
	ms=$((($(date +%s%N) - t0) / 1000000))
	output=$(cat "$FINDMNT_OUT")
	echo "$output (${ms} ms)"
}

@test "host: findmnt --poll sees a mount and an umount made through the shim, within a second" {
	findmnt_poll host
	findmnt_after host mount -t tmpfs POLLED "$S/d"
	[[ $output == *"mount "*"$S/d"* ]]
	((ms < 2500))  # a second on an idle machine; slack for a loaded one
	findmnt_poll host
	findmnt_after host umount "$S/d"
	[[ $output == *"umount "*"$S/d"* ]]
	((ms < 2500))  # a second on an idle machine; slack for a loaded one
}

@test "jail: libmount's monitor sees an umount made in the jail" {
	host mount -t tmpfs GOING "$S/jail/d"
	poller jail_libmount libmount /proc/self/mountinfo
	jail umount /d
	poller_result
	grep -q '^libmount: /proc/self/mountinfo changed' <<<"$output"
	grep -q '^event: PRI in' <<<"$output"
	((ms < 2500))  # a second on an idle machine; slack for a loaded one
	grep -q '^again: none$' <<<"$output"
	! grep -q ' GOING ' <<<"$output"
}

@test "jail: findmnt --poll sees a mount and an umount made in the jail, within a second" {
	findmnt_poll jail
	findmnt_after jail mount -t tmpfs POLLED /d
	[[ $output == *"mount "*"/d"* ]]
	[[ $output != *"$S"* ]]
	((ms < 2500))  # a second on an idle machine; slack for a loaded one
	findmnt_poll jail
	findmnt_after jail umount /d
	[[ $output == *"umount "*"/d"* ]]
	((ms < 2500))  # a second on an idle machine; slack for a loaded one
}

@test "host: poll, select, epoll, libmount's epoll-et and its monitor report a change once; pread and lseek read it fresh" {
	local how
	for how in poll select epoll epoll-et libmount; do
		poller host "$how" /proc/self/mountinfo
		host mount -t tmpfs "ON-$how" "$S/d"
		poller_result
		grep -q '^idle: none$' <<<"$output"
		case $how in
		select) grep -q '^event: PRI in' <<<"$output" ;;
		libmount) grep -q '^event: PRI in' <<<"$output"
			grep -q '^libmount: /proc/self/mountinfo changed' <<<"$output" ;;
		epoll-et) grep -q '^event: IN|ERR in' <<<"$output" ;;
		*) grep -q '^event: PRI|ERR in' <<<"$output" ;;
		esac
		((ms < 2500))  # a second on an idle machine; slack for a loaded one
		grep -q '^again: none$' <<<"$output"
		grep -q '^fresh: same$' <<<"$output"
		grep -q " $S/d .* ON-$how " <<<"$output"
		host umount "$S/d"
	done
}

@test "host and jail: no event while nothing changes, nor for a refused call" {
	poller host -t 1200 epoll /proc/self/mountinfo
	host mount --make-private "$S/nowhere" 2>/dev/null || true
	poller_result
	grep -q '^event: none$' <<<"$output"
	poller jail -t 1000 poll /proc/self/mountinfo
	poller_result
	grep -q '^event: none$' <<<"$output"
	grep -q '^fresh: same$' <<<"$output"
}

@test "jail: a mount propagated from the host wakes a poller in the jail, and its fresh table has it" {
	share_with_jail
	poller jail epoll /proc/self/mountinfo
	host mount -t tmpfs FROM-HOST "$S/share/x"
	poller_result
	grep -q '^event: PRI|ERR in' <<<"$output"
	((ms < 2500))  # a second on an idle machine; slack for a loaded one
	grep -q ' /share/x .* FROM-HOST ' <<<"$output"
	[[ $output != *"$S"* ]]
}

@test "host: a mount propagated from the jail wakes a poller on the host" {
	share_with_jail
	poller host poll /proc/self/mountinfo
	jail mount -t tmpfs FROM-JAIL /share/y
	poller_result
	grep -q '^event: PRI|ERR in' <<<"$output"
	((ms < 2500))  # a second on an idle machine; slack for a loaded one
	grep -q " $S/share/y .* FROM-JAIL " <<<"$output"
}

@test "host and jail: a mount made behind the broker's back reaches pollers, and their tables" {
	poller host epoll /proc/self/mountinfo
	local host_out=$POLLED host_pid=$BG
	poller jail poll /proc/self/mountinfo
	mount -t tmpfs DRIFT "$J/d"           # no shim: the kernel alone
	poller_result
	grep -q '^event: PRI|ERR in' <<<"$output"
	((ms < 2500))  # a second on an idle machine; slack for a loaded one
	grep -q ' /d .* DRIFT ' <<<"$output"
	BG=$host_pid POLLED=$host_out poller_result
	grep -q '^event: PRI|ERR in' <<<"$output"
	((ms < 2500))  # a second on an idle machine; slack for a loaded one
	grep -q " $J/d .* DRIFT " <<<"$output"
	grep -q 'behind the broker' "$STATE/sharebrokerd.log"
}

@test "the broker's FUSE filesystem shows in no table, and no broker leaves one behind" {
	run host cat /proc/self/mountinfo
	[[ $output != *fuse* ]]
	! grep -q ' - fuse ' /proc/self/mountinfo
	broker_stop
	! grep -q ' - fuse ' /proc/self/mountinfo
	# a dead one on STATE/tab, as a broker killed at start would leave
	mkdir -p "$STATE/tab"
	exec 7<>/dev/fuse
	mount -t fuse -o fd=7,rootmode=40000,user_id=0,group_id=0 stale \
		"$STATE/tab"
	exec 7>&-
	broker_start
	! grep -q ' - fuse ' /proc/self/mountinfo
	run host cat /proc/self/mountinfo
	[[ $output != *stale* ]]
	assert_count_agrees
}

@test "--no-fuse: the table is a snapshot, as without FUSE, and says so in the log" {
	broker_restart --no-fuse
	grep -q 'mount tables are snapshots' "$STATE/sharebrokerd.log"
	poller host -t 500 poll /proc/self/mountinfo
	host mount -t tmpfs SNAP "$S/d"
	poller_result
	grep -q '^event: none$' <<<"$output"
	! grep -q ' SNAP ' <<<"$output"
	run host cat /proc/self/mountinfo
	[[ $output == *" SNAP "* ]]
}

@test "without a usable /dev/fuse the broker logs it once and serves snapshots" {
	local rc=0
	broker_stop
	mount --bind /dev/null /dev/fuse     # opens, but no FUSE mount takes it
	broker_start || rc=$?
	umount -l /dev/fuse                  # the broker holds it: lazily
	[ "$rc" -eq 0 ]
	[ "$(grep -c 'no FUSE' "$STATE/sharebrokerd.log")" -eq 1 ]
	poller host -t 500 poll /proc/self/mountinfo
	host mount -t tmpfs SNAP "$S/d"
	poller_result
	grep -q '^event: none$' <<<"$output"
	run host cat /proc/self/mountinfo
	[[ $output == *" SNAP "* ]]
}

# What mtpoll's lines say, times left out.
poll_says() {
	grep -E '^(idle|spin|event|again|fresh):' | sed 's/ in [0-9.]* ms$//'
}

@test "host: poll, select and epoll report what the kernel's table reports: nothing while nothing changes, PRI|ERR once after a mount" {
	local how native_says shim_says
	for how in poll select epoll; do
		native_says=$(native "$MTPOLL" -t 300 -n 100 "$how" \
			/proc/self/mountinfo true | poll_says)
		shim_says=$(host "$MTPOLL" -t 300 -n 100 "$how" \
			/proc/self/mountinfo true | poll_says)
		echo "$how, nothing changes: kernel: $native_says; libshare: $shim_says"
		[[ $native_says == *"event: none"* ]]
		[ "$shim_says" = "$native_says" ]
		native_says=$(native "$MTPOLL" -n 100 "$how" /proc/self/mountinfo \
			mount -t tmpfs "K-$how" "$S/d" | poll_says)
		shim_says=$(host "$MTPOLL" -n 100 "$how" /proc/self/mountinfo \
			mount -t tmpfs "L-$how" "$S/d" | poll_says)
		echo "$how, a mount: kernel: $native_says; libshare: $shim_says"
		[[ $native_says == *"event: "*PRI* ]]
		[ "$shim_says" = "$native_says" ]
		host umount "$S/d"
	done
}

# The broker's wakeups so far: its threads' voluntary context switches,
# one for each FUSE request its FUSE thread takes.
broker_wakeups() {
	cat /proc/"$BROKER_PID"/task/*/status |
		awk '$1 == "voluntary_ctxt_switches:" { n += $2 } END { print n }'
}

@test "jail: an open mountinfo asked 20000 times by epoll while nothing changes: nothing reported, no work for the broker" {
	local w0 w1
	w0=$(broker_wakeups)
	run jail "$MTPOLL" -t 100 -n 20000 epoll /proc/self/mountinfo
	w1=$(broker_wakeups)
	echo "$output" | sed -n '1,5p'
	echo "broker wakeups: $((w1 - w0))"
	[ "$status" -eq 0 ]
	grep -q '^spin: none$' <<<"$output"
	grep -q '^event: none$' <<<"$output"
	# the open, its reads, the epoll set's one ask and the close take a
	# few; 20000 asks that each reached the broker would take thousands
	(((w1 - w0) < 200))
}
