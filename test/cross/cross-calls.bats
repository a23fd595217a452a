#!/usr/bin/env bats
# A program of another architecture or libc, its own build of the shim
# preloaded, calls mount(2) and umount2(2) and reads /proc/self/mountinfo
# (fopen) and /proc/self/mounts (open, read) through a real broker, on
# this machine's 64-bit broker: arm64, i386 and armhf glibc programs (run
# under qemu-user where the kernel cannot run them) and an x86_64 musl
# program.  Each gets exactly what the x86_64 glibc program gets through
# the x86_64 shim, in the same sandbox (test/cross/mtcalls.c prints both in
# one form): the same results and errnos, and the same tables with the
# propagation fields only the broker knows, while the kernel's own table
# stays private.

load ../lib/broker
load cross

MTCALLS=$(libshare_find test/cross/mtcalls)

setup() {
	broker_setup
	mkdir -p "$S/a/x" "$S/a/y" "$S/b" "$S/c"
}

teardown() {
	broker_teardown
}

# Example 1 of the RFC in miniature: $S/a shared, $S/b its slave; a mount
# in a appears in b, one in b stays there; an error of each kind.  Set once
# $S is known.
# The paths start at $B: $S on the host, "" in a jail whose root is $S.
parts() {
	local b=${B-$S} t=${B-$S}
	t=${t:-/}
	PART1=(mount "$b/a" "$b/a" - 0x1000 - mount - "$b/a" - 0x100000 -
		mount "$b/a" "$b/b" - 0x1000 - mount - "$b/b" - 0x80000 -
		mount disk "$b/a/x" tmpfs 0 size=1m
		mount jdisk "$b/b/y" tmpfs 0 size=1m
		mount "$b/none" "$b/c" - 0x1000 - mountinfo "$t" mounts "$t")
	PART2=(umount "$b/a/x" 0 umount "$b/c" 0 umount "$b/b/y" 2
		mountinfo "$t" umount "$b/b" 0 umount "$b/a" 0
		mountinfo "$t" mounts "$t")
}

# Runs both parts with RUN (a command prefix), checking the kernel's side
# in between: every copy is a private mount the broker made.
scenario() {
	parts
	"$@" "$MTCALLS_BIN" "${PART1[@]}"
	assert_kernel_private >&2
	is_mountpoint "$S/b/x" || { echo "no copy at $S/b/x" >&2; return 1; }
	"$@" "$MTCALLS_BIN" "${PART2[@]}"
	assert_kernel_private >&2
	if [ -n "$(sandbox_lines | awk -v s="$S" '$5 != s')" ]; then
		echo "left mounted:" >&2
		sandbox_lines >&2
		return 1
	fi
}

# The x86_64 glibc program's output, checked for the points that matter:
# the copy in the slave, the slave's own mount not in the master, both
# errnos, and the copy gone with its original.
reference() {
	local r
	MTCALLS_BIN=$MTCALLS
	ref=$(scenario shimmed)
	r=${ref//$S/\$S}
	grep -qx 'mount $S/c = E2' <<<"$r" &&
	grep -qx '  $S/a/x / shared - tmpfs disk' <<<"$r" &&
	grep -qx '  $S/b/x / master - tmpfs disk' <<<"$r" &&
	grep -qx '  $S/b/y / - tmpfs jdisk' <<<"$r" &&
	! grep -q '$S/a/y' <<<"$r" &&
	grep -qx 'umount $S/c = E22' <<<"$r" &&
	[ "$(grep -c '^  $S/b/x ' <<<"$r")" -eq 1 ] &&
	[ "$(grep -c '^  disk $S/b/x ' <<<"$r")" -eq 1 ] || {
		echo "the x86_64 reference is not the expected one:" >&2
		echo "$ref" >&2
		return 1
	}
}

# TARGET's program and shim in the same scenario: the reference's output.
check_target() {
	local got
	cross_need "$1"
	cross_shim "$1"
	cross_compile "$1" "$CROSS_SRC/test/cross/mtcalls.c" mtcalls
	reference
	MTCALLS_BIN=$CROSS_PROG
	got=$(SHIM=$CROSS_SHIM scenario cross_run "$1")
	if [ "$got" != "$ref" ]; then
		echo "$1 through its shim, unlike x86_64 (-x86_64 +$1):" >&2
		diff <(echo "$ref") <(echo "$got") >&2
		return 1
	fi
	echo "$got"
}

@test "aarch64-linux-gnu: mount, umount2 and the tables as on x86_64" {
	check_target aarch64-linux-gnu
}

@test "i686-linux-gnu: mount, umount2 and the tables as on x86_64 (32-bit)" {
	check_target i686-linux-gnu
}

# An i386 program run by the kernel itself (IA32 emulation) on Linux 3.2's
# system-call ABI (legacy-sim --abi 3.2): no socket system call of its own
# before 4.3, so the shim reaches the broker through socketcall(2).  Under
# qemu-i386 its calls are the host's: nothing of the i386 ABI to test.
@test "i686-linux-gnu on Linux 3.2's ABI: the shim's socket calls go through socketcall" {
	cross_need i686-linux-gnu
	[ "${CROSS_RUN[0]##*/}" = "$CROSS_LOADER" ] ||
		skip "i386 programs run under qemu here, not by the kernel"
	CROSS_WRAP=("$LEGACY_SIM" --abi 3.2 --)
	check_target i686-linux-gnu
}

@test "arm-linux-gnueabihf: mount, umount2 and the tables as on x86_64 (32-bit)" {
	check_target arm-linux-gnueabihf
}

@test "musl: mount, umount2 and the tables as with glibc" {
	check_target musl
}

# CMD chrooted into the sandbox, a jail of musl programs (its loader is its
# libc), the musl shim named by LD_PRELOAD: musl reads no ld.so.preload.
# The host's chroot, which finds no /libshare.so, says so and goes on.
musl_jail() {
	legacy env LD_PRELOAD=/libshare.so chroot "$S" "$@"
}

@test "musl in a jail: mount, umount2 and the tables as glibc's on the host" {
	local got
	cross_need musl
	cross_shim musl
	cross_compile musl "$CROSS_SRC/test/cross/mtcalls.c" mtcalls
	reference
	mkdir -p "$S/lib"
	cp /lib/ld-musl-x86_64.so.1 "$S/lib/"
	cp "$CROSS_SHIM" "$S/libshare.so"
	cp "$CROSS_PROG" "$S/mtcalls"
	MTCALLS_BIN=/mtcalls
	# the calls name the jail's paths: written as the host's, to compare
	got=$(B= scenario musl_jail | sed "s|^\(u\{0,1\}mount\) /|\1 $S/|")
	if [ "$got" != "$ref" ]; then
		echo "musl in a jail, unlike glibc on the host (-glibc +musl):" >&2
		diff <(echo "$ref") <(echo "$got") >&2
		return 1
	fi
	echo "$got"
}
