#!/usr/bin/env bats
# An arm64 jail on this amd64 host: a Debian bookworm system of arm64
# built by mkjail.sh --arch arm64 (mmdebstrap, downloaded once into the
# build tree, test/cross/build), its own arm64 shim at its multiarch path
# in its /etc/ld.so.preload.  The jail's unmodified util-linux mount,
# umount and findmnt, arm64 programs run through qemu-user (binfmt_misc),
# under the legacy simulation, get the RFC's Example 1 from the x86_64
# broker: the host's /floppy is shared, the jail's /floppy its slave; a
# floppy the host mounts appears in the jail and goes with the host's
# umount; one the jail mounts stays in the jail.  The kernel's own table
# stays private: every copy is the broker's.  Skipped only without
# mmdebstrap, qemu-user-static or gcc-aarch64-linux-gnu (the README's test
# command installs them).

load ../lib/broker
load cross

MKJAIL=$CROSS_SRC/jail-examples/mkjail.sh

# binfmt_misc with qemu-aarch64, as legacy-abi.md tells: the kernel then
# runs the jail's programs through qemu-aarch64-static (flag F: the
# interpreter is opened once, outside any jail).
binfmt_aarch64() {
	if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
	fi
	if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
		update-binfmts --enable qemu-aarch64 >&2
	fi
}

setup() {
	cross_need aarch64-linux-gnu
	command -v mmdebstrap >/dev/null ||
		skip "no mmdebstrap (apt-get install mmdebstrap qemu-user-static binfmt-support)"
	command -v update-binfmts >/dev/null ||
		skip "no update-binfmts (apt-get install binfmt-support)"
	binfmt_aarch64
	cross_shim aarch64-linux-gnu
	ROOTFS=$CROSS_BUILD/jail-arm64
	"$MKJAIL" --arch arm64 --cache "$CROSS_BUILD" "$ROOTFS" "$CROSS_SHIM"
	mkdir -p "$ROOTFS/floppy"
	broker_setup
	mkdir -p "$S/floppy" "$J"
	host mount --bind "$ROOTFS" "$J"
}

teardown() {
	broker_teardown
}

# CMD in the arm64 jail: the host's chroot, then the jail's own programs,
# which load the jail's shim.
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

@test "arm64 jail: its mount, umount and findmnt are arm64, its shim too" {
	run readelf -h "$ROOTFS/bin/mount"
	[[ $output == *"Machine:"*"AArch64"* ]]
	[ "$(cat "$ROOTFS/etc/ld.so.preload")" = \
	  /usr/lib/aarch64-linux-gnu/libshare/libshare.so ]
	run readelf -h "$ROOTFS/usr/lib/aarch64-linux-gnu/libshare/libshare.so"
	[[ $output == *"Machine:"*"AArch64"* ]]
	# the system was downloaded once, into the build tree
	[ -f "$CROSS_BUILD/debian-bookworm-arm64.tar" ]
}

@test "arm64 jail: the host's floppy appears in the jail's slave /floppy and goes with its umount" {
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
	[ "$(mountpoints_of floppy-disk)" = "$(printf '%s\n' "$J/floppy" "$S/floppy" | LC_ALL=C sort)" ]
	host umount "$S/floppy"
	run jail_floppy
	[[ $output != *floppy-disk* ]]
	[ -z "$(mountpoints_of floppy-disk)" ]
}

@test "arm64 jail: a floppy the jail mounts stays in the jail" {
	example1_setup
	run in_jail mount -t tmpfs jail-disk /floppy
	[ "$status" -eq 0 ]
	run jail_floppy
	echo "$output"
	[[ $output == *$'\n/floppy jail-disk private' ]]
	[ "$(mountpoints_of jail-disk)" = "$J/floppy" ]
	assert_kernel_private
	run in_jail umount /floppy
	[ "$status" -eq 0 ]
	[ -z "$(mountpoints_of jail-disk)" ]
}
