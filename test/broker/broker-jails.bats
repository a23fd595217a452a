#!/usr/bin/env bats
# The broker remembers the roots of its callers (sharectl jails) only while
# some process lives there: callers from ever new roots (build chroots that
# come and go, users in user namespaces of their own) do not grow it.

load ../lib/broker

setup() {
	broker_setup
	mkdir -p "$S/gone" "$S/alive"
}

teardown() {
	broker_teardown
}

jail_count() {
	"$SHARECTL" status | sed -n 's/.*mounts, \([0-9]*\) jails$/\1/p'
}

@test "a root no process lives in any more is forgotten; a live one stays" {
	"$RAWCLIENT" --chroot "$S/gone" --op chroot >/dev/null
	background shimmed "$CALLER" --chroot "$S/alive" sleep 30
	for ((i = 0; i < 50; i++)); do
		grep -q "$S/alive" <("$SHARECTL" jails) && break
		sleep 0.1
	done
	run "$SHARECTL" jails
	[[ $output == *"$S/alive"* ]]
	[[ $output != *"$S/gone"* ]]
}

@test "a thousand callers from a thousand roots that are gone: the list stays small, the memory flat" {
	local i rss0 rss1
	for ((i = 0; i < 1000; i++)); do mkdir "$S/r$i"; done
	for ((i = 0; i < 100; i++)); do
		"$RAWCLIENT" --chroot "$S/r$i" --op chroot >/dev/null
	done
	rss0=$(awk '/^VmRSS/ { print $2 }' "/proc/$BROKER_PID/status")
	for ((i = 100; i < 1000; i++)); do
		"$RAWCLIENT" --chroot "$S/r$i" --op chroot >/dev/null
	done
	rss1=$(awk '/^VmRSS/ { print $2 }' "/proc/$BROKER_PID/status")
	echo "jails $(jail_count), VmRSS $rss0 kB -> $rss1 kB" >&2
	[ "$(jail_count)" -le 130 ]
	[ "$rss1" -le $((rss0 + 512)) ]
}
