#!/usr/bin/env bats
# Upgrades keep every jail (issue 26 item 3): the state the previous
# release's broker wrote is read by this one.  The previous release is
# $LIBSHARE_UPGRADE_FROM (default: the commit before issue 26's work,
# until there is a release tag), built once from the checkout's git into
# the build tree (test/broker/old-FROM: its broker, sharectl and shim).
# The old broker, under the legacy simulation like every broker here,
# makes a graph through the old shim: a shared mount, a jail's slave of
# it, a covered mount (kept by a holder across the stop) and a namespace
# with a process in it; it stops as a package upgrade stops it, and this
# build's broker starts on its state directory.  Its tree, graph,
# namespaces and the namespace's own tree must be what the old one
# showed, and propagation must go on as before, into the jail and the
# namespace.  The other way
# round, a downgrade, either works the same or is refused with a message
# that says why.  Without git, or outside a git checkout (a tarball,
# also one unpacked inside a checkout, as make distcheck's is) there is
# no old release to build, and the tests skip.

load ../lib/broker

FROM=${LIBSHARE_UPGRADE_FROM:-dadb9e8}
SRC=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
NEW_BROKERD=$SHAREBROKERD NEW_SHARECTL=$SHARECTL NEW_SHIM=$SHIM
OLD=${SHAREBROKERD%/daemon/sharebrokerd}/test/broker/old-$FROM

# The old release's broker, sharectl and shim, built once.
setup_file() {
	[ -x "$OLD/daemon/sharebrokerd" ] && return 0
	# $SRC's own .git (a file in a worktree): git would otherwise find
	# the repository around an unpacked tarball and build from that
	[ -e "$SRC/.git" ] || return 0
	git -C "$SRC" rev-parse -q --verify "$FROM^{commit}" >/dev/null ||
		return 0
	rm -rf "$OLD" && mkdir -p "$OLD"
	git -C "$SRC" archive "$FROM" | tar -x -C "$OLD"
	(cd "$OLD" && autoreconf -fi && ./configure &&
		env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -j2 \
			daemon/sharebrokerd daemon/sharectl shim/libshare.so) \
		>"$OLD.log" 2>&1 || { tail -20 "$OLD.log" >&3; return 1; }
}

setup() {
	[ -x "$OLD/daemon/sharebrokerd" ] && return 0
	[ -e "$SRC/.git" ] || skip "no git checkout: no old release to build"
	skip "no git, or no commit $FROM: no old release to build"
}

teardown() {
	ns_all_gone || true
	broker_teardown
}

# Which release's broker, sharectl and shim the helpers use from now on.
use() {
	if [ "$1" = old ]; then
		SHAREBROKERD=$OLD/daemon/sharebrokerd SHARECTL=$OLD/daemon/sharectl
		SHIM=$OLD/shim/libshare.so
	else
		SHAREBROKERD=$NEW_BROKERD SHARECTL=$NEW_SHARECTL SHIM=$NEW_SHIM
	fi
}

# The graph: $S/a shared, the jail's /a its slave, two tmpfs on $S/c
# (the lower one covered), and a namespace whose process waits (NS_PID).
make_graph() {
	local i
	mkdir -p "$S/a/x" "$S/c" "$J/a"
	shimmed mount --bind "$S/a" "$S/a"
	shimmed mount --make-shared "$S/a"
	shimmed mount --bind "$S/a" "$J/a"
	shimmed mount --make-slave "$J/a"
	shimmed mount -t tmpfs low "$S/c"
	shimmed mount -t tmpfs top "$S/c"
	background shimmed unshare -m --propagation unchanged sh -c \
		"echo \$\$ >'$S/ns.pid.new'; mv '$S/ns.pid.new' '$S/ns.pid'
		 exec sleep 600"
	wait_file "$S/ns.pid"
	NS_PID=$(cat "$S/ns.pid")
	for ((i = 0; i < 100; i++)); do
		[[ $(readlink "/proc/$NS_PID/exe") == */sleep ]] && return 0
		sleep 0.05
	done
	return 1
}

# What an administrator sees of the graph: tree, graph, namespaces and
# the namespace's own tree.  Left out: the count of the broker's own
# processes (the broker is one), and the graph's notes of the roots
# processes are chrooted in (j0 ...): a broker learns those from its
# callers, so after any restart, the same release's too, a root shows
# again once a process in it calls (the namespace's mounts and members
# are in sharectl ns and tree --ns, compared).
views() {
	echo "== tree"; "$SHARECTL" tree
	echo "== graph"; "$SHARECTL" graph | grep -v '^	j[0-9]'
	echo "== ns"
	"$SHARECTL" ns | sed "/(the broker's own)/s/, [0-9]* processes.*//"
	echo "== tree --ns"; "$SHARECTL" tree --ns "$NS_PID"
}

stop_broker() {
	"$SHARECTL" stop >/dev/null
	wait_gone "$BROKER_PID" 5
}

@test "the old release's state: this broker takes over its graph, jail, covered mount and namespace, and propagation goes on" {
	local holder
	use old
	broker_setup
	make_graph
	views >"$S/before"
	stop_broker
	read -r holder _ <"$STATE/holder.pid"
	use new
	broker_start
	wait_gone "$holder" 5       # the old holder ends once taken over
	views >"$S/after"
	diff -u "$S/before" "$S/after"
	# propagation goes on: into the jail's slave, and the namespace's copy
	shimmed mount -t tmpfs later "$S/a/x"
	mountpoint -q "$J/a/x"
	"$SHARECTL" tree --ns "$NS_PID" | grep -q "$S/a/x .*later"
	shimmed umount "$S/a/x"
	! mountpoint -q "$J/a/x"
	# the covered mount came through the holder: it unmounts in order
	shimmed umount "$S/c"
	shimmed umount "$S/c"
	kill "$NS_PID"
	ns_all_gone
}

@test "a downgrade: the old broker on this one's state works the same, or refuses saying why" {
	use new
	broker_setup
	make_graph
	views >"$S/before"
	stop_broker
	use old
	if ! broker_start 2>"$S/start.err"; then
		cat "$S/start.err"
		grep -qi "state" "$S/start.err"
		use new
		broker_start
		return 0
	fi
	views >"$S/after"
	diff -u "$S/before" "$S/after"
	shimmed mount -t tmpfs later "$S/a/x"
	mountpoint -q "$J/a/x"
	shimmed umount "$S/a/x"
	shimmed umount "$S/c"
	shimmed umount "$S/c"
	kill "$NS_PID"
	ns_all_gone
}
