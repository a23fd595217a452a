#!/usr/bin/env bats
# Each call's own path lookup, from a cwd that the caller's own mount has
# covered since (issue 13 item 1), as the kernel answers it: umount2's
# last component goes to the top of the stack (LOOKUP_MOUNTPOINT: ".",
# "./.", ".."), so does a new mount's or a bind's place (do_lock_mount()),
# a bind's source "." stays beneath, and UMOUNT_NOFOLLOW takes a symlink
# for itself.  One caller process does it all, so its cwd is entered
# before the cover (docs/semantics.md 3.2, 4.1, 5.1).

load ../lib/broker

setup() {
	broker_setup
	mkdir -p "$S/d/in" "$S/e" "$J/d/sub" "$J/e"
	ln -s d "$J/ld"
}
teardown() { broker_teardown; }

@test "umount2 of '.', './.' and '..' from beneath a stack takes the top, on the host" {
	same_as_kernel shimmed "$CALLER" --chdir "$S/d" \
		mount t1 "$S/d" tmpfs 0 mount t2 "$S/d" tmpfs 0 \
		umount . 0 umount ./. detach umount . 0
	[[ $output == *"umount . = 0"*"umount ./. = 0"*"umount . = EINVAL"* ]]
	same_as_kernel shimmed "$CALLER" --chdir "$S/d/in" \
		mount t3 "$S/d" tmpfs 0 umount .. 0 umount .. 0
	[[ $output == *"umount .. = 0"*"umount .. = EINVAL"* ]]
}

@test "umount2 of '.' from beneath a stack takes the top, in a jail" {
	same_as_kernel shimmed "$CALLER" --chroot "$J" --chdir /d \
		mount t1 /d tmpfs 0 umount . 0 mount t2 /d tmpfs 0 \
		umount sub/../. 0 umount . 0
	[[ $output == *"umount . = 0"*"umount sub/../. = 0"*"umount . = EINVAL"* ]]
}

@test "a mount and a bind on '.' go on top of the stack; a bind of '.' is the directory beneath" {
	same_as_kernel shimmed "$CALLER" --chdir "$S/d" \
		mount t1 "$S/d" tmpfs 0 mount t2 . tmpfs 0 \
		mount . "$S/e" - bind mount "$S/e" ./. - bind
	[ -d "$S/e/in" ]
	[[ $(mountpoints_of t2) == "$S/d" ]]
}

@test "UMOUNT_NOFOLLOW takes a symlink for itself, without it the link is followed" {
	same_as_kernel shimmed "$CALLER" --chroot "$J" \
		mount t1 /d tmpfs 0 umount /ld 8 umount /ld 0
	[[ $output == *"umount /ld = EINVAL"*"umount /ld = 0"* ]]
}

# quickwalk.c takes plain paths in one lookup and leaves the rest to the
# walk: both must answer as the kernel, at the edges between them too.
@test "plain paths and their edges: doubled slashes, a trailing slash, a symlink, a file" {
	touch "$J/f"
	same_as_kernel shimmed "$CALLER" --chroot "$J" --chdir /d \
		mount t1 //d///sub tmpfs 0 umount /d//sub/ 0 \
		mount /f /e/ - bind mount /d /f/ - bind mount /f /e - bind \
		mount /ld /e - bind umount /e 0 umount /ld 8 \
		mount t2 /ld/sub tmpfs 0 umount sub 0 umount sub/ 0 \
		mount t3 /d tmpfs 0 umount /ld/ 8 umount /ld/ 8
	[[ $output == *"umount /d//sub/ = 0"*"mount /e/ = ENOTDIR"* ]]
	[[ $output == *"mount /f/ = ENOTDIR"*"mount /e = ENOTDIR"* ]]
	[[ $output == *"mount /e = 0"*"umount /e = 0"*"umount /ld = EINVAL"* ]]
	[[ $output == *"mount /ld/sub = 0"*"umount sub = 0"*"umount sub/ = EINVAL"* ]]
	[[ $output == *"umount /ld/ = 0"*"umount /ld/ = EINVAL"* ]]
}
