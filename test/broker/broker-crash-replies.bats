#!/usr/bin/env bats
# Callers cannot fill the broker's state directory (issue 9 item 6, what
# must be true 5).  Before: a mount-table reply without FUSE (--no-fuse),
# and sharectl tree and graph, were unlinked files of the state directory;
# an unprivileged caller holding 63 of them filled a 256 KiB one, and then
# no request could save its state and every jail's table read failed.  Now
# a reply is a sealed memfd (reply.c), and one uid holds a limited number
# of them at once; so with FUSE (tabserve.c), whose tables never were
# files of the state directory but held a rendering each in memory.

load ../lib/broker

setup() {
	broker_setup
	broker_stop
	mount -t tmpfs -o size=256k tiny "$STATE"
	# the log elsewhere: it grows with every request
	broker_start --no-fuse --log "$BATS_TEST_TMPDIR/sharebrokerd.log"
	FIFO=$(mktemp -d)/release
	chmod 755 "${FIFO%/*}"
	mkfifo -m 666 "$FIFO"
}
teardown() {
	[ -p "${FIFO:-}" ] && release
	broker_teardown
	rm -rf "${FIFO%/*}"
}

# The holder lets go.  Opened read-write: a fifo so opened never waits for
# a reader (there is none when a test failed before its holder started).
release() {
	local w
	exec {w}<>"$FIFO"
	echo go >&"$w"
	exec {w}>&-
}

used() {
	df -k --output=used "$STATE" | tail -n 1
}

# nobody, through the shim, opens the mount table N times and holds every
# descriptor: "memfd M" says how many are the broker's replies (memfds,
# or under legacy-sim, which has no memfd_create, files of /dev/shm;
# with FUSE, files of its filesystem, mounted out of sight), not the
# kernel's own table, which the shim opens when the broker refuses; it
# lets go when release() writes the fifo.
holder() {
	legacy env LD_PRELOAD="$SHIM" setpriv --reuid=65534 --regid=65534 \
		--clear-groups bash -c '
		exec {r}<>"$2"    # open before saying so: release() may follow
		for ((i = 0; i < $1; i++)); do
			exec {fd}</proc/self/mountinfo || break
		done
		n=0
		for f in /proc/$$/fd/*; do
			case $(readlink "$f") in   # memfd, or a legacy kernel
			/memfd:* | /dev/shm/* | /mountinfo) n=$((n + 1)) ;;
			esac
		done
		echo "memfd $n"
		read -r _ <&"$r"' holder "$1" "$FIFO"
}

held() {
	local i
	for ((i = 0; i < 200; i++)); do
		sed -n 's/^memfd //p' "$BATS_TEST_TMPDIR/bg.$1" | grep . && return
		sleep 0.05
	done
	return 1
}

@test "an unprivileged caller holding many mount-table replies takes no room in the state directory" {
	mkdir -p "$S/a" "$S/b"
	host mount -t tmpfs A "$S/a"
	host mount --make-shared "$S/a"
	host mount --bind "$S/a" "$S/b"
	before=$(used)
	background holder 400
	n=$(held 0)
	[ "$n" -gt 0 ]
	[ "$n" -lt 400 ]           # a limit per caller
	[ "$(used)" = "$before" ]
	# meanwhile root's requests save their state, its table reads work
	mkdir -p "$S/a/x"
	host mount -t tmpfs X "$S/a/x"
	is_mountpoint "$S/b/x"
	shimmed cat /proc/self/mountinfo | grep -q " $S/b/x .*shared:"
	release
	wait "$BG"
	# the replies were let go with the holder's descriptors
	background holder 1
	[ "$(held 1)" = 1 ]
	release
	wait "$BG"
}

@test "sharectl tree and graph answer from memory, not from the state directory" {
	before=$(used)
	background holder 1             # the same in the FUSE-less table
	[ "$(held 0)" = 1 ]
	"$SHARECTL" tree >/dev/null
	"$SHARECTL" graph >/dev/null
	[ "$(used)" = "$before" ]
	release
	wait "$BG"
}

@test "with FUSE, an unprivileged caller holds a limited number of live mount tables" {
	broker_restart --log "$BATS_TEST_TMPDIR/sharebrokerd.log"
	before=$(used)
	background holder 400
	n=$(held 0)
	[ "$n" -gt 0 ]
	[ "$n" -lt 400 ]
	[ "$(used)" = "$before" ]
	shimmed cat /proc/self/mountinfo | grep -q " $S "   # root's still work
	release
	wait "$BG"
	background holder 1
	[ "$(held 1)" = 1 ]
	release
	wait "$BG"
}
