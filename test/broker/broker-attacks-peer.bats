#!/usr/bin/env bats
# The broker is the security boundary (design.md principle 5), against a
# caller that lies about who it is or what it sends: privilege is the
# kernel's rule, read from the kernel and never from the message; a
# reused pid lends nothing; bad input is answered EINVAL or closes the
# connection, and a silent, hung up or squatting client stops no one.
# Paths that try to leave the jail: broker-attacks.bats.

load ../lib/broker

setup() {
	broker_setup
	mkdir -p "$J/mnt" "$J/etc" "$S/outside"
	touch "$J/marker" "$J/etc/jailmarker" "$S/outside/hostmarker"
}

teardown() {
	broker_teardown
}

# The largest request the protocol allows (libshare_proto.h).
LS_REQUEST_MAX=$((32 + 3 * 4096 + 4096))

hex() {
	printf '%s' "$1" | od -An -v -tx1 | tr -d ' \n'
}

@test "a caller without privilege: ENOENT for a missing target first, then EPERM" {
	mkdir -m 700 "$S/private"
	mkdir "$S/private/x"
	snapshot before
	cd "$S"
	same_as_kernel shimmed setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$CALLER" mount none missing tmpfs 0 \
			  mount none jail tmpfs 0 \
			  mount jail jail/mnt - bind \
			  mount none jail - private \
			  mount none private/x tmpfs 0 \
			  umount jail 0 \
			  umount missing 0
	[ "$(sed -n 1,7p <<<"$output")" = "mount missing = ENOENT
mount jail = EPERM
mount jail/mnt = EPERM
mount jail = EPERM
mount private/x = EACCES
umount jail = EPERM
umount missing = ENOENT" ]
	assert_table_unchanged before
}

@test "capabilities in a user namespace of one's own are no privilege: EPERM, as natively" {
	mkdir "$S/x"
	cd "$S"
	snapshot before
	# the kernel: full capabilities in the new namespace, none over ours
	run native setpriv --reuid=65534 --regid=65534 --clear-groups \
		unshare -U -r "$CALLER" mount none x tmpfs 0
	[ "$output" = "mount x = EPERM" ]
	# the shim would not talk from in there (the broker's uid is unmapped
	# there); speak the protocol directly, as an attacker would
	run setpriv --reuid=65534 --regid=65534 --clear-groups unshare -U -r \
		"$RAWCLIENT" --op mount --field 0=none --field 1=x --field 2=tmpfs
	[ "$output" = "reply op=1 error=EPERM" ]
	assert_table_unchanged before
	run setpriv --reuid=65534 --regid=65534 --clear-groups unshare -U -r \
		"$RAWCLIENT" --op stop
	[ "$output" = "reply op=6 error=EPERM" ]
	assert_broker_serves
}

# The pid SO_PEERCRED gave may belong to another process by the time the
# request comes: a client connects, forks, and the connecting process
# exits; its child keeps the connection and sends only once a root process
# on the host has that pid (a wrap-around, forced here through
# ns_last_pid).  The request must still be the client's: never served as
# that root process's.  $1: what runs the client, $2: its go-file (as it
# sees it), $3: the same file as we see it, $4: the host path it names.
pid_reuse() {
	local out=$BATS_TEST_TMPDIR/client i a
	background $1 "$RAWCLIENT" --op mount --field 0=none --field "1=$4" \
		--field 2=tmpfs --handoff "$2"
	out=$BATS_TEST_TMPDIR/bg.$((${#BG_PIDS[@]} - 1))
	for ((i = 0; i < 100; i++)); do
		grep -q connected "$out" && break
		sleep 0.05
	done
	a=$(sed -n 's/^connected //p' "$out")
	[ -n "$a" ]
	wait_gone "$a" 5
	for ((i = 0; i < 20; i++)); do
		echo $((a - 1)) >/proc/sys/kernel/ns_last_pid
		sleep 300 3>&- &
		BG_PIDS+=($!)
		[ "$!" = "$a" ] && break
	done
	[ "$!" = "$a" ] || skip "could not hand pid $a to a root process"
	snapshot before
	touch "$3"
	for ((i = 0; i < 200; i++)); do
		grep -q '^reply' "$out" && break
		sleep 0.05
	done
	# refused, whatever the errno: ESRCH, EPERM, ENOENT
	grep '^reply' "$out"
	run grep -c '^reply op=1 error=0$' "$out"
	[ "$output" = 0 ]
	run is_mountpoint "$4"
	[ "$status" -ne 0 ]
}

@test "a reused pid lends an unprivileged client no privilege" {
	cd "$S"         # the client finds its go-file from here
	pid_reuse "setpriv --reuid=65534 --regid=65534 --clear-groups" \
		go "$S/go" "$S/outside"
}

@test "a reused pid lends a jailed client no way out of its jail" {
	pid_reuse "env LD_PRELOAD=$SPY SPY_ROOT=$J" /go "$J/go" "$S/outside"
}

@test "only a privileged caller on the host may stop the broker" {
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$SHARECTL" stop
	[ "$status" -eq 1 ]
	[ "$output" = "sharectl: stop: Operation not permitted" ]
	run jail "$SHARECTL" stop
	[ "$status" -eq 1 ]
	[ "$output" = "sharectl: stop: Operation not permitted" ]
	assert_broker_serves
}

@test "a request carries no pid or root to claim: extra bytes are EINVAL, host paths resolve in the jail" {
	snapshot before
	# a well-formed mount request with a forged trailer
	run "$RAWCLIENT" --op mount --field 0=none --field "1=$S/mnt" \
		--field 2=tmpfs --extra 32
	[ "$output" = "reply op=0 error=EINVAL" ]
	# lengths that claim less than the message holds
	run "$RAWCLIENT" --op mount --field 0=none --field "1=$S/mnt" \
		--field 2=tmpfs --len 1=3
	[ "$output" = "reply op=0 error=EINVAL" ]
	assert_broker_serves
	# a jailed caller naming a host path gets that path inside its jail
	run jail "$RAWCLIENT" --op mount --field 0=none --field "1=$S/outside" \
		--field 2=tmpfs
	[ "$output" = "reply op=1 error=ENOENT" ]
	assert_table_unchanged before
}

@test "malformed messages are answered EINVAL or closed, and the broker lives on" {
	snapshot before
	local nul
	nul=$(hex "$S")00$(hex /x)
	mkdir -p "$S/x"
	while read -r want args; do
		# shellcheck disable=SC2086 # the arguments are words
		run eval "\"\$RAWCLIENT\" $args"
		if [ "$output" != "${want//_/ }" ]; then
			echo "rawclient $args: $output (want ${want//_/ })"
			false
		fi
		assert_broker_serves
	done <<-EOF
		reply_op=0_error=EINVAL --short 10
		reply_op=0_error=EINVAL --short 31
		closed --short 0
		reply_op=0_error=EINVAL --bad-magic
		reply_op=0_error=EINVAL --version 2
		reply_op=0_error=EINVAL --version 0
		reply_op=0_error=EINVAL --op mount --field 0=none --field 1=$S/x --field 2=tmpfs --len 2=4000
		reply_op=0_error=EINVAL --op mount --field 0=none --field 1=$S/x --field 2=tmpfs --len 0=0xfffffffe
		reply_op=0_error=EINVAL --op mount --field 0=none --field-hex 1=$nul --field 2=tmpfs
		reply_op=0_error=EINVAL --op mount --field 0=none --field 1=$S/x --field 2=tmpfs --pad-to $((LS_REQUEST_MAX + 1))
		reply_op=0_error=EINVAL --op status --pad-to 65536
		reply_op=0_error=EINVAL --op mount --field 0=none --field 1=$S/x --field 2=tmpfs --field 3=$(printf 'a%.0s' {1..4097})
		reply_op=0_error=EINVAL --raw-hex 00
		reply_op=0_error=EINVAL --op status --field 0=unexpected --len 0=99999
		reply_op=99_error=EINVAL --op 99
		reply_op=0_error=EINVAL --op 0
	EOF
	assert_table_unchanged before
}

@test "a client that connects and sends nothing does not hold up the next one for long" {
	background "$RAWCLIENT" --silent 30
	sleep 0.5
	local start=$SECONDS
	run timeout 10 "$SHARECTL" status
	[ "$status" -eq 0 ]
	# the broker answers others while it waits for the silent one
	((SECONDS - start <= 4))
}

@test "an unprivileged process holding 200 silent connections does not hold up the next one" {
	background setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$RAWCLIENT" --silent 60 --conns 200
	local out=$BATS_TEST_TMPDIR/bg.0 i
	for ((i = 0; i < 200; i++)); do
		grep -q connections "$out" && break
		sleep 0.05
	done
	[ "$(cat "$out")" = "200 connections" ]
	local start=$SECONDS
	run timeout 30 "$SHARECTL" status
	[ "$status" -eq 0 ]
	echo "answered after $((SECONDS - start)) s"
	((SECONDS - start <= 4))
	mkdir "$S/m"
	run timeout 30 env LD_PRELOAD="$SHIM" "$CALLER" mount none "$S/m" tmpfs 0
	[ "$output" = "mount $S/m = 0" ]
	((SECONDS - start <= 8))
}

@test "a client that hangs up right after its request: the broker lives on, the request is whole or absent" {
	mkdir "$S/m1" "$S/m2"
	snapshot before
	# alive while the broker works, its connection closed: served when
	# the broker proved it held the connection before it closed, else
	# refused as gone (ESRCH: a closed end proves nobody), which a
	# loaded machine makes the likelier
	run "$RAWCLIENT" --op mount --field 0=none --field "1=$S/m1" \
		--field 2=tmpfs --no-wait --linger 2
	[ "$status" -eq 0 ]
	assert_broker_serves
	if is_mountpoint "$S/m1"; then
		host umount "$S/m1"
		[ "$(call_result)" = 0 ]
	else
		grep -q "gone before it was served" "$STATE/sharebrokerd.log"
	fi
	assert_table_unchanged before
	# exited at once: whether the broker still found it is a race, but
	# the table and the broker's graph agree either way
	"$RAWCLIENT" --op mount --field 0=none --field "1=$S/m2" \
		--field 2=tmpfs --no-wait
	assert_broker_serves
	if is_mountpoint "$S/m2"; then
		host umount "$S/m2"
		[ "$(call_result)" = 0 ]
	else
		host umount "$S/m2" || true
		[ "$(call_result)" = EINVAL ]
	fi
	assert_table_unchanged before
}

@test "a fake broker squatting the socket is not believed, and the real one cannot start there" {
	local squat="@libshare-bats-$$-$BATS_TEST_NUMBER-squat"
	mkdir "$S/x"
	background setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$RAWCLIENT" --socket "$squat" --listen
	local out=$BATS_TEST_TMPDIR/bg.$((${#BG_PIDS[@]} - 1)) i
	for ((i = 0; i < 100; i++)); do
		grep -q listening "$out" && break
		sleep 0.05
	done
	grep -qx listening "$out"
	snapshot before
	LIBSHARE_SOCKET=$squat run host mount -t tmpfs none "$S/x"
	[ "$status" -eq 32 ]
	[[ $output == *"Function not implemented"* ]]
	[ "$(call_result)" = ENOSYS ]
	assert_table_unchanged before
	# the shim sent it nothing: not even the paths
	[ "$(cat "$out")" = listening ]
	run legacy "$SHAREBROKERD" --socket "$squat" --state-dir "$S/state2"
	[ "$status" -eq 1 ]
	[[ $output == *"$squat: a broker is already listening"* ]]
	run "$SHARECTL" --socket "$squat" status
	[ "$status" -eq 1 ]
	[ "$output" = "sharectl: no broker at $squat: Operation not permitted" ]
}
