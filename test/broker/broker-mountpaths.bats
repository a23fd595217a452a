#!/usr/bin/env bats
# Every path a jailed caller names in a new mount (its source when the
# filesystem needs a device, and paths in the options: overlay's lowerdir,
# upperdir and workdir here) is looked up in the caller's root and, when
# relative, from its cwd, as the kernel looks it up for that caller.  The
# broker makes the mount in a child that has nothing of the broker's: not
# its cwd, not its root, not its descriptors.  Each form is run natively
# (a scratch namespace) and through the broker, and must give the same
# answer, table and files.

load ../lib/broker

setup() {
	broker_setup
	grep -qw overlay /proc/filesystems || skip "no overlayfs"
	mkdir -p "$J/mnt" "$J/etc" "$J/a/b" "$J/up" "$J/work" "$J/proc" \
		 "$S/outside"
	touch "$J/etc/jailmarker" "$S/outside/hostmarker"
}

teardown() {
	[ -z "${LOOP:-}" ] || losetup -d "$LOOP"
	broker_teardown
}

@test "'..' chains in lowerdir, from a cwd deep in the jail, stop at the jail's root" {
	same_as_kernel shimmed "$CALLER" --chroot "$J" --chdir /a/b mount overlay /mnt overlay 0 \
		lowerdir=../../../../../../../../etc:../../../../../../../../etc/../a
	[[ $output == "mount /mnt = 0"$'\n'* ]]
	[ -e "$J/mnt/jailmarker" ]
	[ -d "$J/mnt/b" ]
	[ ! -e "$J/mnt/passwd" ] && [ ! -e "$J/mnt/shadow" ]
}

@test "a relative upperdir and workdir are the jail's, relative to the cwd: writes land in the jail" {
	mkdir "$J/a/b/up" "$J/a/b/work"
	same_as_kernel shimmed "$CALLER" --chroot "$J" --chdir /a/b mount overlay /mnt overlay 0 \
		lowerdir=/etc,upperdir=up,workdir=work
	[[ $output == "mount /mnt = 0"$'\n'* ]]
	touch "$J/mnt/written"
	[ -e "$J/a/b/up/written" ]
	[ -d "$J/a/b/work/work" ]
	# nothing of it anywhere near the broker's own places
	[ -z "$(find "$STATE" -name written -o -name work)" ]
}

@test "paths that only the broker's cwd would give meaning are ENOENT, as natively" {
	snapshot before
	same_as_kernel shimmed "$CALLER" --chroot "$J" --chdir /a/b mount overlay /mnt overlay 0 \
		lowerdir=/etc,upperdir=../../../state,workdir=../../../state \
		mount overlay /mnt overlay 0 lowerdir=stage:newroot
	[ "$(sed -n 1,2p <<<"$output")" = "mount /mnt = ENOENT
mount /mnt = ENOENT" ]
	assert_table_unchanged before
}

@test "a symlink out of the jail in lowerdir resolves inside it" {
	ln -s ../../../../../../../etc "$J/a/b/esc"
	ln -s /a "$J/a/b/abs"
	same_as_kernel shimmed "$CALLER" --chroot "$J" --chdir /a/b mount overlay /mnt overlay 0 lowerdir=esc:abs
	[[ $output == "mount /mnt = 0"$'\n'* ]]
	[ -e "$J/mnt/jailmarker" ] && [ -d "$J/mnt/b" ] && [ ! -e "$J/mnt/passwd" ]
}

@test "/proc/self/cwd and /proc/self/root in lowerdir are the caller's, as natively" {
	host mount -t proc proc "$J/proc"
	[ "$(call_result)" = 0 ]
	same_as_kernel shimmed "$CALLER" --chroot "$J" --chdir /a/b \
		mount overlay /mnt overlay 0 lowerdir=/proc/self/cwd/../../../../../etc \
		mount overlay /mnt overlay 0 lowerdir=/proc/self/root/etc:/proc/thread-self/cwd \
		mount /proc/self/cwd /mnt - bind
	# (the kernel refuses the first: EINVAL; the broker must too)
	[ "$(sed -n 2,3p <<<"$output")" = "mount /mnt = 0
mount /mnt = 0" ]
	[ ! -e "$J/mnt/hostmarker" ]
}

@test "/proc/self/fd/N in lowerdir is the caller's descriptor: ENOENT when it has none, as natively" {
	host mount -t proc proc "$J/proc"
	snapshot before
	same_as_kernel shimmed "$CALLER" --chroot "$J" --chdir /a/b mount overlay /mnt overlay 0 \
		lowerdir=/proc/self/fd/57:/proc/self/fd/58
	[[ $output == "mount /mnt = ENOENT"$'\n'* ]]
	assert_table_unchanged before
}

@test "a host device named through '..' from the jail: ENOENT, as natively" {
	command -v mkfs.ext2 >/dev/null || skip "no mkfs.ext2"
	truncate -s 8M "$S/outside/disk.img"
	mkfs.ext2 -q "$S/outside/disk.img"
	LOOP=$(losetup -f --show "$S/outside/disk.img")
	snapshot before
	same_as_kernel shimmed "$CALLER" --chroot "$J" --chdir /a/b mount "../../../../../../../..$LOOP" /mnt ext2 0 \
		mount "../../../../../../..$LOOP" /mnt ext2 0
	[ "$(sed -n 1,2p <<<"$output")" = "mount /mnt = ENOENT
mount /mnt = ENOENT" ]
	assert_table_unchanged before
}

@test "the jail's own device node, named relatively, is mounted as natively" {
	command -v mkfs.ext2 >/dev/null || skip "no mkfs.ext2"
	truncate -s 8M "$S/outside/disk.img"
	mkfs.ext2 -q "$S/outside/disk.img"
	LOOP=$(losetup -f --show "$S/outside/disk.img")
	mkdir -p "$J/dev"
	cp -a "$LOOP" "$J/dev/"
	same_as_kernel shimmed "$CALLER" --chroot "$J" --chdir /a/b mount "../../dev/${LOOP#/dev/}" /mnt ext2 0
	[[ $output == "mount /mnt = 0"$'\n'* ]]
	[ -d "$J/mnt/lost+found" ]
}

# tmpfs, proc and the like read no path: the broker mounts them itself
# (newmount.c, reads_no_path()).  Their source stays the caller's word,
# whatever it looks like, and nothing of the broker's root shows.
@test "a filesystem that reads no path: its source is the caller's word, as natively" {
	same_as_kernel shimmed "$CALLER" --chroot "$J" --chdir /a/b \
		mount ../../../../etc /mnt tmpfs 0 size=64k,mode=700 \
		mount /proc/self/fd/0 /a tmpfs 0 mount x /proc proc 0 \
		mount /etc /up tmpfs 0 nosuchoption
	[[ $output == *"mount /mnt = 0"*"mount /a = 0"*"mount /proc = 0"* ]]
	[[ $output == *"mount /up = EINVAL"* ]]
	[[ $output == *"\$S/jail/mnt / tmpfs ../../../../etc rw/rw"* ]]
	[[ $output == *"\$S/jail/a / tmpfs /proc/self/fd/0 rw/rw"* ]]
	[ -e "$J/proc/self/mountinfo" ]
	[ ! -e "$J/mnt/jailmarker" ]
}

# A spelling that names a directory of NEWROOT's own layout ("." here)
# cannot be laid out as spelled (newroot.c, place()): the kernel is given
# its object's place instead, in the caller's data again (newmount.c,
# render_data()), escaped as overlay's parser reads it: both layers sit
# in one group whose names hold ':'.
@test "a layer spelled '.' is given as its place, ':' in it escaped: mounted as natively" {
	mkdir -p "$J/p/x:1" "$J/p/x:2"
	touch "$J/p/x:1/one" "$J/p/x:2/two"
	same_as_kernel shimmed "$CALLER" --chroot "$J" --chdir /p/x:2 \
		mount overlay /mnt overlay 0 'lowerdir=/p/x\:1:.'
	[[ $output == "mount /mnt = 0"$'\n'* ]]
	[ -e "$J/mnt/one" ] && [ -e "$J/mnt/two" ]
	# the kernel read the place given for "." ('\' is \134 in mountinfo)
	grep -q ',lowerdir=/p/x\\134:1:/\.o/g[0-9]*/x\\134:2\(,\|$\)' \
		/proc/self/mountinfo
}
