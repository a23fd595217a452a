#!/usr/bin/env bats
# The broker's mount namespaces come back whole after a restart (issue 9
# item 3, nsstate.c): the table of a process in one, its number, sharectl
# ns, setns into it, propagation to and from it, umount in it, and its end
# when its last process goes or the last descriptor of its ns file is
# closed; each by SIGKILL, SIGTERM and `sharectl stop`, and natively in a
# scratch copy of the namespace.  Covered mounts: broker-restart.bats.

load ../lib/broker
load ../lib/restart

NSCALL=$(libshare_find test/shim/nscall)

setup() { broker_setup; }
teardown() { broker_teardown; }

# PID's table as the shim shows it (/proc/PID/mountinfo, read from the
# host), mount ids and peer groups numbered in order of appearance: a
# restarted broker numbers them afresh (README, Limits).
ns_view() {
	shimmed cat "/proc/$1/mountinfo" | awk '
		function num(k) { if (!(k in seen)) seen[k] = ++n; return seen[k] }
		{
			$1 = num("m" $1); $2 = num("m" $2)
			for (i = 7; $i != "-"; i++)
				if (split($i, kv, ":") == 2)
					$i = kv[1] ":" num("g" kv[2])
			print
		}'
}

# The namespace scenario, run with nscall as $1 (the shim's, or the
# kernel's in a native copy): a jailed process P unshares, mounts P on
# its /p and waits; the hook $2 PID runs (a restart, or nothing); the host
# mounts on its shared /a/y (P's copy of /a is a peer: it receives) and on
# its private /q (P does not); then P lists them, unmounts its /p and the
# received /a/y (which takes the host's away too: a peer's umount
# propagates).  Prints P's steps and whether the host's /a/y is still a
# mount point.  Natively every mount of the copy of the table is private
# but those made here.
ns_scenario() {
	local call=$1 hook=$2 pid
	rm -f "$J/ready" "$J/go" "$J/done" "$J/end"
	mkdir -p "$J/a/y" "$J/p" "$J/q"
	$call mount "$J/a" "$J/a" - bind mount - "$J/a" - shared >/dev/null
	$call chroot "$J" unshare ns mount P /p tmpfs 0 touch /p/own \
		touch /ready waitfor /go ls /a/y ls /q umount /p ls /p \
		umount /a/y touch /done waitfor /end >"$J.p" 2>&1 &
	BG_PIDS+=("$!")
	wait_file "$J/ready"
	pid=$(pgrep -f "^$NSCALL chroot $J unshare ns mount P")
	$hook "$pid"
	$call mount Y "$J/a/y" tmpfs 0 mount Q "$J/q" tmpfs 0 >/dev/null
	touch "$J/a/y/fromhost" "$J/q/fromhost"
	touch "$J/go"
	wait_file "$J/done"
	cat "$J.p"
	awk -v p="$J/a/y" '$5 == p { n++ } END { print "host a/y mounts: " n+0 }' \
		/proc/self/mountinfo
	touch "$J/end"
	wait
	$call umount "$J/q" umount "$J/a" >/dev/null
}

# The hook: the broker restarted as $HOW says while P waits; P's table,
# its number, its line of sharectl ns (the host's counts every process,
# the test's own among them) and a setns into it from the jail are what
# they were before.
restart_around() {
	local pid=$1 view num list entered
	view=$(ns_view "$pid")
	num=$(shimmed readlink "/proc/$pid/ns/mnt")
	list=$("$SHARECTL" ns | grep -v "(the broker's own)")
	entered=$(shimmed "$NSCALL" chroot "$J" hold "/proc/$pid/ns/mnt" \
		  setns-held ns ls /p ls /a)
	[[ $num == mnt:* && $list == *"$num"*": $pid"* ]]
	[[ $entered == *"ls /p = own"* ]]
	restart_by "$HOW"
	diff -u <(echo "$view") <(ns_view "$pid") >&2
	[ "$(shimmed readlink "/proc/$pid/ns/mnt")" = "$num" ]
	diff -u <(echo "$list") <("$SHARECTL" ns |
		grep -v "(the broker's own)") >&2
	diff -u <(echo "$entered") <(shimmed "$NSCALL" chroot "$J" \
		hold "/proc/$pid/ns/mnt" setns-held ns ls /p ls /a) >&2
}

ns_restarted() {
	local kernel
	kernel=$(native bash -c "
		$(declare -f ns_scenario wait_file)
		J='$J' BG_PIDS=()
		ns_scenario '$NSCALL' :" 2>&1)
	ns_scenario "shimmed $NSCALL" restart_around >"$BATS_TEST_TMPDIR/broker.out"
	diff -u <(echo "$kernel") "$BATS_TEST_TMPDIR/broker.out"
	[[ $kernel == *"ls /a/y = fromhost"*"ls /q ="$'\n'* ]]
	[[ $kernel == *"host a/y mounts: 0"* ]]
	ns_all_gone                     # P has ended: its namespace with it
}

@test "a namespace comes back whole after a restart: SIGKILL" {
	HOW=kill ns_restarted
}

@test "a namespace comes back whole after a restart: SIGTERM" {
	HOW=term ns_restarted
}

@test "a namespace comes back whole after a restart: sharectl stop" {
	HOW=stop ns_restarted
}

# A namespace whose last process has gone lives on while a descriptor of
# its ns file is open (the kernel's reference): P unshares from the host's
# root and mounts on /n, H opens P's ns file, P ends, the hook $2 runs,
# then H enters with that descriptor and lists /n.  Prints H's steps.
held_scenario() {
	local call=$1 hook=$2 pid
	rm -f "$S/ready" "$S/go" "$S/held" "$S/h"
	mkdir -p "$S/n"
	$call unshare ns mount N "$S/n" tmpfs 0 touch "$S/n/in" \
		touch "$S/ready" waitfor "$S/go" >/dev/null 2>&1 &
	BG_PIDS+=("$!")
	wait_file "$S/ready"
	pid=$(pgrep -f "^$NSCALL unshare ns mount N")
	$call hold "/proc/$pid/ns/mnt" touch "$S/held" waitfor "$S/h" \
		setns-held ns ls "$S/n" >"$S.h" 2>&1 &
	BG_PIDS+=("$!")
	wait_file "$S/held"
	touch "$S/go"
	while kill -0 "$pid" 2>/dev/null; do
		sleep 0.05
	done
	$hook
	touch "$S/h"
	wait
	cat "$S.h"
}

# The hook: no process is left in P's namespace, only H's descriptor; the
# broker is killed and restarted; the namespace is still there.
kill_while_held() {
	[ -n "$(ls "$STATE/ns")" ]
	restart_by kill
	"$SHARECTL" status >/dev/null   # a tick: a token nobody held goes
	[ -n "$(ls "$STATE/ns")" ]
}

@test "an ns file held across a restart keeps its namespace, and enters it" {
	local kernel
	kernel=$(native bash -c "
		$(declare -f held_scenario wait_file)
		S='$S' NSCALL='$NSCALL' BG_PIDS=()
		held_scenario '$NSCALL' :" 2>&1)
	held_scenario "shimmed $NSCALL" kill_while_held \
		>"$BATS_TEST_TMPDIR/broker.out"
	diff -u <(echo "$kernel") "$BATS_TEST_TMPDIR/broker.out"
	[[ $kernel == *"setns-held: ok"*"ls $S/n = in"* ]]
	ns_all_gone                     # H has ended: the namespace with it
}
