#!/usr/bin/env bats
# The broker is the security boundary (design.md principle 5): whatever a
# jailed or unprivileged caller sends, paths resolve inside its root, the
# privilege rule is the kernel's, and bad input is answered with an errno
# without changing anything or stopping the broker.  Where the kernel
# itself would answer, the answer must be the kernel's (same_as_kernel runs
# the same command natively in a scratch namespace); where the kernel would
# let a chrooted root escape (procfs magic links), the broker refuses.
# Callers that lie about who they are or what they send:
# broker-attacks-peer.bats.

load ../lib/broker

setup() {
	broker_setup
	mkdir -p "$J/mnt" "$J/etc" "$S/outside"
	touch "$J/marker" "$J/etc/jailmarker" "$S/outside/hostmarker"
}

teardown() {
	[ -z "${LOOP:-}" ] || losetup -d "$LOOP"
	broker_teardown
}


@test "'..' stops at the jail's root: mount --bind ../../.. /mnt binds the jail itself" {
	same_as_kernel jail mount --bind ../../.. /mnt
	[ "$(call_result)" = 0 ]
	[ -e "$J/mnt/marker" ]
	grep -qx "\$S/jail/mnt /jail tmpfs sandbox rw/rw on \$S" <<<"$output"
}

@test "'..' from a subdirectory and after '/' stays in the jail too" {
	mkdir -p "$J/a/b"
	same_as_kernel shimmed "$CALLER" --chroot "$J" --chdir /a/b \
		mount ../../../../../.. /mnt - bind \
		mount /../../../etc/../../.. /a - bind
	[[ $output == "mount /mnt = 0"$'\n'"mount /a = 0"$'\n'* ]]
	grep -qx "\$S/jail/mnt /jail tmpfs sandbox rw/rw on \$S" <<<"$output"
	grep -qx "\$S/jail/a /jail tmpfs sandbox rw/rw on \$S" <<<"$output"
}

@test "an absolute symlink pointing outside resolves inside the jail" {
	ln -s /etc "$J/escape"
	same_as_kernel shimmed "$CALLER" --chroot "$J" \
		mount /escape /mnt - bind \
		mount none /escape tmpfs 0
	[[ $output == "mount /mnt = 0"$'\n'"mount /escape = 0"$'\n'* ]]
	[ -e "$J/mnt/jailmarker" ]
	[ ! -e "$J/mnt/passwd" ]
	grep -qx "\$S/jail/mnt /jail/etc tmpfs sandbox rw/rw on \$S" <<<"$output"
	grep -qx "\$S/jail/etc / tmpfs none rw/rw on \$S" <<<"$output"
	# the host's /etc is untouched
	run is_mountpoint /etc
	[ "$status" -ne 0 ]
}

@test "a relative symlink climbing out, in the middle of a path, resolves inside the jail" {
	ln -s ../../.. "$J/rel"
	ln -s ../../../../../../../../.. "$J/up"
	same_as_kernel shimmed "$CALLER" --chroot "$J" \
		mount /rel/etc /mnt - bind \
		mount none /rel/up/rel/etc tmpfs 0 \
		mount "/up$S/outside" /mnt - bind
	[[ $output == "mount /mnt = 0"$'\n'"mount /rel/up/rel/etc = 0"$'\n'"mount /mnt = ENOENT"$'\n'* ]]
	grep -qx "\$S/jail/mnt /jail/etc tmpfs sandbox rw/rw on \$S" <<<"$output"
	grep -qx "\$S/jail/etc / tmpfs none rw/rw on \$S" <<<"$output"
}

@test "a symlink to a host path names nothing in the jail: ENOENT" {
	ln -s "$S/outside" "$J/hostpath"
	snapshot before
	same_as_kernel shimmed "$CALLER" --chroot "$J" \
		mount /hostpath /mnt - bind \
		mount none /hostpath tmpfs 0 \
		mount none "$S/outside" tmpfs 0 \
		umount /hostpath 0
	[[ $output == "mount /mnt = ENOENT"$'\n'"mount /hostpath = ENOENT"$'\n'"mount $S/outside = ENOENT"$'\n'"umount /hostpath = ENOENT"$'\n'* ]]
	assert_table_unchanged before
}

@test "util-linux in the jail follows the same symlinks to the same places" {
	ln -s /etc "$J/escape"
	ln -s ../../.. "$J/rel"
	same_as_kernel jail mount --bind /rel/escape /mnt
	[ -e "$J/mnt/jailmarker" ]
	same_as_kernel jail mount --no-canonicalize -t tmpfs none /rel/escape
	[ "$(call_result)" = 0 ]
	grep -qx "\$S/jail/etc / tmpfs none rw/rw on \$S" <<<"$output"
}

@test "paths in mount data resolve inside the jail too: an overlay's lowerdir, as natively" {
	grep -qw overlay /proc/filesystems || skip "no overlayfs"
	mkdir "$J/usr"
	same_as_kernel shimmed "$CALLER" --chroot "$J" \
		mount overlay /mnt overlay 0 lowerdir=/etc:/usr
	[[ $output == "mount /mnt = 0"$'\n'* ]]
	# the jail's /etc, not the host's
	[ -e "$J/mnt/jailmarker" ]
	[ ! -e "$J/mnt/passwd" ]
}

@test "a device node is looked up inside the jail: the host's loop device is ENOENT there" {
	command -v mkfs.ext2 >/dev/null || skip "no mkfs.ext2"
	truncate -s 8M "$S/outside/disk.img"
	mkfs.ext2 -q "$S/outside/disk.img"
	LOOP=$(losetup -f --show "$S/outside/disk.img")
	snapshot before
	same_as_kernel shimmed "$CALLER" --chroot "$J" mount "$LOOP" /mnt ext2 0
	[[ $output == "mount /mnt = ENOENT"$'\n'* ]]
	assert_table_unchanged before
}

@test "procfs magic links to places outside the jail are refused: ELOOP, nothing mounted" {
	mkdir -p "$J/proc" "$S/keep"
	host mount -t proc proc "$J/proc"
	host mount -t tmpfs keep "$S/keep"
	[ "$(call_result)" = 0 ]
	# the kernel itself lets a chrooted root escape this way
	run native_outcome "$CALLER" --open "$S/outside" --chroot "$J" \
		mount /proc/self/fd/%f /mnt - bind
	[[ $output == "mount /mnt = 0"$'\n'* ]]
	grep -qx "\$S/jail/mnt /outside tmpfs sandbox rw/rw on \$S" <<<"$output"
	# the broker does not
	snapshot before
	run shimmed "$CALLER" --open "$S/outside" --chroot "$J" \
		mount /proc/self/fd/%f /mnt - bind \
		mount /proc/%p/fd/%f /mnt - bind \
		mount /proc/thread-self/fd/%f /mnt - bind \
		mount /proc/1/root /mnt - bind \
		mount none /proc/self/fd/%f tmpfs 0
	[ "$(grep -c . <<<"$output")" = 5 ]
	# init's root: ELOOP, or EACCES where the broker may not follow it
	[ "$(grep -cE ' = (ELOOP|EACCES)$' <<<"$output")" = 5 ]
	assert_table_unchanged before
	[ ! -e "$J/mnt/hostmarker" ]
}

@test "umount through a magic link to a mount outside the jail is refused: ELOOP" {
	mkdir -p "$J/proc" "$S/keep"
	host mount -t proc proc "$J/proc"
	host mount -t tmpfs keep "$S/keep"
	# natively this unmounts the host's $S/keep from inside the jail
	run native_outcome "$CALLER" --open "$S/keep" --chroot "$J" \
		umount /proc/self/fd/%f detach
	[[ $output == *" = 0"$'\n'* ]]
	[[ $output != *$'\n'"\$S/keep "* ]]
	snapshot before
	run shimmed "$CALLER" --open "$S/keep" --chroot "$J" \
		umount /proc/self/fd/%f 0 umount /proc/self/fd/%f detach
	[[ $output =~ ^"umount /proc/self/fd/"[0-9]+" = ELOOP"$'\n'"umount /proc/self/fd/"[0-9]+" = ELOOP"$ ]]
	assert_table_unchanged before
}

# A racer swaps the jail's d between a directory and a symlink to the host
# path $S/outside while the jail mounts on /d/x and binds /d/y, again and
# again.  In the jail the symlink names $J$S/outside, which exists too; on
# the host it would name $S/outside.
race_setup() {
	mkdir -p "$J/d/x" "$J/d/y" "$J$S/outside/x" "$J$S/outside/y" \
		"$S/outside/x" "$S/outside/y" "$J/b"
	ln -s "$S/outside" "$J/d.alt"
	snapshot before
	# watch for anything mounted on or bound from the host's $S/outside
	background bash -c 'while :; do
		awk -v o="$1" "\$5 == o || index(\$5, o \"/\") == 1 || \$4 ~ \"^/outside\"" \
			/proc/self/mountinfo
	done' watcher "$S/outside"
	WATCHER=$BG
	background "$CALLER" swap "$J/d" "$J/d.alt" 60
	RACER=$BG
}

@test "a symlink swapped between check and mount never gets anything outside the jail mounted" {
	race_setup
	run shimmed "$CALLER" --chroot "$J" --repeat 200 \
		mount none /d/x tmpfs 0 mount /d/y /b - bind
	kill "$RACER" "$WATCHER"
	wait "$RACER" "$WATCHER" || true
	[ "$(grep -c . <<<"$output")" = 400 ]
	# the watcher never saw the host's $S/outside mounted on or bound
	[ ! -s "$BATS_TEST_TMPDIR/bg.0" ]
	# every mount that is new sits inside the jail, and every bind's root
	# is inside the jail's directory
	local new
	new=$(comm -13 <(cut -d' ' -f1 "$BATS_TEST_TMPDIR/table.before" | sort) \
		<(cut -d' ' -f1 /proc/self/mountinfo | sort))
	# one new mount per call that succeeded (the other test counts those)
	[ "$(wc -w <<<"$new")" = "$(grep -c ' = 0$' <<<"$output")" ]
	for id in $new; do
		awk -v id="$id" -v j="$J/" -v s="$S" '$1 == id {
			ok = index($5, j) == 1 && ($9 != "sandbox" || index($4, "/jail/") == 1)
			if (!ok) print "outside the jail: " $0
			exit !ok
		}' /proc/self/mountinfo
	done
}

# The same race for correctness: natively every call succeeds whatever the
# racer does.  Batches run until one call fails or 20 s have passed (a
# failure may be rare: the race window is small).
RACE_STEPS=(mount none /d/x tmpfs 0 mount /d/y /b - bind
	    umount /d/x detach umount /b detach)

@test "a symlink swapped between check and mount: every mount succeeds, as natively" {
	race_setup
	run native "$CALLER" --chroot "$J" --repeat 300 "${RACE_STEPS[@]}"
	[ "$(grep -c '^mount .* = 0$' <<<"$output")" = 600 ]
	local end=$((SECONDS + 20)) calls=0 bad=
	while ((SECONDS < end)) && [ -z "$bad" ]; do
		run shimmed "$CALLER" --chroot "$J" --repeat 50 "${RACE_STEPS[@]}"
		bad=$(grep '^mount' <<<"$output" | grep -v ' = 0$' | sort | uniq -c)
		calls=$((calls + 100))
	done
	kill "$RACER" "$WATCHER"
	wait "$RACER" "$WATCHER" || true
	if [ -n "$bad" ]; then
		echo "through the broker, within $calls mount calls:"
		echo "$bad"
		false
	fi
}

@test "a jail renames a directory that holds a mount: the mount stays reachable, as natively" {
	mkdir -p "$J/d/x"
	run shimmed "$CALLER" --chroot "$J" mount none /d/x tmpfs 0
	[ "$output" = "mount /d/x = 0" ]
	# any jailed process may rename its own directories
	mv "$J/d" "$J/e"
	same_as_kernel shimmed "$CALLER" --chroot "$J" \
		mount none /e/x tmpfs 0 umount /e/x 0 umount /e/x 0
	[[ $output == "mount /e/x = 0"$'\n'"umount /e/x = 0"$'\n'"umount /e/x = 0"$'\n'* ]]
}

@test "umount / in a jail whose root is a plain directory: EINVAL, nothing changes" {
	snapshot before
	same_as_kernel shimmed "$CALLER" --chroot "$J" umount / 0 umount / detach
	[[ $output == "umount / = EINVAL"$'\n'"umount / = EINVAL"$'\n'* ]]
	same_as_kernel jail umount /
	[ "$(call_result)" = EINVAL ]
	assert_table_unchanged before
}

# The jail's root as a filesystem of its own.  A prelude: the native run
# makes its own (remounting a superblock read-only reaches every namespace).
jailfs() {
	host mount -t tmpfs jailfs "$J"
}

@test "umount / in a jail whose root is a mount remounts it read-only, as the kernel does" {
	PRELUDE=jailfs same_as_kernel shimmed "$CALLER" --chroot "$J" umount / 0
	[[ $output == "umount / = 0"$'\n'* ]]
	grep -qx "\$S/jail / tmpfs jailfs rw/ro on \$S" <<<"$output"
	run touch "$J/after"
	[ "$status" -ne 0 ]
	[[ $output == *"Read-only file system"* ]]
	# the sandbox around it stays writable
	touch "$S/still-rw"
}

@test "umount -l / in a jail whose root is a mount detaches it, as the kernel does" {
	PRELUDE=jailfs same_as_kernel shimmed "$CALLER" --chroot "$J" umount / detach
	[[ $output == "umount / = 0"$'\n'* ]]
	[[ $output != *jailfs* ]]
}

@test "covering the jail's root from inside lands on the jail's directory" {
	snapshot before
	same_as_kernel shimmed "$CALLER" --chroot "$J" mount none / tmpfs 0
	[[ $output == "mount / = 0"$'\n'* ]]
	grep -qx "\$S/jail / tmpfs none rw/rw on \$S" <<<"$output"
	# nothing else changed: every other line of the table is as it was
	diff <(grep -v " $J " "$BATS_TEST_TMPDIR/table.before") \
		<(grep -v " $J " /proc/self/mountinfo)
}

@test "util-linux covering the jail's root from inside, as natively" {
	same_as_kernel jail mount -t tmpfs cover /
	[ "$(call_result)" = 0 ]
	grep -qx "\$S/jail / tmpfs cover rw/rw on \$S" <<<"$output"
}
