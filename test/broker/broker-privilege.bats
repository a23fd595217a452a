#!/usr/bin/env bats
# Privilege is what the kernel recorded when the caller connected
# (SO_PEERCRED), not only what /proc says when the broker gets to the
# request: a user who sends a request and then executes a set-user-ID
# program, which inherits the connection, must not have the broker mount
# for it as root.

load ../lib/broker

setup() {
	broker_setup
	# The programs run from the sandbox by relative names: an unprivileged
	# user need not be able to reach the build tree or BATS_TEST_TMPDIR.
	cp "$(libshare_find test/broker/suidrace)" "$S/suidrace"
	cp "$(command -v sleep)" "$S/suid-sleep"
	chmod 4755 "$S/suid-sleep"
	mkdir -m 755 "$S/victim" "$S/evil"
	touch "$S/victim/root-file" "$S/evil/evil-file"
	chown -R 65534:65534 "$S/evil"
	cd "$S"
}

teardown() {
	kill -CONT "$BROKER_PID" 2>/dev/null || true
	pkill -KILL -f "^./suid-sleep" 2>/dev/null || true
	broker_teardown
}

as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

# Whether the bind happened: the victim shows the evil directory.
bound() {
	[ -e "$S/victim/evil-file" ] || grep -q " $S/victim " /proc/self/mountinfo
}

@test "the race works as intended: a set-user-ID root program really holds the connection" {
	# as root the same request succeeds: the attack is only refused for
	# the user it started as
	./suidrace "$LIBSHARE_SOCKET" evil victim ./suid-sleep 1 &
	wait $!
	bound
	host umount victim
}

# Every round is the whole attack, made certain by the stopped broker:
# ROUNDS (LIBSHARE_RACE_ROUNDS, default 10) rounds of 50 senders.
ROUNDS=${LIBSHARE_RACE_ROUNDS:-10}

@test "a user who connects, sends a bind and executes a set-user-ID root program: refused, every time of $((ROUNDS * 50))" {
	local round i wins=0
	for ((round = 0; round < ROUNDS; round++)); do
		# The broker stands still while 50 requests queue up and every
		# sender becomes root; then it serves them all.
		kill -STOP "$BROKER_PID"
		for ((i = 0; i < 50; i++)); do
			(as_nobody ./suidrace "$LIBSHARE_SOCKET" evil victim \
				./suid-sleep 30 &)
		done
		for ((i = 0; i < 500; i++)); do
			[ "$(pgrep -c -u 0 -f '^./suid-sleep')" -ge 50 ] && break
			sleep 0.02
		done
		[ "$(pgrep -c -u 0 -f '^./suid-sleep')" -eq 50 ]
		kill -CONT "$BROKER_PID"
		"$SHARECTL" status >/dev/null  # served after the 50
		if bound; then
			wins=$((wins + 1))
			host umount victim
		fi
		pkill -KILL -f '^./suid-sleep'
		for ((i = 0; i < 500; i++)); do
			pgrep -f '^./suid-sleep' >/dev/null || break
			sleep 0.02
		done
	done
	echo "the attack succeeded $wins times of $((ROUNDS * 50))" >&2
	[ "$wins" -eq 0 ]
	grep -q "EPERM\|Operation not permitted" "$STATE/sharebrokerd.log"
	[ -e "$S/victim/root-file" ]
	assert_broker_serves
}

# A caller root at connect is served on its capabilities, its uid, gid
# and groups read only when a check needs them (identity.c peer_creds()):
# one that checks files as another user (setfsuid, which takes the
# filesystem capabilities away) is searched with that user's permission.
@test "root checking files as another user (setfsuid): searched as that user, as natively" {
	mkdir -p "$J/own/d" "$J/rootonly/d"
	chown 65534:65534 "$J/own"
	chmod 700 "$J/own" "$J/rootonly"
	same_as_kernel shimmed "$CALLER" --chroot "$J" --fsuid 65534 \
		mount t1 /own/d tmpfs 0 umount /own/d 0 \
		mount t2 /rootonly/d tmpfs 0 mount t3 /own/../rootonly/d tmpfs 0
	[[ $output == *"mount /own/d = 0"*"umount /own/d = 0"* ]]
	[[ $output == *"mount /rootonly/d = EACCES"* ]]
	[[ $output == *"mount /own/../rootonly/d = EACCES"* ]]
}
