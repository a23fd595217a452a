#!/usr/bin/env bats
# Mounts moved behind the broker's back (a static binary, a tool run
# without the shim) are seen at their new place before the next request
# is served, with their propagation as a legacy kernel leaves it: a move
# propagates nothing.  Linux, propagating itself, does the same here: the
# move of a received mount's original takes nothing from the slaves.
# A directory renamed above a mount moves it in the kernel's eyes and
# signals nothing: an rbind reads the names below its source again first.
# A cwd left on a mount unmounted with MNT_DETACH, through the broker or
# behind its back, names places no table holds: a mount on them is
# ENOENT (lock_mount()), any change of them EINVAL (check_mnt()).

load ../lib/broker

setup() {
	broker_setup
	mkdir -p "$S/floppy" "$J/floppy" "$S/other"
	host mount --bind "$S/floppy" "$S/floppy"
	host mount --make-shared "$S/floppy"
	host mount --bind "$S/floppy" "$J/floppy"
	host mount --make-slave "$J/floppy"
	mkdir "$S/floppy/a"
	host mount -t tmpfs disk "$S/floppy/a"
	[ "$(call_result)" = 0 ]
	grep -q " $J/floppy/a " /proc/self/mountinfo   # received by the jail
}

teardown() {
	broker_teardown
}

@test "a mount moved without the broker, then unmounted through it: the jail's copy stays" {
	mount --move "$S/floppy/a" "$S/other"       # behind the broker's back
	host umount "$S/other"
	[ "$(call_result)" = 0 ]
	! grep -q " $S/other " /proc/self/mountinfo
	grep -q " $J/floppy/a " /proc/self/mountinfo
	grep -q "moved behind the broker's back to $S/other" \
		"$STATE/sharebrokerd.log"
}

@test "a mount moved without the broker is where sharectl tree shows it, and keeps receiving" {
	mount --move "$S/floppy" "$S/other"
	run "$SHARECTL" tree
	[[ $output == *"$S/other "* ]]
	[[ $output != *"$S/floppy "* ]]
	# still the master of the jail's copy: a new mount there reaches it
	mkdir "$S/other/b"
	host mount -t tmpfs disk2 "$S/other/b"
	[ "$(call_result)" = 0 ]
	grep -q " $J/floppy/b " /proc/self/mountinfo
}

# The caller's cwd is on $S/a, detached by the time CALLER runs; sub/x
# held a mount of its own, detached along.
detached_cwd() {
	local how=$1
	shift
	mkdir -p "$S/a" "$S/e" "$S/f"
	host mount -t tmpfs t1 "$S/a"
	mkdir -p "$S/a/sub/x"
	host mount -t tmpfs t3 "$S/a/sub/x"
	same_as_kernel shimmed bash -c "cd '$S/a' && $how umount -l '$S/a' &&
		'$CALLER' $*"
}

@test "a cwd on a mount detached through the broker: ENOENT to mount on, EINVAL to change, as natively" {
	detached_cwd "" \
		mount "$S/e" sub - bind mount t2 sub tmpfs 0 \
		mount nothere sub - bind mount t4 sub nosuchfs 0 \
		umount sub 0 umount . 0 umount sub/x detach \
		mount . "$S/e" - bind mount sub/x "$S/f" - move \
		mount - . - remount,ro mount - . - shared mount - sub/x - private \
		mount "$S/e" sub - rbind \
		pivot . sub pivot "$S/e" sub pivot . "$S/e"
	[[ $output == "mount sub = ENOENT"$'\n'"mount sub = ENOENT"$'\n'"mount sub = ENOENT"$'\n'"mount sub = ENODEV"$'\n'"umount sub = EINVAL"* ]]
	[[ $output == *"pivot_root . $S/e = EINVAL"* ]]
	[[ $output != *"= 0"* ]]
	! grep -q "does not know" "$STATE/sharebrokerd.log"
}

@test "a cwd on a mount detached behind the broker's back: the same, as natively" {
	detached_cwd "env -u LD_PRELOAD" \
		mount "$S/e" sub - bind mount t2 sub tmpfs 0 umount sub 0 \
		umount . 0 mount . "$S/e" - bind mount - . - remount,ro
	[[ $output == *"mount sub = ENOENT"*"umount . = EINVAL"*"mount . = EINVAL"* ]]
}

@test "a cwd on a detached mount, without privilege: EPERM first, as natively" {
	detached_cwd "" --uid 65534 umount . 0 mount t2 sub tmpfs 0 \
		mount - . - shared
	[[ $output == "umount . = EPERM"$'\n'"mount sub = EPERM"$'\n'"mount . = EPERM"* ]]
}

# The renames are put back after each side, which shares the sandbox's
# filesystem with the other; the copies are listed before that.
@test "directories renamed above mounts, then an rbind: it copies what the kernel has below, as natively" {
	mkdir -p "$S/d/x/sub" "$S/o/y/sub" "$S/e" "$S/b/z/w/sub" "$S/d/z"
	host mount -t tmpfs t1 "$S/d/x/sub"
	host mount -t tmpfs t2 "$S/o/y/sub"
	host mount --bind "$S/b/z" "$S/d/z"
	host mount -t tmpfs t3 "$S/d/z/w/sub"
	same_as_kernel shimmed bash -c "mv '$S/d/x' '$S/x' &&
		mv '$S/o/y' '$S/d/y' && mv '$S/b/z/w' '$S/b/z/w2' &&
		mount --rbind '$S/d' '$S/e' && findmnt -rn -o TARGET |
		grep '^$S/e' | sort; umount -R '$S/e'; mv '$S/x' '$S/d/x' &&
		mv '$S/d/y' '$S/o/y' && mv '$S/b/z/w2' '$S/b/z/w'"
	[ "$(sed -n 1,4p <<<"$output")" = "$S/e
$S/e/y/sub
$S/e/z
$S/e/z/w2/sub" ]
	grep -q "names read again .*: [1-9][0-9]* mount(s) renamed behind" \
		"$STATE/sharebrokerd.log"
}

@test "an rbind of stacked mounts, nothing renamed: no names read again" {
	mkdir -p "$S/d/x" "$S/e"
	host mount -t tmpfs t1 "$S/d/x"
	host mount -t tmpfs t2 "$S/d/x"
	mkdir "$S/d/x/y"
	host mount -t tmpfs t3 "$S/d/x/y"
	host mount --rbind "$S/d" "$S/e"
	[ "$(call_result)" = 0 ]
	[ "$(mountpoints_of t3)" = "$S/d/x/y
$S/e/x/y" ]
	! grep -q "names read again" "$STATE/sharebrokerd.log"
}

@test "in a jail, a directory renamed above a mount, then an rbind copies it" {
	mkdir -p "$J/d/x/sub" "$J/e"
	jail mount -t tmpfs t1 /d/x/sub
	mv "$J/d/x" "$J/d/x2"
	jail mount --rbind /d /e
	[ "$(call_result)" = 0 ]
	[ "$(mountpoints_of t1 | sort)" = "$J/d/x2/sub
$J/e/x2/sub" ]
}

# $S/d shared, its directory x bound into the jail as a slave, then
# renamed: the kernel's receiver is the directory, whatever its name.
@test "a receiver's root directory renamed: a mount still reaches it, and its umount too" {
	mkdir -p "$S/d/x" "$J/x"
	host mount --bind "$S/d" "$S/d"
	host mount --make-shared "$S/d"
	host mount --bind "$S/d/x" "$J/x"
	host mount --make-slave "$J/x"
	mv "$S/d/x" "$S/d/x2"
	mkdir "$S/d/x2/sub"
	host mount -t tmpfs t1 "$S/d/x2/sub"
	[ "$(call_result)" = 0 ]
	[ "$(mountpoints_of t1)" = "$S/d/x2/sub
$J/x/sub" ]
	mv "$S/d/x2" "$S/d/x3"
	host umount "$S/d/x3/sub"
	[ "$(call_result)" = 0 ]
	[ -z "$(mountpoints_of t1)" ]
}
