#!/usr/bin/env bats
# pivot_root(2) from inside a jail, through the shim and the broker, against
# the kernel's own pivot_root on the same tree (semantics.md 7, S32).
#
# The jail's root $J is a tmpfs JAIL, mounted before the broker starts (it
# imports it); its /new is a tmpfs NEW mounted through the broker, with
# /new/old for put_old.  Markers: /marker ("old root"), /sub/here,
# /new/marker ("new root"), /new/d/here; /file and /new/file are files.
#
# The caller pivots in a process of its own (test/broker/caller: --chroot
# $J, then `pivot /new /new/old`, then looks around in the same process).
# Asserted, each time natively (scratch namespace) and through the broker,
# with the same output and the same table afterwards (same_as_kernel):
#   - the tree: NEW takes JAIL's place at $J, JAIL goes under $J/old;
#   - the caller itself is re-rooted: "/" shows NEW, "/old" shows JAIL;
#   - its cwd: the old root moves to the new root (kernel rule), any other
#     cwd stays where it is (so it shows under /old, or at the new root's
#     path), relative opens included;
#   - the usual sequence pivot_root, then umount -l /old, and a mount made
#     afterwards by the re-rooted process lands in the new root;
#   - the errors, in the kernel's order of checks: EPERM for non-root,
#     ENOENT, ENOTDIR, EBUSY for new_root or put_old on the current root
#     mount, EINVAL when new_root is not a mount, when put_old is not under
#     new_root and when the jail's root is not a mount; none changes the
#     table.
# Not asserted: other processes sharing the old root keep it (README,
# Limits: the broker cannot re-root them; Linux would).

load ../lib/broker

setup() {
	broker_setup
	# the jail's root is a mount, there before the broker starts
	mount -t tmpfs JAIL "$J"
	mkdir -p "$J/new" "$J/sub"
	echo "old root" >"$J/marker"
	echo "in sub" >"$J/sub/here"
	: >"$J/file"
	broker_restart
	host mount -t tmpfs NEW "$J/new"
	[ "$(call_result)" = 0 ]
	mkdir -p "$J/new/old" "$J/new/d"
	echo "new root" >"$J/new/marker"
	echo "in d" >"$J/new/d/here"
	: >"$J/new/file"
}

teardown() { broker_teardown; }

@test "pivot_root moves NEW to the jail's root and the old root under put_old, as the kernel does" {
	same_as_kernel shimmed "$CALLER" --chroot "$J" pivot /new /new/old
	[[ $output == "pivot_root /new /new/old = 0"* ]]
	# the tree itself, spelled out
	[ "$(mountpoints_of NEW)" = "$J" ]
	[ "$(mountpoints_of JAIL)" = "$J/old" ]
	assert_count_agrees
	assert_kernel_private
}

@test "the calling process itself is re-rooted: / is the new root, the old one is under put_old" {
	same_as_kernel shimmed "$CALLER" --chroot "$J" pivot /new /new/old ls / ls /old cat /marker \
		cat /old/marker cat /old/sub/here ls /new
	local want
	want=$(printf '%s\n' \
		"pivot_root /new /new/old = 0" \
		"ls / = d file marker old" \
		"ls /old = file marker new sub" \
		"cat /marker = new root" \
		"cat /old/marker = old root" \
		"cat /old/sub/here = in sub" \
		"ls /new = ENOENT")
	[ "$(sed -n 1,7p <<<"$output")" = "$want" ]
}

@test "a cwd at the old root moves to the new root" {
	same_as_kernel shimmed "$CALLER" --chroot "$J" pivot /new /new/old cwd ls . cat marker
	[ "$(sed -n 2,4p <<<"$output")" = "cwd = /"$'\n'"ls . = d file marker old"$'\n'"cat marker = new root" ]
}

@test "a cwd elsewhere in the old root stays, and shows under put_old" {
	same_as_kernel shimmed "$CALLER" --chroot "$J" --chdir /sub pivot /new /new/old cwd cat here
	[ "$(sed -n 2,3p <<<"$output")" = "cwd = /old/sub"$'\n'"cat here = in sub" ]
}

@test "a cwd inside new_root stays, at its place in the new root" {
	same_as_kernel shimmed "$CALLER" --chroot "$J" --chdir /new/d pivot /new /new/old cwd cat here
	[ "$(sed -n 2,3p <<<"$output")" = "cwd = /d"$'\n'"cat here = in d" ]
}

@test "pivot_root, umount -l put_old, then a mount in the new root: the usual sequence" {
	same_as_kernel shimmed "$CALLER" --chroot "$J" pivot /new /new/old umount /old detach \
		mount - /d tmpfs 0 ls /
	[ "$(sed -n 1,4p <<<"$output")" = "pivot_root /new /new/old = 0"$'\n'"umount /old = 0"$'\n'"mount /d = 0"$'\n'"ls / = d file marker old" ]
	[ "$(mountpoints_of NEW)" = "$J" ]
	[ -z "$(mountpoints_of JAIL)" ]
	is_mountpoint "$J/d"
}

@test "pivot_root as non-root is EPERM, before its paths are looked at" {
	snapshot before
	same_as_kernel shimmed "$CALLER" --chroot "$J" --uid 65534 pivot /new /new/old pivot /missing /x
	[ "$(sed -n 1,2p <<<"$output")" = "pivot_root /new /new/old = EPERM"$'\n'"pivot_root /missing /x = EPERM" ]
	assert_table_unchanged before
}

@test "pivot_root's lookup errors are the kernel's: ENOENT, ENOTDIR" {
	snapshot before
	same_as_kernel shimmed "$CALLER" --chroot "$J" pivot /missing /new/old pivot /new /new/missing \
		pivot /file /new/old pivot /new /new/file
	[ "$(sed -n 1,4p <<<"$output")" = "$(printf '%s\n' \
		"pivot_root /missing /new/old = ENOENT" \
		"pivot_root /new /new/missing = ENOENT" \
		"pivot_root /file /new/old = ENOTDIR" \
		"pivot_root /new /new/file = ENOTDIR")" ]
	assert_table_unchanged before
}

@test "new_root or put_old on the current root mount is EBUSY" {
	snapshot before
	same_as_kernel shimmed "$CALLER" --chroot "$J" pivot / /new/old pivot /sub /sub pivot /new /sub
	[ "$(sed -n 1,3p <<<"$output")" = "$(printf '%s\n' \
		"pivot_root / /new/old = EBUSY" \
		"pivot_root /sub /sub = EBUSY" \
		"pivot_root /new /sub = EBUSY")" ]
	assert_table_unchanged before
}

@test "new_root not a mount is EINVAL" {
	snapshot before
	same_as_kernel shimmed "$CALLER" --chroot "$J" pivot /new/d /new/d
	[ "$(sed -n 1p <<<"$output")" = "pivot_root /new/d /new/d = EINVAL" ]
	assert_table_unchanged before
}

@test "put_old on another mount outside new_root is EINVAL" {
	mkdir "$J/other"
	host mount -t tmpfs OTHER "$J/other"
	[ "$(call_result)" = 0 ]
	snapshot before
	same_as_kernel shimmed "$CALLER" --chroot "$J" pivot /new /other
	[ "$(sed -n 1p <<<"$output")" = "pivot_root /new /other = EINVAL" ]
	assert_table_unchanged before
}

@test "a jail whose root is not a mount: pivot_root is EINVAL" {
	local P=$S/plain
	mkdir -p "$P/new"
	host mount -t tmpfs PNEW "$P/new"
	[ "$(call_result)" = 0 ]
	mkdir "$P/new/old"
	snapshot before
	same_as_kernel shimmed "$CALLER" --chroot "$P" pivot /new /new/old ls /
	[ "$(sed -n 1,2p <<<"$output")" = "pivot_root /new /new/old = EINVAL"$'\n'"ls / = new" ]
	assert_table_unchanged before
}

@test "a jail bound onto itself, with mounts in both trees: they move along, as in the kernel" {
	local B=$S/bjail
	mkdir -p "$B/sub" "$B/new"
	host mount --bind "$B" "$B"
	host mount -t tmpfs BNEW "$B/new"
	mkdir -p "$B/new/old" "$B/new/in"
	host mount -t tmpfs BIN "$B/new/in"
	host mount -t tmpfs BSUB "$B/sub"
	[ "$(call_result)" = 0 ]
	echo "in bsub" >"$B/sub/here"
	same_as_kernel shimmed "$CALLER" --chroot "$B" --chdir /sub \
		pivot /new /new/old ls / cwd cat here
	[ "$(sed -n 1,4p <<<"$output")" = "$(printf '%s\n' \
		"pivot_root /new /new/old = 0" \
		"ls / = in old" \
		"cwd = /old/sub" \
		"cat here = in bsub")" ]
	[ "$(mountpoints_of BSUB)" = "$B/old/sub" ]
	[ "$(mountpoints_of BIN)" = "$B/in" ]
	assert_count_agrees
}
