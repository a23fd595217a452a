#!/usr/bin/env bats
# Jails of other architectures on this amd64 host: arm64 and i386 Debian
# bookworm systems built by mkjail.sh --arch (mmdebstrap, downloaded once
# into the build tree, test/cross/build), each with its own shim at its
# multiarch path in its /etc/ld.so.preload.  The jail's unmodified
# util-linux mount, umount and findmnt (and coreutils' cat), programs of
# the jail's architecture run through qemu-user (binfmt_misc) where the
# kernel cannot run them, under the legacy simulation, get the RFC's
# Example 1 from the x86_64 broker: the host's /floppy is shared, the
# jail's /floppy its slave; a floppy the host mounts appears in the jail
# and goes with the host's umount; one the jail mounts stays in the jail.
# The kernel's own table stays private: every copy is the broker's.
# Skipped only without mmdebstrap, qemu-user-static, binfmt-support or the
# cross compiler (the README's test command installs them).

load ../lib/broker
load cross

MKJAIL=$CROSS_SRC/jail-examples/mkjail.sh

# binfmt_misc with qemu for TARGET's programs (legacy-abi.md): the kernel
# then runs them through qemu-ARCH-static (flag F: the interpreter is
# opened once, outside any jail).  Debian registers no i386 format on
# amd64: it is registered by hand, with the i386 ELF header's magic and
# mask.  An amd64 kernel with IA32 emulation runs i386 programs itself.
binfmt_for() {
	local bm=/proc/sys/fs/binfmt_misc
	if [ ! -e $bm/register ]; then
		mount -t binfmt_misc binfmt_misc $bm
	fi
	case $1 in
	aarch64-linux-gnu)
		[ -e $bm/qemu-aarch64 ] ||
			update-binfmts --enable qemu-aarch64 >&2 ;;
	i686-linux-gnu)
		[ "${CROSS_RUN[0]##*/}" != "$CROSS_LOADER" ] || return 0
		[ -e $bm/qemu-i386 ] ||
			printf '%s' ':qemu-i386:M::\x7fELF\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x03\x00:\xff\xff\xff\xff\xff\xfe\xfe\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:/usr/bin/qemu-i386-static:F' >$bm/register ;;
	esac
}

# What a jail of Debian architecture ARCH (TARGET's) needs: its programs
# runnable here, its shim, and its system, downloaded once.
foreign_setup() {
	JARCH=$1
	cross_need "$2"
	command -v mmdebstrap >/dev/null ||
		skip "no mmdebstrap (apt-get install mmdebstrap qemu-user-static binfmt-support)"
	command -v update-binfmts >/dev/null ||
		skip "no update-binfmts (apt-get install binfmt-support)"
	binfmt_for "$2"
	cross_shim "$2"
	ROOTFS=$CROSS_BUILD/jail-$JARCH
	"$MKJAIL" --arch "$JARCH" --cache "$CROSS_BUILD" "$ROOTFS" "$CROSS_SHIM"
}

# The jail of Debian architecture ARCH (TARGET's), bound at $J through the
# broker in a fresh sandbox.
jail_setup() {
	foreign_setup "$@"
	mkdir -p "$ROOTFS/floppy"
	broker_setup
	mkdir -p "$S/floppy" "$J"
	host mount --bind "$ROOTFS" "$J"
}

teardown() {
	if [ -n "${S:-}" ]; then
		broker_teardown
	fi
}

# CMD in the jail: the host's chroot, then the jail's own programs, which
# load the jail's shim.
in_jail() {
	legacy env -u LD_PRELOAD chroot "$J" "$@"
}

example1_setup() {
	host mount --bind "$S/floppy" "$S/floppy"
	host mount --make-shared "$S/floppy"
	host mount --bind "$S/floppy" "$J/floppy"
	in_jail mount --make-slave /floppy
}

# The jail's findmnt lines for /floppy: "TARGET SOURCE PROPAGATION".
jail_floppy() {
	in_jail findmnt -r -n -o TARGET,SOURCE,PROPAGATION |
		awk '$1 == "/floppy"'
}

# Its programs and its shim are of the jail's machine, and named so.
check_programs() {
	local triplet=$1 machine=$2
	run readelf -h "$ROOTFS/bin/mount"
	[[ $output == *"Machine:"*"$machine"* ]]
	[ "$(cat "$ROOTFS/etc/ld.so.preload")" = \
	  "/usr/lib/$triplet/libshare/libshare.so" ]
	run readelf -h "$ROOTFS/usr/lib/$triplet/libshare/libshare.so"
	[[ $output == *"Machine:"*"$machine"* ]]
	# the system was downloaded once, into the build tree
	[ -f "$CROSS_BUILD/debian-bookworm-$JARCH.tar" ]
	run in_jail findmnt --version
	[ "$status" -eq 0 ]
}

check_host_floppy() {
	example1_setup
	run jail_floppy
	[ "$output" = "/floppy sandbox[/floppy] private,slave" ]
	host mount -t tmpfs floppy-disk "$S/floppy"
	echo "host floppy" >"$S/floppy/label"
	run jail_floppy
	echo "$output"
	[[ $output == *$'\n/floppy floppy-disk private,slave' ]]
	run in_jail cat /floppy/label
	[ "$output" = "host floppy" ]
	assert_kernel_private
	[ "$(mountpoints_of floppy-disk)" = \
	  "$(printf '%s\n' "$J/floppy" "$S/floppy" | LC_ALL=C sort)" ]
	host umount "$S/floppy"
	run jail_floppy
	[[ $output != *floppy-disk* ]]
	[ -z "$(mountpoints_of floppy-disk)" ]
}

check_jail_floppy() {
	example1_setup
	run in_jail mount -t tmpfs jail-disk /floppy
	[ "$status" -eq 0 ]
	run jail_floppy
	echo "$output"
	# a new mount on a slave is private, as the kernel makes it
	[[ $output == *$'\n/floppy jail-disk private' ]]
	[ "$(mountpoints_of jail-disk)" = "$J/floppy" ]
	assert_kernel_private
	run in_jail umount /floppy
	[ "$status" -eq 0 ]
	[ -z "$(mountpoints_of jail-disk)" ]
}

@test "arm64 jail: its mount, umount and findmnt are arm64, its shim too" {
	jail_setup arm64 aarch64-linux-gnu
	check_programs aarch64-linux-gnu AArch64
}

@test "arm64 jail: the host's floppy appears in the jail's slave /floppy and goes with its umount" {
	jail_setup arm64 aarch64-linux-gnu
	check_host_floppy
}

@test "arm64 jail: a floppy the jail mounts stays in the jail" {
	jail_setup arm64 aarch64-linux-gnu
	check_jail_floppy
}

@test "i386 jail: its mount, umount and findmnt are i386, its shim too" {
	jail_setup i386 i686-linux-gnu
	check_programs i386-linux-gnu "Intel 80386"
}

@test "i386 jail: the host's floppy appears in the jail's slave /floppy and goes with its umount" {
	jail_setup i386 i686-linux-gnu
	check_host_floppy
}

@test "i386 jail: a floppy the jail mounts stays in the jail" {
	jail_setup i386 i686-linux-gnu
	check_jail_floppy
}

# A mount namespace in the jail (util-linux's unshare through the shim,
# whose namespace is the broker's copy): it starts with the jail's mounts,
# and what it unmounts is gone only there.
check_namespace() {
	example1_setup
	host mount -t tmpfs floppy-disk "$S/floppy"
	run in_jail unshare -m --propagation unchanged findmnt -r -n \
		-o TARGET,SOURCE /floppy
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *$'\n/floppy floppy-disk' ]]
	run in_jail unshare -m --propagation unchanged umount /floppy
	[ "$status" -eq 0 ]
	run jail_floppy
	[[ $output == *$'\n/floppy floppy-disk private,slave' ]]
	assert_kernel_private
}

@test "arm64 jail: unshare -m copies the jail's mounts, and its umount stays in the copy" {
	jail_setup arm64 aarch64-linux-gnu
	check_namespace
}

@test "i386 jail: unshare -m copies the jail's mounts, and its umount stays in the copy" {
	jail_setup i386 i686-linux-gnu
	check_namespace
}

# The RFC's Example 4 (jail-examples/example4.sh) with its system jail of
# ARCH: util-linux's unshare, mount, nsenter and setpriv of the jail's
# architecture make each user's slave namespace at login (login-ns.sh, run
# by the jail's dash) and read it, all through the jail's shim.  The
# build's broker, sharectl and shim are named: example4.sh looks beside
# its source, where a VPATH build (make distcheck's) has none.
check_example4() {
	local out rc=0
	out=$(SHAREBROKERD=$SHAREBROKERD SHARECTL=$SHARECTL LIBSHARE_SO=$SHIM \
		EX_ARCH=$JARCH EX_ARCH_SHIM=$CROSS_SHIM \
		EX_ARCH_CACHE=$CROSS_BUILD \
		legacy "$CROSS_SRC/jail-examples/example4.sh" 2>&1) || rc=$?
	echo "$out"
	[ "$rc" -eq 0 ]
	[[ $out == *"mkjail.sh --arch $JARCH"* ]]
	[[ $out == *"ok: bob does not see alice's home"* ]]
	[[ $out == *"ok: alice's session received it"* ]]
	[[ $out == *"ok: bob does not (a slave sends nothing back)"* ]]
	[[ $out == *"ok: no session's mount is left"* ]]
	[[ $out == *"== example4: all "*" checks passed"* ]]
}

@test "arm64 jail: RFC Example 4, a slave namespace per user at login" {
	foreign_setup arm64 aarch64-linux-gnu
	check_example4
}

@test "i386 jail: RFC Example 4, a slave namespace per user at login" {
	foreign_setup i386 i686-linux-gnu
	check_example4
}

# A jail of ARCH and an amd64 jail of the host's own programs (mkjail.sh
# without --arch, the host's shim) whose /floppy are peers of the host's:
# a mount made in either travels to the other and to the host, and an
# umount in either takes it from both.  (The sandbox's teardown takes the
# amd64 jail's own mounts.)
check_amd64_peer() {
	local amd=$S/amd64
	"$MKJAIL" "$amd" "$SHIM" >/dev/null
	mkdir -p "$amd/floppy"
	host mount --bind "$S/floppy" "$S/floppy"
	host mount --make-shared "$S/floppy"
	host mount --bind "$S/floppy" "$J/floppy"
	host mount --bind "$S/floppy" "$amd/floppy"
	run in_jail mount -t tmpfs arm-disk /floppy
	[ "$status" -eq 0 ]
	echo "made in the $JARCH jail" >"$S/floppy/label"
	run legacy env -u LD_PRELOAD chroot "$amd" cat /floppy/label
	[ "$output" = "made in the $JARCH jail" ]
	run legacy env -u LD_PRELOAD chroot "$amd" mount -t tmpfs amd-disk /floppy
	[ "$status" -eq 0 ]
	run jail_floppy
	echo "$output"
	[[ $output == *$'\n/floppy amd-disk shared' ]]
	[ "$(mountpoints_of amd-disk)" = \
	  "$(printf '%s\n' "$amd/floppy" "$J/floppy" "$S/floppy" | LC_ALL=C sort)" ]
	run in_jail umount /floppy
	[ "$status" -eq 0 ]
	[ -z "$(mountpoints_of amd-disk)" ]
	run legacy env -u LD_PRELOAD chroot "$amd" umount /floppy
	[ "$status" -eq 0 ]
	[ -z "$(mountpoints_of arm-disk)" ]
	assert_kernel_private
}

@test "arm64 jail and an amd64 jail, peers: each one's mount reaches the other and the host" {
	jail_setup arm64 aarch64-linux-gnu
	check_amd64_peer
}

@test "i386 jail and an amd64 jail, peers: each one's mount reaches the other and the host" {
	jail_setup i386 i686-linux-gnu
	check_amd64_peer
}
