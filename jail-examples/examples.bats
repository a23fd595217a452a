#!/usr/bin/env bats
# The RFC's examples (example1.sh to example4.sh) run for real: each builds
# its jails, starts its own broker, mounts through the shim, and checks
# what every side sees.  Each runs once as the README runs it and once under
# the legacy simulation (broker, shim and jails on a kernel that refuses
# propagation flags and mount namespaces), and once more on the oldest
# kernel ABI tested (legacy-sim --oldest: Linux 3.2's system calls, no file
# handles, no FUSE, no mnt_id in fdinfo); either way it must end with all
# its checks passed and leave no mount, sandbox or broker behind.

load helpers

setup() {
	require_built
}

# run_example N [legacy | oldest]: runs exampleN.sh, and checks that it passed and
# that its sandbox and broker (named on its first line) are gone.
run_example() {
	local b sock
	if [ "${2:-}" = legacy ]; then
		legacy_require
		run legacy "$EXAMPLES/example$1.sh"
	elif [ "${2:-}" = oldest ]; then
		legacy_require
		LEGACY_SIM_PROFILE=--oldest run legacy "$EXAMPLES/example$1.sh"
	else
		run "$EXAMPLES/example$1.sh"
	fi
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"== example$1: all "*" checks passed"* ]]
	[[ $output != *FAIL* ]]
	b=$(sed -n '1s/.*sandbox B=\([^,]*\),.*/\1/p' <<<"$output")
	sock=$(sed -n '1s/.*broker socket \(@[^ ]*\)$/\1/p' <<<"$output")
	[ -n "$b" ] && [ -n "$sock" ]
	[ ! -e "$b" ]
	[ -z "$(mounts_under "$b")" ]
	! running_with "$sock"
}

# Has some process ARG (a socket's name) as one of its arguments?  /proc
# itself: procps may be missing.  The pattern [@]... does not match the
# grep's own argument.
running_with() {
	grep -lzx -- "[${1:0:1}]${1:1}" /proc/[0-9]*/cmdline 2>/dev/null |
		grep -q .
}

@test "example 1: the host's floppy shows in the jail's slave /floppy, the jail's mount stays in the jail" {
	run_example 1
	[[ $output == *"ok: the host's floppy appears in the jail's slave /floppy"* ]]
	[[ $output == *"ok: the jail's mount does not travel back to the host (slave)"* ]]
	[[ $output == *"ok: the copy left the jail; the jail's own mount dropped into its place"* ]]
}

@test "example 1 under the legacy simulation" {
	run_example 1 legacy
}

@test "example 1 on the oldest kernel ABI tested" {
	run_example 1 oldest
}

@test "example 2: per-user jails whose /mnt are peers see each other's mounts there, and only there" {
	run_example 2
	[[ $output == *"ok: bob sees alice's stick (peers: events travel between jails)"* ]]
	[[ $output == *"ok: the host sees it too (peers: events travel back to the host)"* ]]
	[[ $output == *"ok: alice does not: bob's /tmp is his alone"* ]]
	[[ $output == *"ok: the stick is gone from alice's jail"* ]]
}

@test "example 2 under the legacy simulation" {
	run_example 2 legacy
}

@test "example 2 on the oldest kernel ABI tested" {
	run_example 2 oldest
}

@test "example 3: a shared tree bound into two jails: mounts and umounts reach every view, the unbindable one none" {
	run_example 3
	[[ $output == *"ok: the unbindable secret stayed out"* ]]
	[[ $output == *"ok: v2's view shows version 2"* ]]
	[[ $output == *"ok: the host's tree got v1's mount (peers)"* ]]
	[[ $output == *"ok: the host's /usr is back to version 1"* ]]
}

@test "example 3 under the legacy simulation" {
	run_example 3 legacy
}

@test "example 3 on the oldest kernel ABI tested" {
	run_example 3 oldest
}

@test "example 4: a slave namespace per user at login: the administrator's mounts reach every session, a session's reach nobody" {
	run_example 4
	[[ $output == *"ok: bob does not see alice's home"* ]]
	[[ $output == *"ok: alice's session received it"* ]]
	[[ $output == *"ok: bob does not (a slave sends nothing back)"* ]]
	[[ $output == *"ok: and from bob's"* ]]
	[[ $output == *"ok: no session's mount is left"* ]]
}

@test "example 4 under the legacy simulation" {
	run_example 4 legacy
}

@test "example 4 on the oldest kernel ABI tested" {
	run_example 4 oldest
}

@test "an example says why it cannot run, and changes nothing" {
	run env SHAREBROKERD=/nonexistent/sharebrokerd "$EXAMPLES/example1.sh"
	[ "$status" -eq 1 ]
	[[ $output == *"example1: sharebrokerd not found"* ]]
	run env LIBSHARE_SO=/nonexistent/libshare.so "$EXAMPLES/example1.sh"
	[ "$status" -eq 1 ]
	[[ $output == *"example1: libshare.so not found"* ]]
}
