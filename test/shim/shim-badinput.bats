#!/usr/bin/env bats
# Bad input (issue 29 items 1 and 5, docs/bad-input.md): every function
# the shim exports, called with unreadable and partly readable pointers,
# strings without a NUL, unknown flags and odd lengths, answers as the
# kernel does, and no caller dies where the kernel would have answered.
# test/shim/badinput runs each case in a child and prints its result or
# its death; the same program runs on this machine's kernel (a scratch
# namespace) and through the shim and the real broker (the shim's side
# under the legacy simulation, as every shimmed test), and the two must
# agree line by line.  The cases leave out what a legacy kernel answers
# otherwise by design (the new mount API: ENOSYS, shim-newapi.bats).
# Without process_vm_readv/writev (legacy-sim --no-cma) the shim copies
# through a pipe (shim/peek.c) and must answer the same.

load ../lib/broker

BADINPUT=$(libshare_find test/shim/badinput)

setup() {
	broker_setup
	mkdir -p "$S/d"
}

teardown() { broker_teardown; }

# The sweep through the shim, compared with the kernel's: $output.
sweep_as_kernel() {
	local kernel
	kernel=$(native "$BADINPUT" "$S/d")
	run shimmed "$BADINPUT" "$S/d"
	[ "$status" -eq 0 ]
	if [ "$output" != "$kernel" ]; then
		echo "through libshare, unlike the kernel (-kernel +libshare):"
		diff <(echo "$kernel") <(echo "$output")
		return 1
	fi
	# the sweep ran whole: each case answered or died, as on the kernel
	[ "$(grep -c ' ret ' <<<"$output")" -ge 100 ]
	[ "$(grep -c ' killed ' <<<"$output")" -eq 1 ]
	[[ "$output" == *"fopen-mountinfo-mode-bad killed SEGV"* ]]
}

@test "bad input: every exported function answers as the kernel does, no caller dies" {
	sweep_as_kernel
}

# A pipe where the kernel has no cross-memory attach: what it cannot read
# is EFAULT, never a fault in the caller, and what it can is read whole.
@test "bad input without process_vm_readv (--no-cma): the same answers, through a pipe" {
	LEGACY_SIM_PROFILE="${LEGACY_SIM_PROFILE:-} --no-cma" sweep_as_kernel
	[[ "$output" == *"mount-source-bad ret -1 errno EFAULT"* ]]
	[[ "$output" == *"readlink-ns-buf-bad ret -1 errno EFAULT"* ]]
	LEGACY_SIM_PROFILE="${LEGACY_SIM_PROFILE:-} --no-cma" \
		run shimmed "$CALLER" mount piped "$S/d" tmpfs 0 size=64k
	[ "$output" = "mount $S/d = 0" ]
	[ "$(mountpoints_of piped)" = "$S/d" ]
	grep -q " $S/d .* piped rw,.*size=64k" /proc/self/mountinfo
}

@test "bad input: a mount(2) pointer that cannot be read is EFAULT, not a dead caller" {
	run shimmed "$BADINPUT" "$S/d" mount-source-bad mount-target-none \
		mount-type-edge mount-data-bad
	[ "$output" = "mount-source-bad ret -1 errno EFAULT
mount-target-none ret -1 errno EFAULT
mount-type-edge ret -1 errno EFAULT
mount-data-bad ret -1 errno EFAULT" ]
}

@test "bad input: mount data is read up to an unreadable page, as the kernel reads it" {
	run shimmed "$BADINPUT" "$S/d" mount-data-edge mount-data-none
	[ "$output" = "mount-data-edge ret -1 errno ENOENT
mount-data-none ret -1 errno EFAULT" ]
}

@test "bad input: the emulated ns file writes no buffer the kernel could not" {
	run shimmed "$BADINPUT" "$S/d" readlink-ns-buf-bad stat-ns-buf-edge \
		statx-ns-buf-bad readlink-ns-size-0 readlink-ns-size-1
	[ "$output" = "readlink-ns-buf-bad ret -1 errno EFAULT
stat-ns-buf-edge ret -1 errno EFAULT
statx-ns-buf-bad ret -1 errno EFAULT
readlink-ns-size-0 ret -1 errno EINVAL
readlink-ns-size-1 ret 1 errno -" ]
}
