#!/usr/bin/env bats
# The lifetime of the broker's mount namespaces (issue 11, item 3): one
# lives while a process is in it or a descriptor of its ns file is open,
# then goes as the kernel frees one (put_mnt_ns(): umount_tree() of the
# whole copy without UMOUNT_PROPAGATE: nothing of the teardown reaches
# peers or masters elsewhere), leaving nothing behind.

load ../lib/broker

NSCALL=$(libshare_find test/shim/nscall)

setup() {
	broker_setup
	mkdir -p "$J/a/x" "$J/a/y"
}

teardown() {
	broker_teardown
}

ns() {
	shimmed "$NSCALL" "$@"
}

# What must end as it started: the graph, every view, the state file, the
# kernel's table and the state directory's entries.  The jails come first:
# listing them forgets those no process lives in any more (policy.c), as
# ns_all_gone's status does before the second picture.  The state file's
# "# plan N" names the last plan recorded (intent.c), and a namespace's
# copy and end are plans: it moves on.  The saved state is a snapshot
# and a journal of changes since: a clean stop writes it whole into the
# state file (and the broker that starts again must carry on the same).
picture() {
	"$SHARECTL" jails
	"$SHARECTL" graph
	"$SHARECTL" tree
	broker_stop
	sed '/^# plan [0-9]*$/d' "$STATE/state"
	[ ! -s "$STATE/journal" ] || echo "journal not empty after a stop"
	broker_start
	cat /proc/self/mountinfo
	(cd "$STATE" && find . ! -name sharebrokerd.log | LC_ALL=C sort)
}

# A cycle that leaks leaves its mark at once: CYCLES (LIBSHARE_NS_CYCLES,
# default 250) of them, and a third as many from a jail.
CYCLES=${LIBSHARE_NS_CYCLES:-250}

@test "$CYCLES cycles of unshare -m true leave nothing behind" {
	ns mount "$J/a" "$J/a" - bind mount - "$J/a" - shared >/dev/null
	picture >"$BATS_TEST_TMPDIR/before"
	local i
	for ((i = 0; i < CYCLES; i++)); do
		shimmed unshare -m --propagation unchanged true || {
			echo "cycle $i failed" >&2
			return 1
		}
	done
	ns_all_gone
	picture >"$BATS_TEST_TMPDIR/after"
	diff -u "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
}

@test "$((CYCLES / 9 * 3)) cycles from a jail (libc, syscall, clone) leave nothing behind" {
	ns mount "$J/a" "$J/a" - bind mount - "$J/a" - shared >/dev/null
	ns chroot "$J" >/dev/null       # the jail is known before
	picture >"$BATS_TEST_TMPDIR/before"
	local i steps=()
	for ((i = 0; i < CYCLES / 9; i++)); do
		steps+=(fork unshare ns \; fork sys-unshare ns \;
			clone readlink /proc/self/ns/mnt \;)
	done
	run ns chroot "$J" "${steps[@]}"
	[ "$status" -eq 0 ]
	[ "$(grep -c ': exit 0$' <<<"$output")" -eq $((CYCLES / 9 * 3)) ]
	ns_all_gone
	picture >"$BATS_TEST_TMPDIR/after"
	diff -u "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
}

@test "the teardown propagates nothing: a peer's mounts stay, slaves are re-homed" {
	ns mount "$J/a" "$J/a" - bind mount - "$J/a" - shared >/dev/null
	# A's copy of /a is a peer: its mount reaches the host; a slave of
	# the group made on the host keeps its master when A's copy goes
	ns chroot "$J" unshare ns mount t /a/y tmpfs 0 touch /a/y/fromA \
		>/dev/null 2>&1
	mkdir -p "$J/s"
	ns mount "$J/a" "$J/s" - bind mount - "$J/s" - slave >/dev/null
	ns_all_gone
	[ -e "$J/a/y/fromA" ]
	run shimmed findmnt -n -o TARGET,PROPAGATION "$J/a/y"
	[ "$output" = "$J/a/y shared" ]
	ns mount t "$J/a/x" tmpfs 0 >/dev/null
	touch "$J/a/x/late"
	[ -e "$J/s/x/late" ]            # the slave still receives
	ns umount "$J/s/x" umount "$J/s/y" umount "$J/s" umount "$J/a/x" \
		umount "$J/a/y" >/dev/null
}

@test "a process that closed its membership keeps the namespace alive" {
	background ns chroot "$J" unshare ns mount t /a/x tmpfs 0 closefds \
		touch /ready waitfor /go ls /a/x touch /a/x/mark ls /a/x
	wait_file "$J/ready"
	sleep 0.3                       # ticks of the broker: roots are read
	[ -d "$STATE/ns" ]
	touch "$J/go"
	wait
	run cat "$BATS_TEST_TMPDIR/bg.0"
	[ "${lines[4]}" = "ls /a/x =" ]
	[ "${lines[5]}" = "ls /a/x = mark" ]
	ns_all_gone
}

@test "a jail names only namespaces of its own processes; setns needs privilege" {
	background shimmed unshare -m --propagation unchanged "$NSCALL" touch "$S/in" \
		waitfor "$S/out"
	wait_file "$S/in"
	local pid=$(pgrep -f "^$NSCALL touch $S/in")
	run ns chroot "$J" readlink /proc/$pid/ns/mnt hold /proc/$pid/ns/mnt \
		readlink /proc/1/ns/mnt
	[ "${lines[1]}" = "readlink: ENOENT" ]
	[ "${lines[2]}" = "hold: ENOENT" ]
	[ "${lines[3]}" = "readlink: ENOENT" ]
	# a jailed process's own namespace, and one made in the jail, it names
	background ns chroot "$J" unshare ns touch /in waitfor /out
	wait_file "$J/in"
	local jpid=$(pgrep -f "^$NSCALL chroot $J unshare")
	run ns chroot "$J" hold /proc/$jpid/ns/mnt setns-held ns ls /a
	[ "$output" = "$(printf 'chroot: ok\nhold: ok\nsetns-held: ok\nls /a = x y')" ]
	# the same descriptor in an unprivileged process: EPERM
	run shimmed setpriv --reuid 65534 --regid 65534 --clear-groups \
		--inh-caps=-all --bounding-set=-all "$NSCALL" \
		hold /proc/$jpid/ns/mnt setns-held ns
	[ "$output" = "$(printf 'hold: EACCES\nsetns-held: EBADF')" ]
	touch "$S/out" "$J/out"
	wait
	ns_all_gone
}

@test "pivot_root in a jail's copy, as in the kernel's (the root mount has a parent)" {
	mkdir -p "$S/jm"
	ns mount JM "$S/jm" tmpfs 0 >/dev/null
	mkdir -p "$S/jm/new"
	ns mount NEW "$S/jm/new" tmpfs 0 >/dev/null
	mkdir -p "$S/jm/new/old"
	touch "$S/jm/new/innew"
	local steps=(chroot "$S/jm" unshare ns chdir /new pivot . old cwd ls /
		ls /old)
	local kernel=$(native "$NSCALL" "${steps[@]}" 2>&1)
	run ns "${steps[@]}"
	[ "$output" = "$kernel" ]
	[ "${lines[3]}" = "pivot: ok" ]
	ns_all_gone
	ns umount "$S/jm/new" umount "$S/jm" >/dev/null
}
