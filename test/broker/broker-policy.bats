#!/usr/bin/env bats
# The broker's policy table (daemon/broker/door/policy.c), row by row, for each
# kind of caller: a host administrator, an unprivileged user on the host,
# root and an unprivileged user in a jail, and root in a user namespace of
# its own.  Deny by default: an unknown op, or a field an op does not take,
# is EINVAL; host paths are for host callers; the broker is the host
# administrator's.

load ../lib/broker

setup() {
	broker_setup
	mkdir -p "$S/mnt" "$J/mnt"
	cd "$S"
}

teardown() {
	broker_teardown
}

# The errno name the broker answers WHO's request (rawclient's arguments).
ask() {
	local who=$1
	shift
	case $who in
	admin) "$RAWCLIENT" "$@" ;;
	user) "$RAWCLIENT" --uid 65534 "$@" ;;
	jailroot) "$RAWCLIENT" --chroot "$J" "$@" ;;
	jailuser) "$RAWCLIENT" --chroot "$J" --uid 65534 "$@" ;;
	nsroot) setpriv --reuid=65534 --regid=65534 --clear-groups \
		unshare -U -r "$RAWCLIENT" "$@" ;;
	esac | sed -n 's/^reply op=[0-9]* error=\([A-Z0-9]*\).*/\1/p'
}

# Asserts each caller's answer: expect OP-ARGS... -- A U JR JU NS
expect() {
	local args=() want got who i=0 callers=(admin user jailroot jailuser nsroot)
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	for want in "$@"; do
		who=${callers[i++]}
		got=$(ask "$who" "${args[@]}")
		if [ "$got" != "$want" ]; then
			echo "${args[*]} as $who: $got, expected $want" >&2
			return 1
		fi
	done
}

@test "status and chroot: every caller" {
	expect --op status -- 0 0 0 0 0
	expect --op chroot -- 0 0 0 0 0
}

@test "jails names host paths: only the host administrator" {
	background shimmed "$CALLER" --chroot "$J" sleep 30
	for ((i = 0; i < 50; i++)); do
		[[ $("$SHARECTL" jails) == *"$J"* ]] && break
		sleep 0.1
	done
	expect --op jails -- 0 EPERM EPERM EPERM EPERM
	run "$RAWCLIENT" --op jails
	[[ $output == *"$J"* ]]
	run "$RAWCLIENT" --chroot "$J" --op jails
	[[ $output != *"$S"* ]]
}

@test "graph names host paths: only callers on the host's root" {
	expect --op graph -- 0 0 EPERM EPERM 0
}

@test "tree and the mount table: every caller, each for its own root" {
	expect --op tree -- 0 0 0 0 0
	expect --op mounttable --field 1=mountinfo -- 0 0 0 0 0
	expect --op mounttable -- EINVAL EINVAL EINVAL EINVAL EINVAL
}

@test "an unknown op, or a field an op does not take: EINVAL for everyone" {
	expect --op 99 -- EINVAL EINVAL EINVAL EINVAL EINVAL
	expect --op status --field 0=x -- EINVAL EINVAL EINVAL EINVAL EINVAL
	expect --op umount --field 0=x --field 1=mnt -- EINVAL EINVAL EINVAL EINVAL EINVAL
	expect --op chroot --field 3=x -- EINVAL EINVAL EINVAL EINVAL EINVAL
}

@test "mount and umount: only privileged callers, in their own root; nothing else changes" {
	snapshot before
	expect --op mount --field 0=none --field 1=mnt --field 2=tmpfs -- \
		0 EPERM 0 EPERM EPERM
	grep -q " $S/mnt " /proc/self/mountinfo
	grep -q " $J/mnt " /proc/self/mountinfo
	expect --op umount --field 1=mnt -- 0 EPERM 0 EPERM EPERM
	assert_table_unchanged before
	# (the kernel's answers: EINVAL, new_root is no mount; EBUSY in a jail
	# whose root is a plain directory of the same mount as new_root)
	expect --op pivot_root --field 0=mnt --field 1=mnt -- \
		EINVAL EPERM EBUSY EPERM EPERM
	assert_table_unchanged before
}

@test "stop: only the host administrator" {
	local who
	for who in user jailroot jailuser nsroot; do
		[ "$(ask "$who" --op stop)" = EPERM ]
	done
	assert_broker_serves
	[ "$(ask admin --op stop)" = 0 ]
	wait_gone "$BROKER_PID" 5
}
