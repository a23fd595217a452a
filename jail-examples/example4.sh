#!/bin/bash
# Example 4 of the shared-subtree RFC: a mount namespace per user, at
# login.  Each user's session runs in a copy of the system's mount tree
# made a slave of it:
#
#  - the user's home (kept at /srv/home/USER) is bound at /home/USER and a
#    tmpfs of the user's own is mounted on /tmp, in that copy only: another
#    user, and the administrator, see neither;
#  - a filesystem the administrator mounts later reaches every session
#    (each copy is a slave of the system's tree);
#  - a mount made in a session reaches nobody else;
#  - the administrator's umount takes it away from every session;
#  - when a session ends, its namespace and every mount of it go.
#
# The system is a chroot jail built by mkjail.sh, whose programs all load
# libshare.so (/etc/ld.so.preload); the sessions start through login-ns
# (jail-examples/login-ns.sh, copied into the jail): unshare -m
# --propagation unchanged, mount --make-rslave /, the binds, then the
# user's program under the user's uid (setpriv).  No PAM, no kernel
# namespaces: unshare, mount and nsenter are util-linux's own, and the
# broker makes every namespace with plain mounts.  The same steps, as a
# dry run of the engine, are example4.dry.
#
# Run as root: ./example4.sh.  Exit 0 when everything happened as the RFC
# says, 1 with a FAIL line otherwise.  It leaves nothing behind.
set -eu
# shellcheck source=lib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
ex_init example4 "$@"
EX_SESSIONS=
# The sessions end with the example, whatever happens.
ex4_cleanup() {
	local rc=$?
	[[ -z $EX_SESSIONS ]] || kill $EX_SESSIONS 2>/dev/null || true
	(exit "$rc")
	ex_cleanup
}
trap ex4_cleanup EXIT

ex_jail sys
J=$B/sys
mkdir -p "$J/srv/home/alice" "$J/srv/home/bob" "$J/home/alice" \
	"$J/home/bob" "$J/srv/data" "$J/mnt" "$J/sbin-local"
chown 1001:1001 "$J/srv/home/alice"
chown 1002:1002 "$J/srv/home/bob"
echo "alice:x:1001:1001::/home/alice:/bin/sh" >>"$J/etc/passwd"
echo "bob:x:1002:1002::/home/bob:/bin/sh" >>"$J/etc/passwd"
install -m 0755 "$ex_here/login-ns.sh" "$J/sbin-local/login-ns"
# The system's root is a mount of its own (a chroot's root directory need
# not be one, but only a mount can be made shared).
mount --rbind "$J" "$J"
ex_broker

# session USER: starts USER's session (a shell that waits) in the jail,
# in the background; its pid goes in SESSION_USER.
session() {
	local user=$1 pid
	show_cmd sys /sbin-local/login-ns "$user" sleep 600 '&'
	env -u LD_PRELOAD LIBSHARE_SOCKET="$SOCK" chroot "$J" \
		/sbin-local/login-ns "$user" sleep 600 &
	pid=$!
	# the session is the sleep, once login-ns has exec'ed into it (by
	# its name: a jail of another architecture's program runs in qemu)
	for ((i = 0; i < 300; i++)); do
		if [[ $(cat "/proc/$pid/comm" 2>/dev/null) == sleep ]]; then
			break
		fi
		sleep 0.1
	done
	[[ $(cat "/proc/$pid/comm") == sleep ]] ||
		die "the session of $user did not start"
	printf -v "SESSION_$user" '%s' "$pid"
	EX_SESSIONS+=" $pid"
	echo "   $user's session: pid $pid"
}

# as USER CMD...: CMD as root inside USER's session namespace (nsenter -m
# -t PID, through the shim, from the jail).
as() {
	local user=$1 var=SESSION_$1
	shift
	show_cmd "$user" nsenter -m -t "${!var}" "$@"
	env -u LD_PRELOAD LIBSHARE_SOCKET="$SOCK" chroot "$J" \
		nsenter -m -t "${!var}" "$@" || die "in $user's session: $*"
}

# ns_content USER PATH: what USER's session reads at PATH, or nothing.
ns_content() {
	local var=SESSION_$1
	env -u LD_PRELOAD LIBSHARE_SOCKET="$SOCK" chroot "$J" \
		nsenter -m -t "${!var}" cat -- "$2" 2>/dev/null
	return 0
}

expect_ns() {
	local user=$1 path=$2 want=$3 why=$4 got
	got=$(ns_content "$user" "$path")
	[[ $got == "$want" ]] ||
		fail "$why: $user's session reads '${got:-<nothing>}' at $path," \
			"expected '${want:-<nothing>}'"
	pass "$why"
}

say "the administrator makes the system's tree shared, before any login"
jail sys mount --make-rshared /
write sys /srv/home/alice/notes "notes of alice"
write sys /srv/home/bob/notes "notes of bob"

before=$(ex_sandbox_mounts | wc -l)

say "alice and bob log in: each gets a slave copy of the tree"
session alice
session bob
as alice findmnt -o TARGET,SOURCE,PROPAGATION /home/alice
expect_ns alice /home/alice/notes "notes of alice" "alice sees her home"
expect_ns bob /home/alice/notes "" "bob does not see alice's home"
expect_missing sys /home/alice/notes "nor does the administrator"
as alice sh -c 'echo alice-tmp >/tmp/mine'
expect_ns alice /tmp/mine "alice-tmp" "alice's /tmp is her own"
expect_ns bob /tmp/mine "" "bob's /tmp does not have it"
expect_missing sys /tmp/mine "nor the system's /tmp"

say "the administrator mounts a filesystem later"
jail sys mount -t tmpfs data /srv/data
write sys /srv/data/readme "for everyone"
expect_ns alice /srv/data/readme "for everyone" "alice's session received it"
expect_ns bob /srv/data/readme "for everyone" "so did bob's"

say "alice mounts something in her session"
as alice mount -t tmpfs alice-usb /mnt
as alice sh -c 'echo alice-usb >/mnt/label'
expect_ns alice /mnt/label "alice-usb" "alice sees her mount"
expect_ns bob /mnt/label "" "bob does not (a slave sends nothing back)"
expect_missing sys /mnt/label "nor does the administrator"

say "the administrator unmounts the data filesystem"
jail sys umount /srv/data
expect_ns alice /srv/data/readme "" "it went from alice's session"
expect_ns bob /srv/data/readme "" "and from bob's"

say "the sessions end: their namespaces go with every mount of them"
kill "$SESSION_alice" "$SESSION_bob"
wait "$SESSION_alice" "$SESSION_bob" 2>/dev/null || true
for ((i = 0; i < 50; i++)); do
	(($(ex_sandbox_mounts | wc -l) == before)) && break
	sleep 0.1
done
show_mounts
after=$(ex_sandbox_mounts | wc -l)
((after == before)) ||
	fail "$after mounts in the sandbox after the sessions, $before before"
pass "no session's mount is left ($after mounts, as before the logins)"

ex_done
