#!/usr/bin/env bats
# A restart of the broker loses nothing (issue 9 item 3): mounts covered
# on their mountpoint while the broker restarts stay within its reach
# (the dead broker's holder keeps them for the next one, holder.c), with
# their propagation.  Each scenario runs through the broker, restarted by
# SIGKILL, by SIGTERM and by `sharectl stop`, and natively in a scratch
# copy of the namespace (the kernel propagates there itself); the answers
# of every command and the sandbox's table must be the kernel's:
#   - a covered mount, once uncovered, unmounts (0; EBUSY before);
#   - an rbind of a tree holding a covered mount copies it (EIO before);
#   - a covered shared mount keeps its peer: umount and mount propagate;
# and a broker stopped with nothing covered leaves no holder behind; and
# MNT_EXPIRE's mark stays the kernel's across a restart.  The broker's
# mount namespaces across a restart: broker-nsrestart.bats.

load ../lib/broker
load ../lib/restart

UMOUNT2=$(libshare_find test/diff/umount2)

setup() { broker_setup; }
teardown() { broker_teardown; }

# Runs the steps ($@, one command each, "restart" for a restart) through
# the broker with restarts as $HOW says; prints each step's exit status,
# then the table.
through_broker() {
	local step rc
	for step in "$@"; do
		if [ "$step" = restart ]; then
			restart_by "$HOW" || echo "restart failed"
			continue
		fi
		# a failure is an answer to compare, not the end (bats: set -e)
		host $step >/dev/null 2>&1 && rc=0 || rc=$?
		echo "$rc $step"
	done
	table
}

# The same steps as the kernel answers them, in a scratch namespace.
natively() {
	native bash -c "
		$(declare -f table)
		S='$S'
		for step in \"\$@\"; do
			[ \"\$step\" = restart ] && continue
			\$step >/dev/null 2>&1
			echo \"\$? \$step\"
		done
		table" bash "$@"
}

# Asserts that the steps give through the restarted broker what they give
# natively.
same_across_restarts() {
	local kernel broker
	kernel=$(natively "$@")
	# not in a subshell: the restarts set BROKER_PID for the teardown
	through_broker "$@" >"$BATS_TEST_TMPDIR/broker.out"
	broker=$(cat "$BATS_TEST_TMPDIR/broker.out")
	if [ "$broker" != "$kernel" ]; then
		echo "restarted by $HOW, unlike the kernel (-kernel +broker):" >&2
		diff <(echo "$kernel") <(echo "$broker") >&2
		return 1
	fi
	# the broker that answered last still counts the kernel's mounts
	assert_count_agrees
}

covered_umount() {
	mkdir -p "$S/a"
	same_across_restarts \
		"mount -t tmpfs LOW $S/a" \
		"mount -t tmpfs TOP $S/a" \
		restart \
		"umount $S/a" \
		"umount $S/a"
}

covered_rbind() {
	mkdir -p "$S/a" "$S/b"
	same_across_restarts \
		"mount -t tmpfs A $S/a" \
		"mkdir $S/a/sub" \
		"mount -t tmpfs LOW $S/a/sub" \
		"mount -t tmpfs TOP $S/a/sub" \
		restart \
		"mount --rbind $S/a $S/b" \
		"umount $S/b/sub" \
		"umount $S/b/sub" \
		"umount $S/b"
}

# a and b peers, both covered by the propagated TOP: after the restart,
# TOP's umount, and a mount and umount under a, reach b too.
covered_peers() {
	mkdir -p "$S/a" "$S/b"
	same_across_restarts \
		"mount -t tmpfs A $S/a" \
		"mount --make-shared $S/a" \
		"mount --bind $S/a $S/b" \
		"mount -t tmpfs TOP $S/a" \
		restart \
		"umount $S/a" \
		"mkdir $S/a/x" \
		"mount -t tmpfs X $S/a/x" \
		"umount $S/b/x" \
		"mount -t tmpfs Y $S/b/x" \
		restart \
		"umount $S/a/x"
}

# MNT_EXPIRE's mark is the kernel's (issue 29): a restart between the
# two calls keeps it, and a use between them (a stat) still clears it.
expire_marks() {
	mkdir -p "$S/a" "$S/b"
	same_across_restarts \
		"mount -t tmpfs A $S/a" \
		"$UMOUNT2 -e $S/a" \
		restart \
		"$UMOUNT2 -e $S/a" \
		"mount -t tmpfs B $S/b" \
		"$UMOUNT2 -e $S/b" \
		restart \
		"stat $S/b" \
		"$UMOUNT2 -e $S/b" \
		restart \
		"$UMOUNT2 -e $S/b"
}

@test "MNT_EXPIRE's mark outlives a restart, a use still clears it: SIGKILL" {
	HOW=kill expire_marks
}

@test "MNT_EXPIRE's mark outlives a restart, a use still clears it: SIGTERM" {
	HOW=term expire_marks
}

@test "MNT_EXPIRE's mark outlives a restart, a use still clears it: sharectl stop" {
	HOW=stop expire_marks
}

@test "covered mount unmounts after a restart: SIGKILL" {
	HOW=kill covered_umount
}

@test "covered mount unmounts after a restart: SIGTERM" {
	HOW=term covered_umount
}

@test "covered mount unmounts after a restart: sharectl stop" {
	HOW=stop covered_umount
}

@test "rbind of a tree holding a covered mount after a restart: SIGKILL" {
	HOW=kill covered_rbind
}

@test "rbind of a tree holding a covered mount after a restart: SIGTERM" {
	HOW=term covered_rbind
}

@test "rbind of a tree holding a covered mount after a restart: sharectl stop" {
	HOW=stop covered_rbind
}

@test "covered peers keep propagating after restarts: SIGKILL" {
	HOW=kill covered_peers
}

@test "covered peers keep propagating after restarts: SIGTERM" {
	HOW=term covered_peers
}

@test "covered peers keep propagating after restarts: sharectl stop" {
	HOW=stop covered_peers
}

# TOP, then LOW under it on $S/a, unmount through the broker (LOW reached
# through a previous broker's holder): 0 each, nothing left there.
unmount_low_top() {
	host umount "$S/a"
	[ "$(call_result)" = 0 ]
	host umount "$S/a"
	[ "$(call_result)" = 0 ]
	! is_mountpoint "$S/a"
}

# The holder: gone after a clean stop when nothing is covered; kept, and
# then ended by the next broker, which reaches what it kept, when
# something is.
@test "a holder stays only while a stopped broker left covered mounts" {
	local pid i
	mkdir -p "$S/a"
	host mount -t tmpfs LOW "$S/a"
	read -r pid _ <"$STATE/holder.pid"
	[ "$(cat "/proc/$pid/comm")" = sharebrokerhold ]
	"$SHARECTL" stop >/dev/null
	wait_dead "$BROKER_PID"
	wait_dead "$pid"              # nothing covered: it exits at once
	[ ! -e "$STATE/holder.pid" ]
	broker_start
	host mount -t tmpfs TOP "$S/a"
	read -r pid _ <"$STATE/holder.pid"
	"$SHARECTL" stop >/dev/null
	wait_dead "$BROKER_PID"
	sleep 0.2
	[ "$(cat "/proc/$pid/comm")" = sharebrokerhold ]   # LOW is covered
	broker_start
	wait_dead "$pid"              # the new broker ended it
	unmount_low_top
}

# A broker killed at start after its holder file names its own holder
# beside the previous one, before it ends that one (LIBSHARE_FAULT=holder):
# two holders keep the covered mount.  The next broker reaches it through
# the first and ends both; before, the file named only the previous one,
# already ended, and the covered mount was out of reach (EIO).
@test "a broker killed between two holders: the next ends both, reaches what they kept" {
	local old new second pid
	mkdir -p "$S/a"
	host mount -t tmpfs LOW "$S/a"
	host mount -t tmpfs TOP "$S/a"
	"$SHARECTL" stop >/dev/null
	wait_dead "$BROKER_PID"
	read -r old _ <"$STATE/holder.pid"
	LIBSHARE_FAULT=holder run broker_start
	[ "$status" -ne 0 ]
	[[ $output == *"fault injection: killed with two holders named"* ]]
	{ read -r new _; read -r second _; } <"$STATE/holder.pid"
	[ "$second" = "$old" ] && [ "$new" != "$old" ]
	for pid in "$old" "$new"; do
		[ "$(cat "/proc/$pid/comm")" = sharebrokerhold ]
	done
	broker_start
	wait_dead "$old"
	wait_dead "$new"
	unmount_low_top
}

# The tests' own end_holders (test/lib/holder.bash) ends the holders of
# the state directories under the paths it is given, and no others: a
# view of another run's state directory inside a namespace copy (OTHER/
# ns/1 shows the whole tree, /tmp and its state directories included, as
# a copy of the broker's does) must not lead it to that run's live holder,
# which its broker's covered mounts would need after a restart.
@test "end_holders leaves alone the holder of a state directory seen through a copy" {
	local pid
	read -r pid _ <"$STATE/holder.pid"
	mkdir -p "$S/other/ns/1"
	mount --bind "$S" "$S/other/ns/1"    # OTHER/ns/1/state: our STATE
	[ -e "$S/other/ns/1/state/holder.pid" ]
	end_holders "$S/other"
	[ "$(cut -d' ' -f3 "/proc/$pid/stat")" = S ]   # alive, not a zombie
	umount -l "$S/other/ns/1"             # the broker holds it (drift)
	end_holders "$STATE"                 # its own: ended
	! [ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)" = S ]
}
