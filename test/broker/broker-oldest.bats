#!/usr/bin/env bats
# The broker on the oldest kernel ABI tested (issue 23): legacy-sim
# --oldest, Linux 3.2's system calls, no file handles, no FUSE, no mnt_id
# in fdinfo.  Before, glibc's statx() emulation made every request fail
# with EINVAL there; mount ids now come from mountinfo (mntid.c).

load ../lib/broker

setup() {
	export LEGACY_SIM_PROFILE=--oldest
	broker_setup
	mkdir -p "$S/a" "$S/b" "$S/p" "$J/mnt"
}

teardown() {
	broker_teardown
}

@test "--oldest: the broker finds no /dev/fuse, says so, and serves the table as a snapshot" {
	grep -q "no FUSE (No such file or directory)" "$STATE/sharebrokerd.log"
	run host cat /proc/self/mountinfo
	[ "$status" -eq 0 ]
	grep -q " $S " <<<"$output"
}

@test "--oldest: mounts, binds of one filesystem stacked, umount and a jail's view as the kernel's" {
	same_as_kernel host sh -c "mount -t tmpfs A '$S/a' && mount --bind '$S/a' '$S/b' &&
		mount --bind '$S/a' '$S/b' && umount '$S/b' && mount --bind '$S/b' '$S/a'"
	same_as_kernel jail sh -c 'mount -t tmpfs J /mnt && mount --bind /mnt /mnt && umount /mnt'
	run "$SHARECTL" tree
	[ "$status" -eq 0 ]
	[[ $output == *"$S/a"* ]]
}

@test "--oldest: after a restart, a covered mount is reached again through the holder" {
	host mount -t tmpfs A "$S/a"
	touch "$S/a/below"
	host mount -t tmpfs C "$S/a"
	broker_restart
	! grep -q "is covered: out of the broker's reach" "$STATE/sharebrokerd.log"
	host umount "$S/a"
	[ -e "$S/a/below" ]
	host umount "$S/a"
	[ ! -e "$S/a/below" ]
	! is_mountpoint "$S/a"
}

@test "--oldest: two binds of one filesystem covered on one place: a broker killed finds both through the holder" {
	host mount -t tmpfs A "$S/a"
	host mount --bind "$S/a" "$S/p"
	host mount --bind "$S/a" "$S/a"
	host mount -t tmpfs X "$S/a"
	# only holder.ids tells the two apart: the table cannot
	kill -KILL "$BROKER_PID"
	wait_gone "$BROKER_PID" 5
	broker_start 2>"$BATS_TEST_TMPDIR/start.err"
	run grep -c "sb/a is covered: reached through the previous broker's holder" \
		"$BATS_TEST_TMPDIR/start.err"
	[ "$output" = 2 ]
	host umount "$S/a"
	host umount "$S/a"
	host umount "$S/a"
	! is_mountpoint "$S/a"
	[ "$(mountpoints_of A)" = "$S/p" ]
}

@test "--oldest: two binds of one file stacked, then covered: a broker killed in between keeps both" {
	touch "$S/f" "$S/a/f"
	host mount --bind "$S/f" "$S/a/f"
	host mount --bind "$S/a/f" "$S/a/f"
	# inode and device cannot tell the lower bind from the upper one:
	# only the broker's note (holder.ids) can, to the holder
	kill -KILL "$BROKER_PID"
	wait_gone "$BROKER_PID" 5
	broker_start
	host mount -t tmpfs X "$S/a"
	kill -KILL "$BROKER_PID"
	wait_gone "$BROKER_PID" 5
	broker_start 2>"$BATS_TEST_TMPDIR/start.err"
	run grep -c "sb/a/f is covered: reached through the previous broker's holder" \
		"$BATS_TEST_TMPDIR/start.err"
	[ "$output" = 2 ]
	host umount "$S/a"
	host umount "$S/a/f"
	host umount "$S/a/f"
	! is_mountpoint "$S/a/f"
}

# A caller's cwd covered by a mount, then a bind of that cover onto the
# cwd: umount2 "./." ends on the bind, and its use is probed (busy.c), the
# handle let go and taken again through mntid.c.  The handle's closed
# number answered for it there, and the bind was lost: EBUSY, then EIO
# (oldest-diff.test's random seed 100051).
@test "--oldest: a cover bound onto the cwd it covers goes by umount2 './.' from there" {
	host mount -t tmpfs T "$S/a"
	host mount -t tmpfs C "$S/p"
	mkdir -p "$S/a/x/d" "$S/p/x/d"
	same_as_kernel shimmed "$CALLER" --chdir "$S/a/x/d" \
		mount "$S/p" "$S/a" - move mount "$S/a" . - bind \
		umount ./. 0 umount ./. 0 umount . 0
	[[ $output == *"umount ./. = 0"*"umount ./. = EINVAL"*"umount . = EINVAL"* ]]
}

# A cwd kept beneath a stack names its top for umount2's "." (named.c).
# U marked sleeps, a mount made there goes on it and wakes it, V on top
# is marked: the holder, without fdinfo's mnt_id, must not look up the
# path of a descriptor the broker's note does not name (V's place, on
# U's root), which ends on V (its release clears V's mark;
# expire-stack.sh).
# The pause gives the holder, alone after the kill, time to judge it.
@test "--oldest: MNT_EXPIRE's mark on a stack's top, named from a cwd beneath, outlives a broker killed and its holder" {
	local umount2 keeper
	umount2=$(libshare_find test/diff/umount2)
	host mount -t tmpfs B "$S/b"
	(cd "$S/b" && exec sleep 600) &
	keeper=$!
	host mount -t tmpfs U "$S/b"
	run host sh -c "cd /proc/$keeper/cwd && exec '$umount2' -e ."
	[ "$status" -eq 32 ]                   # EAGAIN: U marked
	host sh -c "cd /proc/$keeper/cwd && exec mount -t tmpfs V ."
	run host sh -c "cd /proc/$keeper/cwd && exec '$umount2' -e ."
	[ "$status" -eq 32 ]                   # EAGAIN: V marked
	[ "$(mountpoints_of V)" = "$S/b" ]
	kill -KILL "$BROKER_PID"
	wait_gone "$BROKER_PID" 5
	sleep 1
	broker_start
	run host sh -c "cd /proc/$keeper/cwd && exec '$umount2' -e ."
	kill "$keeper"
	[ "$status" -eq 0 ]
	[ "$(mountpoints_of V)" = "" ]
	[ "$(mountpoints_of U)" = "$S/b" ]
}
