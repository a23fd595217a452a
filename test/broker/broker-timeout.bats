#!/usr/bin/env bats
# A broker that does not answer in time: the caller gets ETIMEDOUT instead
# of hanging (LIBSHARE_TIMEOUT), and the broker, once it gets to the
# request, says in its log that nobody waited for the answer and what the
# request came to.

load ../lib/broker

setup() {
	broker_setup
	mkdir -p "$S/x"
}

teardown() {
	kill -CONT "$BROKER_PID" 2>/dev/null || true
	broker_teardown
}

@test "a broker held still: ETIMEDOUT for the caller, a line in the log, and it serves again" {
	kill -STOP "$BROKER_PID"
	LIBSHARE_TIMEOUT=1 run shimmed "$CALLER" mount none "$S/x" tmpfs 0
	[[ $output == "mount $S/x = ETIMEDOUT"* ]]
	kill -CONT "$BROKER_PID"
	assert_broker_serves
	# the caller hung up before the broker looked at the request: it was
	# not carried out
	grep -q "gave up waiting for its mount, or died: it was gone before it was served, nothing done" \
		"$STATE/sharebrokerd.log"
	! grep -q " $S/x " /proc/self/mountinfo
}
