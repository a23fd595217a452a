#!/usr/bin/env bats
# The broker's mount ids without file handles or fdinfo's mnt_id
# (daemon/broker/base/mntid.c, issue 23): for descriptors on mount points,
# inside mounts, on a file's mount, and beneath mounts that cover them,
# the id found from mountinfo is the id fdinfo gives.  Runs as root, in a
# private mount namespace (Makefile.am).

load ../lib/legacy

setup() {
	MNTID=$(libshare_find test/legacy/mntid)
	sandbox=$BATS_TEST_TMPDIR/sandbox
	mkdir -p "$sandbox"
	mount -t tmpfs mntid-sandbox "$sandbox"
	mkdir "$sandbox/a" "$sandbox/b" "$sandbox/a/sub"
}

teardown() {
	! mountpoint -q "$sandbox" || umount -l "$sandbox"
}

# same_ids: every line of $output is "PATH ID ID ID ID", the ids the same
# and a real one: mountinfo's, asked per path, of one table for all the
# paths (the import's way) and of one read before COMMAND, are fdinfo's.
same_ids() {
	local path fdinfo mountinfo within before n=0
	while read -r path fdinfo mountinfo within before; do
		n=$((n + 1))
		[ "$fdinfo" -gt 0 ] || { echo "$path: fdinfo says $fdinfo" >&2; return 1; }
		[ "$mountinfo" = "$fdinfo" ] && [ "$within" = "$fdinfo" ] &&
			[ "$before" = "$fdinfo" ] ||
			{ echo "$path: $mountinfo, $within, $before, fdinfo $fdinfo" >&2; return 1; }
	done <<<"$output"
	[ "$n" -gt 0 ]
}

@test "mount points, a directory inside a mount, a file's mount, /proc and / get fdinfo's ids" {
	mount -t tmpfs A "$sandbox/a"
	mkdir "$sandbox/a/dir"
	touch "$sandbox/file" "$sandbox/a/f"
	mount --bind "$sandbox/file" "$sandbox/a/f"
	mount --bind "$sandbox/a" "$sandbox/b"
	run "$MNTID" "$sandbox" "$sandbox/a" "$sandbox/a/dir" "$sandbox/a/f" \
		"$sandbox/b" "$sandbox/b/dir" /proc /
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 8 ]
	same_ids
	# a and b are two mounts of one filesystem: two ids
	[ "$(cut -d' ' -f2 <<<"${lines[1]}")" != "$(cut -d' ' -f2 <<<"${lines[4]}")" ]
}

@test "a mount covered by another filesystem, and a place inside it, keep their ids" {
	mount -t tmpfs A "$sandbox/a"
	mkdir "$sandbox/a/dir"
	run "$MNTID" "$sandbox/a" "$sandbox/a/dir" -- mount -t tmpfs C "$sandbox/a"
	[ "$status" -eq 0 ]
	same_ids
}

@test "a bind covered by a bind of the same filesystem keeps its id" {
	mount -t tmpfs A "$sandbox/a"
	mount --bind "$sandbox/a" "$sandbox/b"
	run "$MNTID" "$sandbox/b" -- mount --bind "$sandbox/a" "$sandbox/b"
	[ "$status" -eq 0 ]
	same_ids
}

@test "a directory beneath a mount of the same filesystem stays on its own mount" {
	run "$MNTID" "$sandbox/a/sub" -- mount --bind "$sandbox/b" "$sandbox/a/sub"
	[ "$status" -eq 0 ]
	same_ids
}

@test "the middle of three binds of one filesystem stacked is beyond the table: ENOENT" {
	mount -t tmpfs A "$sandbox/a"
	mount --bind "$sandbox/a" "$sandbox/a"
	run "$MNTID" "$sandbox/a" -- mount --bind "$sandbox/a" "$sandbox/a"
	[ "$status" -eq 0 ]
	read -r _ fdinfo mountinfo within before <<<"$output"
	[ "$fdinfo" -gt 0 ]
	[ "$mountinfo" -eq -2 ]
	[ "$within" -eq -2 ]
	[ "$before" -eq -2 ]
}

@test "of one table for many paths: the top of a stack, places deep inside mounts, their mountpoints' mounts" {
	mount -t tmpfs A "$sandbox/a"
	mount -t tmpfs B "$sandbox/a"
	mount -t tmpfs C "$sandbox/a"
	mkdir -p "$sandbox/a/x/y/z" "$sandbox/b/c/d"
	mount -t tmpfs D "$sandbox/a/x"
	mkdir -p "$sandbox/a/x/p/q"
	mount --bind "$sandbox/b/c" "$sandbox/b/c"
	run "$MNTID" "$sandbox/a" "$sandbox/a/x" "$sandbox/a/x/p" \
		"$sandbox/a/x/p/q" "$sandbox/b" "$sandbox/b/c" "$sandbox/b/c/d"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 7 ]
	same_ids
	# the stack's top (C), not A or B: D's parent in mountinfo
	local top d
	top=$(cut -d' ' -f2 <<<"${lines[0]}")
	d=$(cut -d' ' -f2 <<<"${lines[1]}")
	[ "$(awk -v d="$d" '$1 == d { print $2 }' /proc/self/mountinfo)" = "$top" ]
	[ "$(cut -d' ' -f2 <<<"${lines[3]}")" = "$d" ]
}

@test "legacy-sim --no-fhandle --no-fdinfo-mnt-id: fdinfo_mnt_id() too finds the ids from mountinfo" {
	legacy_require
	mount -t tmpfs A "$sandbox/a"
	mount --bind "$sandbox/a" "$sandbox/a"
	run "$MNTID" "$sandbox/a" /proc
	local with=$output
	same_ids
	LEGACY_SIM_PROFILE= run "$LEGACY_SIM" --no-fhandle --no-fdinfo-mnt-id \
		"$MNTID" "$sandbox/a" /proc
	[ "$output" = "$with" ]
	# where mountinfo cannot tell, neither column can: no line was read
	LEGACY_SIM_PROFILE= run "$LEGACY_SIM" --no-fhandle --no-fdinfo-mnt-id \
		"$MNTID" "$sandbox/a" -- mount --bind "$sandbox/a" "$sandbox/a"
	[ "$(cut -d' ' -f2- <<<"$output")" = "-2 -2 -2 -2" ]
}

@test "whether a descriptor is on its mount's root: mountinfo_at_root() says what statx says, for a place a mount covers too" {
	mount -t tmpfs A "$sandbox/a"
	mkdir "$sandbox/a/dir" "$sandbox/a/in"
	touch "$sandbox/file" "$sandbox/a/f"
	mount --bind "$sandbox/file" "$sandbox/a/f"
	# a/in is opened before a mount covers it: on A, inside it (a copy's
	# place, copy.c, as a broker killed after the bind leaves it)
	run "$MNTID" --root "$sandbox" "$sandbox/a" "$sandbox/a/dir" \
		"$sandbox/a/f" "$sandbox/a/in" / -- \
		mount --bind "$sandbox/b" "$sandbox/a/in"
	[ "$status" -eq 0 ]
	[ "$output" = "$sandbox 1 1
$sandbox/a 1 1
$sandbox/a/dir 0 0
$sandbox/a/f 1 1
$sandbox/a/in 0 0
/ 1 1" ]
	# a bind covered by a bind of the same filesystem: its root still
	mount --bind "$sandbox/a" "$sandbox/b"
	run "$MNTID" --root "$sandbox/b" -- mount --bind "$sandbox/a" "$sandbox/b"
	[ "$output" = "$sandbox/b 1 1" ]
}
