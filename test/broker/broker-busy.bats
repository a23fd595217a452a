#!/usr/bin/env bats
# Busy mounts and umount propagation (semantics.md 5.2, 5.3), refused moves
# (6.1) and many mounts, through the broker.  The host's $S/A is a shared
# tmpfs; the jail's /a is bound from it and made a slave; $S/A/sub and
# $S/A/sub/x are mounted on the host and so have copies in the jail.
#
# The kernel's answers (checked natively on the same tree, 6.18; S17, S18,
# S20, S23 of semantics.md): a process using the jail's copy of x (its cwd,
# even under an overmount, an open file, a memory mapping, a thread's own
# cwd) makes the host's `umount $S/A/sub/x` fail with EBUSY ("target is
# busy") and nothing at all is unmounted; once it is gone the umount takes x
# and its copy;
# `umount -l $S/A/sub` ignores users and takes sub, x and both copies;
# `mount --move` of a mount whose parent is shared is EINVAL, of one whose
# parent is a slave succeeds.

load ../lib/broker

setup() {
	broker_setup
	mkdir -p "$S/A" "$J/a" "$S/B" "$J/b"
	host mount -t tmpfs A "$S/A"
	host mount --make-shared "$S/A"
	host mount --bind "$S/A" "$J/a"
	jail mount --make-slave /a
	mkdir "$S/A/sub"
	host mount -t tmpfs SUB "$S/A/sub"
	mkdir "$S/A/sub/x"
	host mount -t tmpfs X "$S/A/sub/x"
	[ "$(call_result)" = 0 ]
}

teardown() { broker_teardown; }

# A jailed process whose cwd is the jail's copy of x (BG: its pid).
hold_copy() {
	background env LD_PRELOAD="$SHIM" "$CALLER" --chroot "$J" --chdir /a/sub/x \
		sleep 300
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(readlink "/proc/$BG/cwd")" = "$J/a/sub/x" ] && return
		sleep 0.05
	done
	echo "the holder never got there" >&2
	return 1
}

@test "the tree has its copies in the jail, and the kernel propagates nothing" {
	[ "$(mountpoints_of SUB)" = "$S/A/sub"$'\n'"$J/a/sub" ]
	[ "$(mountpoints_of X)" = "$S/A/sub/x"$'\n'"$J/a/sub/x" ]
	assert_kernel_private
}

@test "a process in the jail's copy makes the host's umount fail EBUSY, and nothing is unmounted" {
	hold_copy
	snapshot before
	run host umount "$S/A/sub/x"
	[ "$status" -eq 32 ]
	[[ $output == *"target is busy"* ]]
	[ "$(call_result)" = EBUSY ]
	assert_table_unchanged before
	# from inside the jail, the copy itself is just as busy
	run jail umount /a/sub/x
	[ "$status" -eq 32 ]
	[ "$(call_result)" = EBUSY ]
	assert_table_unchanged before
}

@test "a process in a copy hidden under the jail's own mount still makes it busy" {
	hold_copy
	jail mount -t tmpfs OVER /a/sub/x
	[ "$(call_result)" = 0 ]
	snapshot before
	run host umount "$S/A/sub/x"
	[ "$status" -eq 32 ]
	[ "$(call_result)" = EBUSY ]
	assert_table_unchanged before
}

@test "a file held open in the jail's copy makes it just as busy" {
	echo data >"$J/a/sub/x/file"
	sleep 300 <"$J/a/sub/x/file" 3>&- &
	BG_PIDS+=($!)
	snapshot before
	run host umount "$S/A/sub/x"
	[ "$status" -eq 32 ]
	[ "$(call_result)" = EBUSY ]
	assert_table_unchanged before
}

@test "a file mapped into memory from the jail's copy, its descriptor closed, makes it busy" {
	# a shared library: the loader maps it and closes its descriptor
	cp "$SPY" "$J/a/sub/x/lib.so"
	LD_PRELOAD="$J/a/sub/x/lib.so" sleep 300 3>&- &
	BG_PIDS+=($!)
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q "$J/a/sub/x/lib.so" "/proc/$!/maps" && break
		sleep 0.05
	done
	[[ $(ls -l "/proc/$!/fd") != *"$J/a/sub/x"* ]]
	snapshot before
	run host umount "$S/A/sub/x"
	[ "$status" -eq 32 ]
	[ "$(call_result)" = EBUSY ]
	assert_table_unchanged before
}

@test "a thread whose own cwd is in the jail's copy makes it busy" {
	background env LD_PRELOAD="$SHIM" "$CALLER" --chroot "$J" \
		--thread-cwd /a/sub/x sleep 300
	local i out=$BATS_TEST_TMPDIR/bg.0
	for ((i = 0; i < 100; i++)); do
		grep -q holding "$out" && break
		sleep 0.05
	done
	grep -qx holding "$out"
	snapshot before
	run host umount "$S/A/sub/x"
	[ "$status" -eq 32 ]
	[ "$(call_result)" = EBUSY ]
	assert_table_unchanged before
}

@test "once the process is gone the umount takes the original and the copy" {
	hold_copy
	host umount "$S/A/sub/x" || true
	kill "$BG"
	wait "$BG" || true
	run host umount "$S/A/sub/x"
	[ "$status" -eq 0 ]
	[ -z "$(mounts_of X)" ]
	[ "$(mountpoints_of SUB)" = "$S/A/sub"$'\n'"$J/a/sub" ]
}

@test "umount -l of a tree takes every propagated copy, users or not" {
	hold_copy
	run host umount -l "$S/A/sub"
	[ "$status" -eq 0 ]
	[ "$(call_result)" = 0 ]
	[ -z "$(mounts_of SUB)" ]
	[ -z "$(mounts_of X)" ]
	[ "$(mountpoints_of A)" = "$S/A"$'\n'"$J/a" ]
}

@test "a mount whose parent is shared cannot be moved: EINVAL, nothing changes" {
	snapshot before
	run host mount --move "$S/A/sub" "$S/B"
	[ "$status" -eq 32 ]
	[ "$(call_result)" = EINVAL ]
	assert_table_unchanged before
	run shimmed "$CALLER" mount "$S/A/sub/x" "$S/B" - move
	[ "$output" = "mount $S/B = EINVAL" ]
	assert_table_unchanged before
}

@test "a mount whose parent is a slave can be moved" {
	run shimmed "$CALLER" --chroot "$J" mount /a/sub /b - move
	[ "$output" = "mount /b = 0" ]
	[ "$(mountpoints_of SUB)" = "$S/A/sub"$'\n'"$J/b" ]
	[ "$(mountpoints_of X)" = "$S/A/sub/x"$'\n'"$J/b/x" ]
}

@test "many mounts on the shared tree: every one and every copy is made, and every one goes" {
	local i n=150 mounts=() umounts=()
	for ((i = 0; i < n; i++)); do
		mkdir "$S/A/n$i"
		mounts+=(mount "many$i" "$S/A/n$i" tmpfs 0)
		umounts+=(umount "$S/A/n$i" 0)
	done
	run shimmed "$CALLER" "${mounts[@]}"
	[ "$(grep -c ' = 0$' <<<"$output")" = $n ]
	for ((i = 0; i < n; i++)); do
		[ "$(mountpoints_of "many$i")" = "$S/A/n$i"$'\n'"$J/a/n$i" ]
	done
	assert_kernel_private
	run shimmed "$CALLER" "${umounts[@]}"
	[ "$(grep -c ' = 0$' <<<"$output")" = $n ]
	[ -z "$(mounts_of many0)" ]
	[ "$(grep -c ' many' /proc/self/mountinfo)" = 0 ]
}
