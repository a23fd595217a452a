# helpers.bash: what every test of the shim shares.  Tests run from the top
# build directory (make check; or by hand: unshare -m --propagation
# private bats test/shim/NAME.bats), as root, each .bats file in a private
# mount namespace of its own.  LIBSHARE_SO tests another build of the shim.

# Messages as the tests expect them, and one sort order.
export LC_ALL=C

SHIM=${LIBSHARE_SO:-$PWD/shim/libshare.so}
FAKEBROKER=$PWD/test/shim/fakebroker
CALL=$PWD/test/shim/call
THREADS=$PWD/test/shim/threads

# Per test: a temporary directory $T (mode 755, so that a fake broker run
# as nobody can write its log there), a socket name of its own, $SOCK, and
# the broker's log, $LOG.
shim_setup() {
	T=$(mktemp -d "${TMPDIR:-/tmp}/libshare-shim.XXXXXX")
	chmod 755 "$T"
	SOCK="@libshare-test-$BATS_TEST_NUMBER-$$-$RANDOM"
	LOG=$T/broker.log
	BROKERS=()
}

# Undoes whatever a test mounted under $T (deepest first), stops its
# brokers and removes $T.
shim_teardown() {
	local pid m
	for pid in "${BROKERS[@]}"; do
		kill "$pid" 2>/dev/null || true
		while kill -0 "$pid" 2>/dev/null; do sleep 0.01; done
	done
	if [ -n "$T" ]; then
		awk -v t="$T" 'index($5, t "/") == 1 { print $5 }' \
			/proc/self/mountinfo | sort -r |
			while read -r m; do umount -l "$m"; done
		rm -rf "$T"
	fi
}

# broker_at ADDRESS LOG [PREFIX...]: a fake broker on ADDRESS logging to
# LOG, run under PREFIX (setpriv ...) if given.  It accepts connections
# when this returns.
broker_at() {
	local addr=$1 log=$2 pid
	shift 2
	touch "$log"
	chmod 666 "$log"
	pid=$("$@" "$FAKEBROKER" "$addr" "$log" 3>&-)
	[ -n "$pid" ]
	BROKERS+=("$pid")
}

# start_broker [PREFIX...]: the test's own broker, on $SOCK, logging to
# $LOG.
start_broker() {
	broker_at "$SOCK" "$LOG" "$@"
}

# shim CMD...: CMD with the shim preloaded, talking to $SOCK.
shim() {
	LD_PRELOAD=$SHIM LIBSHARE_SOCKET=$SOCK "$@"
}

# expect_lines FILE LINE...: FILE holds exactly these lines.
expect_lines() {
	local file=$1 want got
	shift
	want=$(printf '%s\n' "$@")
	got=$(cat "$file" 2>/dev/null)
	if [ "$got" != "$want" ]; then
		printf '%s:\n%s\n-- wanted:\n%s\n' "$file" "$got" "$want" >&2
		return 1
	fi
}

# expect_log LINE...: the broker received exactly these requests.
expect_log() {
	expect_lines "$LOG" "$@"
}

# expect_output LINE...: the last `run` printed exactly these lines.
expect_output() {
	local want
	want=$(printf '%s\n' "$@")
	if [ "$output" != "$want" ]; then
		printf 'output:\n%s\n-- wanted:\n%s\n' "$output" "$want" >&2
		return 1
	fi
}
