#!/usr/bin/env bats
# The legacy-kernel simulation really refuses what a pre-2.6.15 kernel lacks
# (mount propagation, mount namespaces, setns, the new mount API) and still
# allows everything libshare's core path needs (plain mount, bind, move,
# remount, umount, chroot, fork, exec); its profiles take away what Linux
# 3.2 lacks, file handles, FUSE and fdinfo's mnt_id (issue 23), and
# cross-memory attach (--no-cma). Each refusal is also shown to succeed
# without the simulation, so that no test passes on a kernel that simply
# lacks the feature. Runs as root, in a private mount namespace (Makefile.am).

bats_require_minimum_version 1.5.0
load ../lib/legacy

setup() {
	legacy_require
	PROBE=$(dirname "$LEGACY_SIM")/probe
	sandbox=$BATS_TEST_TMPDIR/sandbox
	mkdir -p "$sandbox"
	mount -t tmpfs legacy-sandbox "$sandbox"
}

teardown() {
	# A lazy unmount detaches the whole tree, busy or not.
	! mountpoint -q "$sandbox" || umount -l "$sandbox"
}

# probe_says NAME RESULT: $output (from `run ... probe`) has the line "NAME RESULT".
probe_says() {
	local line
	line=$(grep "^$1 " <<<"$output") || { echo "probe printed no $1 line" >&2; return 1; }
	[ "$line" = "$1 $2" ] || { echo "expected '$1 $2', probe said '$line'" >&2; return 1; }
}

propagation() {
	findmnt -no PROPAGATION --mountpoint "$1"
}

# A chroot jail sharing the host's programs: /usr bound read-only, the
# top-level program directories as on the host (symlinks or binds).
make_jail() {
	local jail=$1 d
	mkdir -p "$jail/usr" "$jail/tmp"
	mount --bind /usr "$jail/usr"
	mount -o remount,bind,ro "$jail/usr"
	for d in bin sbin lib lib32 lib64; do
		if [ -L "/$d" ]; then
			ln -s "$(readlink "/$d")" "$jail/$d"
		elif [ -d "/$d" ]; then
			mkdir "$jail/$d"
			mount --bind "/$d" "$jail/$d"
		fi
	done
}

@test "legacy-sim --check prints nothing and succeeds" {
	run "$LEGACY_SIM" --check
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "legacy-sim exits with the command's status, 125 on usage, 126 unrunnable, 127 not found" {
	run -7 "$LEGACY_SIM" -- sh -c 'exit 7'
	run -125 "$LEGACY_SIM"
	[[ "$output" == "legacy-sim: usage:"* ]]
	run -125 "$LEGACY_SIM" --bogus true
	run -126 "$LEGACY_SIM" "$sandbox"
	[ "$output" = "legacy-sim: $sandbox: Permission denied" ]
	run -127 "$LEGACY_SIM" no-such-command-here
	[ "$output" = "legacy-sim: no-such-command-here: No such file or directory" ]
}

@test "without legacy-sim the kernel has every feature the simulation refuses" {
	local name
	run "$PROBE" "$sandbox"
	[ "$status" -eq 0 ]
	for name in mount-shared mount-slave mount-unbindable mount-rprivate \
		mount-private clone-newns unshare-newns open_tree fsopen fspick \
		open_tree_attr; do
		probe_says "$name" ok
	done
	# Called with harmless bad arguments: the kernel checks them, so it
	# has the syscall.
	probe_says setns EBADF
	probe_says move_mount EINVAL
	probe_says fsconfig EINVAL
	probe_says fsmount EBADF
	probe_says mount_setattr EINVAL
	probe_says statmount EFAULT
	probe_says listmount EFAULT
	probe_says clone3 EINVAL
	# what the profiles take away (issue 23)
	probe_says process_vm_readv ok
	probe_says process_vm_writev ok
	probe_says kcmp EINVAL
	probe_says getrandom EINVAL
	probe_says statx ok
	probe_says glibc-statx-dont-sync ok
	probe_says open-tmpfile ok
	probe_says openat-tmpfile ok
	probe_says name_to_handle_at EOVERFLOW
	probe_says open_by_handle_at ok
}

@test "mount(2) with MS_SHARED, MS_SLAVE, MS_PRIVATE or MS_UNBINDABLE fails with EINVAL" {
	run legacy "$PROBE" "$sandbox"
	[ "$status" -eq 0 ]
	probe_says mount-shared EINVAL
	probe_says mount-slave EINVAL
	probe_says mount-unbindable EINVAL
	probe_says mount-rprivate EINVAL
	probe_says mount-private EINVAL
	[ "$(propagation "$sandbox")" = private ]
}

@test "mount --make-shared, --make-rprivate, --make-slave, --make-unbindable fail with EINVAL" {
	local op
	for op in --make-shared --make-rprivate --make-slave --make-unbindable; do
		# util-linux 2.38 words EINVAL as "not mount point or bad option";
		# its debug output names the errno of its own mount(2).
		LIBMOUNT_DEBUG=cxt run legacy mount "$op" "$sandbox"
		[ "$status" -eq 32 ]
		[[ "$output" == *"mount(2) failed [errno=22 Invalid argument]"* ]]
		[[ "$output" == *"mount: $sandbox: not mount point or bad option."* ]]
		[ "$(propagation "$sandbox")" = private ]
	done
	# The same command without the simulation does change the mount.
	mount --make-shared "$sandbox"
	[ "$(propagation "$sandbox")" = shared ]
}

@test "mount(2) with the old MS_MGC_VAL magic, which overlaps MS_PRIVATE|MS_SLAVE, still works" {
	run legacy "$PROBE" "$sandbox"
	[ "$status" -eq 0 ]
	probe_says mount-magic-remount ok
}

@test "unshare -m and clone(CLONE_NEWNS) fail with EINVAL; plain clone works" {
	run legacy unshare -m true
	[ "$status" -eq 1 ]
	[ "$output" = "unshare: unshare failed: Invalid argument" ]
	run legacy "$PROBE" "$sandbox"
	probe_says unshare-newns EINVAL
	probe_says clone-newns EINVAL
	probe_says clone ok
}

@test "setns fails with ENOSYS" {
	run legacy nsenter --mount=/proc/self/ns/mnt true
	[ "$status" -eq 1 ]
	[[ "$output" == *"reassociate to namespace 'ns/mnt' failed: Function not implemented" ]]
	run legacy "$PROBE" "$sandbox"
	probe_says setns ENOSYS
}

@test "the new mount API, statmount, listmount and clone3 fail with ENOSYS" {
	local name
	run legacy "$PROBE" "$sandbox"
	[ "$status" -eq 0 ]
	for name in open_tree move_mount fsopen fsconfig fsmount fspick \
		mount_setattr statmount listmount open_tree_attr clone3; do
		probe_says "$name" ENOSYS
	done
}

@test "the legacy profile alone keeps Linux 3.5's calls, O_TMPFILE and file handles" {
	LEGACY_SIM_PROFILE= run legacy "$PROBE" "$sandbox"
	[ "$status" -eq 0 ]
	probe_says kcmp EINVAL
	probe_says statx ok
	probe_says open-tmpfile ok
	probe_says name_to_handle_at EOVERFLOW
}

@test "--abi 3.2: kcmp (312) and every later syscall fail with ENOSYS, the one before works" {
	LEGACY_SIM_PROFILE= run "$LEGACY_SIM" --abi 3.2 "$PROBE" "$sandbox"
	[ "$status" -eq 0 ]
	probe_says process_vm_writev ok
	probe_says kcmp ENOSYS
	probe_says getrandom ENOSYS
	probe_says statx ENOSYS
	# the rest of the legacy filter still holds, file handles are kept
	probe_says mount-shared EINVAL
	probe_says name_to_handle_at EOVERFLOW
	probe_says open_by_handle_at ok
}

@test "--abi 3.2: open and openat with O_TMPFILE fail with EISDIR, a plain open works" {
	LEGACY_SIM_PROFILE= run "$LEGACY_SIM" --abi 3.2 "$PROBE" "$sandbox"
	probe_says open-dir ok
	probe_says open-tmpfile EISDIR
	probe_says openat-tmpfile EISDIR
}

@test "--abi 3.2: glibc's statx() emulation refuses AT_STATX_DONT_SYNC with EINVAL, not ENOSYS" {
	LEGACY_SIM_PROFILE= run "$LEGACY_SIM" --abi 3.2 "$PROBE" "$sandbox"
	probe_says glibc-statx-dont-sync EINVAL
}

@test "--no-fhandle: name_to_handle_at and open_by_handle_at fail with EOPNOTSUPP" {
	LEGACY_SIM_PROFILE= run "$LEGACY_SIM" --no-fhandle "$PROBE" "$sandbox"
	[ "$status" -eq 0 ]
	probe_says name_to_handle_at EOPNOTSUPP
	probe_says open_by_handle_at EOPNOTSUPP
	probe_says kcmp EINVAL
	probe_says open-tmpfile ok
}

@test "--no-fuse and --no-fdinfo-mnt-id are hooks in the command's LIBSHARE_LEGACY_SIM" {
	LEGACY_SIM_PROFILE= run "$LEGACY_SIM" printenv LIBSHARE_LEGACY_SIM
	[ "$status" -eq 1 ]
	LEGACY_SIM_PROFILE= run "$LEGACY_SIM" --no-fuse printenv LIBSHARE_LEGACY_SIM
	[ "$output" = no-fuse ]
	LEGACY_SIM_PROFILE= run "$LEGACY_SIM" --no-fdinfo-mnt-id --no-fuse \
		--no-fuse printenv LIBSHARE_LEGACY_SIM
	[ "$output" = no-fdinfo-mnt-id,no-fuse ]
}

@test "--oldest is --abi 3.2 --no-fhandle --no-fuse --no-fdinfo-mnt-id" {
	LEGACY_SIM_PROFILE= run "$LEGACY_SIM" --oldest --check
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	LEGACY_SIM_PROFILE= run "$LEGACY_SIM" --oldest sh -c \
		'printenv LIBSHARE_LEGACY_SIM; exec "$0" "$1"' "$PROBE" "$sandbox"
	[ "${lines[0]}" = no-fuse,no-fdinfo-mnt-id ]
	probe_says kcmp ENOSYS
	probe_says open-tmpfile EISDIR
	probe_says name_to_handle_at EOPNOTSUPP
	# Linux 3.2 has cross-memory attach: --no-cma is not part of it
	probe_says process_vm_readv ok
}

@test "--no-cma: process_vm_readv and process_vm_writev fail with ENOSYS, i386's too" {
	run "$PROBE" "$sandbox"
	local native_i386=$(grep '^i386-process_vm_readv ' <<<"$output")
	LEGACY_SIM_PROFILE= run "$LEGACY_SIM" --no-cma --check
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	LEGACY_SIM_PROFILE= run "$LEGACY_SIM" --no-cma "$PROBE" "$sandbox"
	[ "$status" -eq 0 ]
	probe_says process_vm_readv ENOSYS
	probe_says process_vm_writev ENOSYS
	# the rest of the legacy filter holds, nothing else is taken away
	probe_says mount-shared EINVAL
	probe_says kcmp EINVAL
	probe_says name_to_handle_at EOVERFLOW
	# i386's numbers (347, 348) have their rule: EINVAL natively (too
	# many iovecs), ENOSYS under the filter
	[ "$native_i386" = "i386-process_vm_readv EINVAL" ] ||
		skip "no i386 emulation: $native_i386"
	probe_says i386-process_vm_readv ENOSYS
}

@test "LEGACY_SIM_PROFILE adds its profile to every run; a word that is none is refused" {
	LEGACY_SIM_PROFILE="--abi 3.2  --no-fhandle" run "$LEGACY_SIM" "$PROBE" "$sandbox"
	probe_says kcmp ENOSYS
	probe_says name_to_handle_at EOPNOTSUPP
	LEGACY_SIM_PROFILE=--no-fuse run "$LEGACY_SIM" --abi 3.2 -- \
		printenv LIBSHARE_LEGACY_SIM
	[ "$output" = no-fuse ]
	LEGACY_SIM_PROFILE="--abi 3.1" run -125 "$LEGACY_SIM" true
	[ "$output" = "legacy-sim: LEGACY_SIM_PROFILE: not a profile: --abi 3.1" ]
	run -125 "$LEGACY_SIM" --abi 4.4 true
	[[ "$output" == "legacy-sim: usage:"* ]]
}

@test "x32 and i386 syscalls cannot go around the filter: the i386 ABI gets the same rules" {
	run "$PROBE" "$sandbox"
	local native_i386=$(grep '^i386-mount-shared ' <<<"$output")
	run legacy "$PROBE" "$sandbox"
	probe_says x32-mount-shared ENOSYS
	# Without i386 emulation there is no such path around the filter.
	[ "$native_i386" = "i386-mount-shared ok" ] || skip "no i386 emulation: $native_i386"
	probe_says i386-mount-shared EINVAL
	[ "$(propagation "$sandbox")" = private ]
}

@test "mount -t tmpfs and umount work" {
	mkdir "$sandbox/a"
	legacy mount -t tmpfs inner "$sandbox/a"
	mountpoint -q "$sandbox/a"
	echo data >"$sandbox/a/file"
	legacy umount "$sandbox/a"
	! mountpoint -q "$sandbox/a"
	[ ! -e "$sandbox/a/file" ]
}

@test "mount --bind and mount --move work" {
	mkdir "$sandbox/a" "$sandbox/b" "$sandbox/c"
	echo data >"$sandbox/a/file"
	legacy mount --bind "$sandbox/a" "$sandbox/b"
	[ "$(cat "$sandbox/b/file")" = data ]
	legacy mount --move "$sandbox/b" "$sandbox/c"
	! mountpoint -q "$sandbox/b"
	[ "$(cat "$sandbox/c/file")" = data ]
}

@test "mount -o remount,bind,ro makes one mount read-only" {
	mkdir "$sandbox/a" "$sandbox/b"
	legacy mount --bind "$sandbox/a" "$sandbox/b"
	legacy mount -o remount,bind,ro "$sandbox/b"
	run touch "$sandbox/b/file"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Read-only file system"* ]]
	touch "$sandbox/a/file"
	[ -e "$sandbox/b/file" ]
}

@test "umount -l detaches a busy mount" {
	mkdir "$sandbox/a"
	mount -t tmpfs inner "$sandbox/a"
	exec {busy}<"$sandbox/a"
	run legacy umount "$sandbox/a"
	[ "$status" -eq 32 ]
	[[ "$output" == *"target is busy"* ]]
	legacy umount -l "$sandbox/a"
	! mountpoint -q "$sandbox/a"
	exec {busy}<&-
}

@test "chroot works, and the jailed program is under the simulation too" {
	make_jail "$sandbox/jail"
	legacy chroot "$sandbox/jail" /bin/sh -c 'echo inside >/tmp/marker'
	[ "$(cat "$sandbox/jail/tmp/marker")" = inside ]
	run legacy chroot "$sandbox/jail" unshare -m true
	[ "$status" -eq 1 ]
	[ "$output" = "unshare: unshare failed: Invalid argument" ]
}

@test "fork and exec work: a pipeline runs" {
	run legacy bash -c 'echo through | cat | tr a-z A-Z'
	[ "$status" -eq 0 ]
	[ "$output" = THROUGH ]
}

@test "the filter is inherited by a grandchild" {
	export PROBE sandbox
	run legacy bash -c 'bash -c "grep ^Seccomp: /proc/self/status; exec \"\$PROBE\" \"\$sandbox\""'
	[ "$status" -eq 0 ]
	[[ "$output" == *$'Seccomp:\t2'* ]]
	probe_says mount-shared EINVAL
	probe_says fsopen ENOSYS
	probe_says unshare-newns EINVAL
}
