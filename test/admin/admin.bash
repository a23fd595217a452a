# Bats helper for the administration tests (test/admin/*.bats): a sandbox
# and, when asked, a broker of the test's own.
#
#   load admin
#   setup()    { admin_setup; }
#   teardown() { admin_teardown; }
#
# Every test gets
#   S      a private tmpfs at $BATS_TEST_TMPDIR/sb
#   STATE  $S/state, the broker's state directory
#   SOCK   @libshare-admin-$$-$BATS_TEST_NUMBER, exported as LIBSHARE_SOCKET
#   BUILD  the build directory (make check runs there), DIST its dist/
# and start_broker ARGS starts sharebrokerd (detached) on them, logging to
# $S/broker.log; the teardown stops every broker whose pidfile is in $S.

load "${BATS_TEST_DIRNAME}/../lib/legacy"
load "${BATS_TEST_DIRNAME}/../lib/holder"

SRC=$(cd "${BATS_TEST_DIRNAME}/../.." && pwd)
SHAREBROKERD=$(libshare_find daemon/sharebrokerd)
SHARECTL=$(libshare_find daemon/sharectl)
SHAREDRY=$(libshare_find daemon/sharedry)
SHIM=$(libshare_find shim/libshare.so)
LOGCATCH=$(libshare_find test/admin/logcatch)
BUILD=${SHIM%/shim/libshare.so}
DIST=$BUILD/dist

admin_setup() {
	if ((EUID != 0)); then
		echo "needs root (real mounts)" >&2
		return 1
	fi
	S=$BATS_TEST_TMPDIR/sb
	STATE=$S/state
	SOCK=@libshare-admin-$$-$BATS_TEST_NUMBER
	export LIBSHARE_SOCKET=$SOCK
	mkdir -p "$S"
	mount -t tmpfs admin-sandbox "$S"
	mount --make-private "$S"
	BG_PIDS=()
}

# sharebrokerd on $SOCK and $STATE, logging to $S/broker.log, plus ARGS.
start_broker() {
	"$SHAREBROKERD" --socket "$SOCK" --state-dir "$STATE" \
		--log "$S/broker.log" "$@"
}

# The pid in a pidfile (default $STATE's).
pid_of() {
	cat "${1:-$STATE/sharebrokerd.pid}"
}

# Waits up to 5 seconds for pid $1 to end.
wait_gone() {
	local i
	for ((i = 0; i < 100; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.05
	done
	return 1
}

# Waits up to 5 seconds for FILE to hold a line matching the ERE.
wait_for_line() {
	local i
	for ((i = 0; i < 100; i++)); do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "no line /$2/ in $1:" >&2
	cat "$1" >&2 2>/dev/null
	return 1
}

# Runs CMD in the background; the teardown kills it.
background() {
	"$@" 3>&- &
	BG_PIDS+=($!)
}

admin_teardown() {
	local f p
	for p in "${BG_PIDS[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	for f in $(find "$S" -name sharebrokerd.pid 2>/dev/null); do
		p=$(cat "$f" 2>/dev/null) || continue
		[ -n "$p" ] && kill -TERM "$p" 2>/dev/null && wait_gone "$p"
	done
	end_holders "$S"
	if [ -z "${BATS_TEST_COMPLETED:-}" ] && [ -f "$S/broker.log" ]; then
		echo "--- $S/broker.log"
		tail -n 30 "$S/broker.log"
	fi
	if [ -n "${S:-}" ] && mountpoint -q "$S"; then
		umount -R -l "$S"
	fi
	return 0
}

# ---- an installed tree --------------------------------------------------

# A make variable of the build's Makefile, expanded ($(sbindir) etc.).
make_var() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory \
		-C "$BUILD" -f Makefile -f - print-var <<<"print-var: ; @echo '\$($1)'"
}

# make install DESTDIR=$BATS_FILE_TMPDIR/root, once per file: ROOT.  The
# sub-make must not take the outer make's jobserver (make -j check).
install_tree() {
	ROOT=$BATS_FILE_TMPDIR/root
	[ -e "$ROOT/.installed" ] && return 0
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$BUILD" install \
		DESTDIR="$ROOT" >"$BATS_FILE_TMPDIR/install.log" 2>&1 || {
		cat "$BATS_FILE_TMPDIR/install.log"
		return 1
	}
	touch "$ROOT/.installed"
}
