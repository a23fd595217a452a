#!/usr/bin/env bats
# End to end, the RFC's Example 1 (jail-examples/example1.dry): the host's
# /floppy is shared, the jail's /floppy is bound from it and made a slave
# through the shim.  What the host mounts there appears in the jail as a real
# copy, its umount takes the copy away, and what the jail mounts stays in
# the jail.  Then the harder cases around it: a copy tucked under the jail's
# own mount, a tree bound recursively, a jail that is a peer (events both
# ways).  Every table is compared with the kernel's for the same commands
# (native_table); the kernel itself propagates nothing here: every copy is
# a private mount the broker made.

load ../lib/broker

# The example up to the point where the floppy is inserted.  $1 runs a
# command on the host, $2 inside the jail: the shim's way or, for the
# kernel's answer, plain and chrooted (test/diff/spy.so without the shim).
example1_setup() {
	mkdir -p "$S/floppy" "$J/floppy"
	$1 mount --bind "$S/floppy" "$S/floppy"
	$1 mount --make-shared "$S/floppy"
	$1 mount --bind "$S/floppy" "$J/floppy"
	$2 mount --make-slave /floppy
}

native_host() { env LD_PRELOAD= "$@"; }
native_jail() { env LD_PRELOAD="$SPY" SPY_ROOT="$J" "$@"; }

# The table the kernel itself ends with after example1_setup and then the
# commands "$@" (each a string), in a scratch namespace on a fresh sandbox.
native_table() {
	native bash -ec "
		$(declare -f example1_setup native_host native_jail table)
		S='$S' J='$J' SPY='$SPY'
		umount -R -l \"\$S\"
		mount -t tmpfs sandbox \"\$S\"
		mkdir -p \"\$J\"
		example1_setup native_host native_jail >/dev/null
		$(printf '%s >/dev/null\n' "$@")
		table"
}

# Asserts that the kernel's table here is the one native_table "$@" gives.
assert_native_table() {
	local kernel
	kernel=$(native_table "$@")
	if [ "$(table)" != "$kernel" ]; then
		echo "through the broker, unlike the kernel (-kernel +broker):"
		diff <(echo "$kernel") <(table)
		return 1
	fi
}

setup() {
	broker_setup
	example1_setup host jail
}

teardown() { broker_teardown; }

@test "the jail's /floppy is a bound copy of the host's, and the kernel propagates nothing" {
	[ "$(call_result)" = 0 ]        # the jail's make-slave
	assert_kernel_private
	assert_native_table
}

@test "a floppy mounted on the host appears in the jail" {
	host mount -t tmpfs DISK "$S/floppy"
	[ "$(call_result)" = 0 ]
	echo data >"$S/floppy/file"
	[ "$(cat "$J/floppy/file")" = data ]
	# seen from inside the jail too
	run jail cat /floppy/file
	[ "$output" = data ]
	# a real copy: the same filesystem mounted at the jail's /floppy
	local dev
	dev=$(mounts_of DISK | awk 'NR == 1 { print $2 }')
	[ "$(mounts_of DISK | LC_ALL=C sort)" = "$S/floppy $dev"$'\n'"$J/floppy $dev" ]
	assert_kernel_private
	assert_native_table 'mount -t tmpfs DISK "$S/floppy"'
}

@test "the host's umount takes the jail's copy away" {
	host mount -t tmpfs DISK "$S/floppy"
	echo data >"$S/floppy/file"
	host umount "$S/floppy"
	[ "$(call_result)" = 0 ]
	[ ! -e "$J/floppy/file" ]
	[ ! -e "$S/floppy/file" ]
	[ -z "$(mounts_of DISK)" ]
	assert_native_table 'mount -t tmpfs DISK "$S/floppy"' 'umount "$S/floppy"'
}

@test "a mount inside the jail does not travel back to the host" {
	jail mount -t tmpfs LOCAL /floppy
	[ "$(call_result)" = 0 ]
	jail touch /floppy/local-file
	[ -e "$J/floppy/local-file" ]
	[ ! -e "$S/floppy/local-file" ]
	# no LOCAL anywhere but on the jail's /floppy
	[ "$(mounts_of LOCAL | cut -d' ' -f1)" = "$J/floppy" ]
	assert_kernel_private
	assert_native_table 'native_jail mount -t tmpfs LOCAL /floppy'
}

@test "the host's umount takes its copy from under the jail's own mount, which drops into its place" {
	host mount -t tmpfs DISK "$S/floppy"
	jail mount -t tmpfs LOCAL /floppy
	jail touch /floppy/local-file
	host umount "$S/floppy"
	[ "$(call_result)" = 0 ]
	[ -e "$J/floppy/local-file" ]
	[ -z "$(mounts_of DISK)" ]
	assert_native_table 'mount -t tmpfs DISK "$S/floppy"' \
		'native_jail mount -t tmpfs LOCAL /floppy' 'umount "$S/floppy"'
	# the jail's LOCAL now sits right on its /floppy bind
	grep -qx "\$S/jail/floppy / tmpfs LOCAL rw/rw on \$S/jail/floppy" <(table)
}

@test "a floppy inserted after the jail mounted its own goes under the jail's mount" {
	jail mount -t tmpfs LOCAL /floppy
	jail touch /floppy/local-file
	host mount -t tmpfs DISK "$S/floppy"
	[ "$(call_result)" = 0 ]
	# the copy is tucked under LOCAL: the jail still sees its own files
	[ -e "$J/floppy/local-file" ]
	assert_native_table 'native_jail mount -t tmpfs LOCAL /floppy' \
		'mount -t tmpfs DISK "$S/floppy"'
	host umount "$S/floppy"
	[ "$(call_result)" = 0 ]
	[ -e "$J/floppy/local-file" ]
	assert_native_table 'native_jail mount -t tmpfs LOCAL /floppy' \
		'mount -t tmpfs DISK "$S/floppy"' 'umount "$S/floppy"'
}

@test "a tree bound recursively into the jail gets later mounts, and a lazy umount takes them all" {
	host mount -t tmpfs DISK "$S/floppy"
	mkdir "$S/floppy/a" "$J/r"
	host mount -t tmpfs SUBA "$S/floppy/a"
	host mount --rbind "$S/floppy" "$J/r"
	host mount -t tmpfs LATE "$S/floppy/a"
	[ "$(call_result)" = 0 ]
	local steps=('mount -t tmpfs DISK "$S/floppy"' 'mkdir "$S/floppy/a" "$J/r"'
		     'mount -t tmpfs SUBA "$S/floppy/a"'
		     'mount --rbind "$S/floppy" "$J/r"'
		     'mount -t tmpfs LATE "$S/floppy/a"')
	assert_native_table "${steps[@]}"
	host umount -l "$S/floppy"
	[ "$(call_result)" = 0 ]
	assert_native_table "${steps[@]}" 'umount -l "$S/floppy"'
}

@test "a jail bound as a peer: its mounts travel to the host, and so does their umount" {
	mkdir "$J/s"
	host mount --bind "$S/floppy" "$J/s"
	jail mount -t tmpfs FROMJAIL /s
	[ "$(call_result)" = 0 ]
	jail touch /s/from-jail
	[ -e "$S/floppy/from-jail" ]
	assert_native_table 'mkdir "$J/s"' 'mount --bind "$S/floppy" "$J/s"' \
		'native_jail mount -t tmpfs FROMJAIL /s'
	jail umount /s
	[ "$(call_result)" = 0 ]
	[ -z "$(mounts_of FROMJAIL)" ]
	assert_native_table 'mkdir "$J/s"' 'mount --bind "$S/floppy" "$J/s"' \
		'native_jail mount -t tmpfs FROMJAIL /s' 'native_jail umount /s'
}
