#!/usr/bin/env bats
# The new mount API is refused with ENOSYS, the answer on which libmount
# falls back to mount(2): through glibc's wrappers and through syscall().
# Every other system call passes through syscall() untouched.

load helpers

setup() {
	shim_setup
	start_broker
}

teardown() {
	shim_teardown
}

WRAPPERS="fsopen fsconfig fsmount fspick move_mount open_tree mount_setattr"
NUMBERS="$WRAPPERS statmount listmount open_tree_attr"

@test "the glibc wrappers of the new mount API fail with ENOSYS" {
	local args=() want=() n
	for n in $WRAPPERS; do
		args+=(api "$n")
		want+=("api: ENOSYS")
	done
	run shim "$CALL" "${args[@]}"
	expect_output "${want[@]}"
	expect_log
}

@test "syscall() refuses the new mount API, statmount and listmount" {
	local args=() want=() n
	for n in $NUMBERS; do
		args+=(sys "$n")
		want+=("sys: ENOSYS")
	done
	run shim "$CALL" "${args[@]}"
	expect_output "${want[@]}"
	expect_log
}

@test "without the shim the kernel answers them (so ENOSYS was the shim's)" {
	run "$CALL" sys fsopen sys open_tree sys statmount
	if [ "$output" = "$(printf 'sys: ENOSYS\n%.0s' 1 2 3)" ]; then
		skip "this kernel refuses the new mount API itself"
	fi
	[[ "$output" != *ENOSYS* ]]
}

@test "other system calls pass through syscall(): results, errno, six arguments" {
	run shim "$CALL" getpid badfd mmap6
	expect_output "getpid: ok" "badfd: EBADF" "mmap6: ok"
	expect_log
}
