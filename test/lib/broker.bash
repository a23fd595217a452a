# Bats helper for the broker's integration tests (test/broker/*.bats): a
# sandbox and a broker of its own for every test.
#
#   load ../lib/broker
#   setup()    { broker_setup; }      # sandbox, jail, broker under legacy-sim
#   teardown() { broker_teardown; }   # broker stopped and gone, all unmounted
#
# Every test gets
#   S      a tmpfs at $BATS_TEST_TMPDIR/sb, made private before the broker
#          starts (the broker imports the whole table and refuses one the
#          kernel propagates)
#   J      $S/jail, a chroot jail: a plain directory of the sandbox
#   STATE  $S/state, the broker's state directory: its staging and parking
#          places lie inside the sandbox, so no mount of the broker's own
#          ever shows outside it
#   LIBSHARE_SOCKET  @libshare-bats-$$-$BATS_TEST_NUMBER (exported: shim,
#          sharectl and rawclient use it), or BROKER_SOCKET when a test
#          sets it (a path socket), and BROKER_PID
#
# How a jail runs host programs.  A jail is a bare directory; jail CMD runs a
# host binary chrooted into it by test/diff/spy.so: SPY_ROOT makes spy's
# constructor chroot the process once every library is loaded (so the jail
# needs no /usr, /lib or ld.so), and opens of "/proc/..." are served from the
# host's /proc, so util-linux works without a /proc mount that every table
# comparison would have to account for.  LD_PRELOAD="$SPY $SHIM": spy's
# mount/umount2 wrap the shim's (SPY_LOG records each call and its errno,
# see call_result), spy's chroot(2) goes through the shim's chroot, and the
# shim forwards the mount-family calls to the broker.  The alternative, a
# jail with /usr and /lib* bind-mounted read-only and an /etc/ld.so.preload,
# adds mounts to every jail that each comparison must skip, and a copy of
# the shim per jail; spy is what the differential suite already trusts.
# Our own test programs (caller) chroot themselves with --chroot instead.
#
# The kernel is the oracle: native CMD runs CMD without the shim in a
# scratch copy of the test's namespace (unshare -m), where it may change
# anything without the broker's table ever seeing it; same_as_kernel CMD
# runs it there and then here, and compares.  Two limits of a copy: its
# mounts share their superblocks with ours (a read-only remount there is
# one here too: give such a test a PRELUDE that makes its own filesystem on
# either side), and a process of ours uses our mounts, not the copy's (busy
# answers cannot be compared this way; the busy tests state the kernel's).
#
# Binaries are looked for as legacy.bash does: $LIBSHARE_BUILDDIR when set,
# else the source tree, else the current directory (make check's).

load "${BASH_SOURCE[0]%/*}/legacy"
load "${BASH_SOURCE[0]%/*}/holder"

SHAREBROKERD=$(libshare_find daemon/sharebrokerd)
SHARECTL=$(libshare_find daemon/sharectl)
SHIM=$(libshare_find shim/libshare.so)
SPY=$(libshare_find test/diff/spy.so)
RAWCLIENT=$(libshare_find test/broker/rawclient)
CALLER=$(libshare_find test/broker/caller)

BG_PIDS=()

broker_setup() {
	local f
	if ((EUID != 0)); then
		echo "needs root (real mounts)" >&2
		return 1
	fi
	legacy_require
	for f in "$SHAREBROKERD" "$SHARECTL" "$SHIM" "$SPY" "$RAWCLIENT" \
		 "$CALLER"; do
		if [ ! -e "$f" ]; then
			echo "not built: $f (make check builds it)" >&2
			return 1
		fi
	done
	S=$BATS_TEST_TMPDIR/sb
	J=$S/jail
	STATE=$S/state
	SPY_LOG=$BATS_TEST_TMPDIR/calls.log
	export LIBSHARE_SOCKET=${BROKER_SOCKET:-@libshare-bats-$$-$BATS_TEST_NUMBER}
	mkdir -p "$S"
	mount -t tmpfs sandbox "$S"
	mount --make-private "$S"
	mkdir -p "$J" "$STATE"
	public_copies || return 1
	broker_start
}

# The shim and the programs a test may run as a user without privilege
# (setpriv, rawclient --uid), copied where such a user reaches them: the
# build tree need not be (a checkout of mode 700).  $PUBLIC, a directory
# of mode 755 in /tmp, goes at teardown.
public_copies() {
	local v
	PUBLIC=$(mktemp -d /tmp/libshare-bats.XXXXXX) && chmod 755 "$PUBLIC" ||
		return 1
	for v in SHIM SPY RAWCLIENT CALLER NSCALL; do
		if [ -n "${!v:-}" ]; then
			cp "${!v}" "$PUBLIC/" || return 1
			printf -v "$v" '%s' "$PUBLIC/${!v##*/}"
		fi
	done
}

# Starts the test's broker under legacy-sim; it returns once it answers.
# Extra ARGS go to sharebrokerd (--max-mounts N, --mount-table FILE).
broker_start() {
	legacy "$SHAREBROKERD" --socket "$LIBSHARE_SOCKET" --state-dir "$STATE" \
		--log "$STATE/sharebrokerd.log" --debug "$@" || return 1
	BROKER_PID=$("$SHARECTL" status | sed -n 's/^sharebrokerd \([0-9]*\):.*/\1/p')
	[ -n "$BROKER_PID" ]
}

# Stops the test's broker (sharectl stop) and waits until it is gone.
broker_stop() {
	"$SHARECTL" stop >/dev/null
	wait_gone "$BROKER_PID" 5
}

# Stops the test's broker, if it runs, and starts another with ARGS, which
# imports the table as it is now (and the state its predecessor left).
broker_restart() {
	if broker_alive; then
		broker_stop
	fi
	broker_start "$@"
}

broker_alive() {
	[ -n "${BROKER_PID:-}" ] && kill -0 "$BROKER_PID" 2>/dev/null
}

# Waits up to $2 (default 5) seconds for pid $1 to end.
wait_gone() {
	local i
	for ((i = 0; i < ${2:-5} * 20; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.05
	done
	return 1
}

# Runs CMD in the background, its output in $BATS_TEST_TMPDIR/bg.N; the
# teardown kills it.  Sets BG (its pid).
background() {
	"$@" >"$BATS_TEST_TMPDIR/bg.${#BG_PIDS[@]}" 2>&1 3>&- &
	BG=$!
	BG_PIDS+=("$BG")
}

broker_teardown() {
	local rc=0 p
	for p in "${BG_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	if broker_alive; then
		# after any test, the graph and the kernel agree in size
		assert_count_agrees >&2 || rc=1
		"$SHARECTL" stop >/dev/null 2>&1 || true
		if ! wait_gone "$BROKER_PID" 5; then
			echo "teardown: broker $BROKER_PID ignored sharectl stop" >&2
			kill -KILL "$BROKER_PID" 2>/dev/null
			wait_gone "$BROKER_PID" 5
			rc=1
		fi
	fi
	end_holders "$S"            # covered mounts at the stop keep one
	if [ -z "${BATS_TEST_COMPLETED:-}" ] && [ -f "$STATE/sharebrokerd.log" ]; then
		echo "--- $STATE/sharebrokerd.log"
		tail -n 40 "$STATE/sharebrokerd.log"
	fi
	if [ -n "${S:-}" ] && mountpoint -q "$S"; then
		umount -R -l "$S" || rc=1
	fi
	if [ -n "${PUBLIC:-}" ]; then
		rm -rf "$PUBLIC"
	fi
	return $rc
}

# The broker still answers, as the same process.
assert_broker_serves() {
	run "$SHARECTL" status
	[ "$status" -eq 0 ]
	[[ $output == "sharebrokerd $BROKER_PID: "* ]]
}

# The broker counts as many mounts as the kernel's table has: its graph
# and the kernel agree at least in size.
assert_count_agrees() {
	local n
	n=$("$SHARECTL" status | sed -n 's/^sharebrokerd [0-9]*: \([0-9]*\) mounts.*/\1/p')
	if [ "$n" != "$(wc -l </proc/self/mountinfo)" ]; then
		echo "the broker counts $n mounts, the kernel has $(wc -l </proc/self/mountinfo)"
		return 1
	fi
}

# Waits until the broker has freed every namespace: no STATE/ns left, and
# its count of mounts is the kernel's again.
ns_all_gone() {
	local i
	for ((i = 0; i < 100; i++)); do
		if [ ! -e "$STATE/ns" ] && assert_count_agrees >/dev/null; then
			return 0
		fi
		sleep 0.05
	done
	echo "namespaces left: $(ls "$STATE/ns" 2>&1)" >&2
	return 1
}

# Waits for FILE to appear (a signal from a background process).
wait_file() {
	local i
	for ((i = 0; i < 200; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.05
	done
	echo "never came: $1" >&2
	return 1
}

# Waits up to 5 seconds for a line matching PATTERN in FILE (a background
# process's output).
wait_line() {
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q "$2" "$1" && return 0
		sleep 0.05
	done
	echo "never said '$2': $1" >&2
	return 1
}

# ---- running things -------------------------------------------------------

# CMD on the host, its mount-family calls forwarded to the broker.
host() {
	: >"$SPY_LOG"
	legacy env LD_PRELOAD="$SPY $SHIM" SPY_LOG="$SPY_LOG" "$@"
}

# CMD chrooted into the jail at $1 (see the header), calls forwarded.
jail_at() {
	local root=$1
	shift
	: >"$SPY_LOG"
	legacy env LD_PRELOAD="$SPY $SHIM" SPY_ROOT="$root" SPY_LOG="$SPY_LOG" \
		"$@"
}

# CMD chrooted into $J.
jail() {
	jail_at "$J" "$@"
}

# CMD with the shim and nothing else (caller chroots itself).
shimmed() {
	legacy env LD_PRELOAD="$SHIM" "$@"
}

# CMD as the kernel answers it: no shim, in a scratch copy of this
# namespace (nothing it does reaches the broker's table).
native() {
	env -u LD_PRELOAD unshare -m --propagation unchanged "$@"
}

# CMD's output, "exit N" and then table: what the shim's way gives here.
outcome() {
	"$@" 2>&1
	echo "exit $?"
	table
}

# The same as the kernel alone gives it: CMD runs in a scratch copy of this
# namespace, where jail, host and shimmed mean the same without the shim.
# The copy starts from the kernel's table as it is, whose mounts are all
# private: right as long as the broker's graph has no propagation yet.
# PRELUDE, when set, names a function run first (quietly) on either side.
native_outcome() {
	native bash -c "
		$(declare -f table ${PRELUDE:-})
		S='$S' J='$J' SPY='$SPY' CALLER='$CALLER'
		jail() { env LD_PRELOAD=\"\$SPY\" SPY_ROOT=\"\$J\" \"\$@\"; }
		host() { \"\$@\"; }
		shimmed() { \"\$@\"; }
		${PRELUDE:-:} >/dev/null 2>&1
		\"\$@\" 2>&1
		echo \"exit \$?\"
		table" bash "$@"
}

# Runs CMD natively (scratch namespace) and then with the shim, asserts
# that output, exit status and the sandbox's table are the same, and leaves
# them in $output.
same_as_kernel() {
	local kernel
	kernel=$(native_outcome "$@")
	if [ -n "${PRELUDE:-}" ]; then
		"$PRELUDE" >/dev/null 2>&1
	fi
	output=$(outcome "$@")
	if [ "$output" != "$kernel" ]; then
		echo "through the broker, unlike the kernel (-kernel +broker):" >&2
		diff <(echo "$kernel") <(echo "$output") >&2
		return 1
	fi
}

# The last mount-family call spy saw, e.g. "mount 0x1000 = EINVAL".
last_call() {
	tail -n 1 "$SPY_LOG"
}

# Its result: 0 or the errno name.
call_result() {
	last_call | sed 's/.* = //'
}

# ---- the kernel's table ---------------------------------------------------

# The kernel's mountinfo lines under the sandbox, as they are (mount ids).
sandbox_lines() {
	awk -v s="$S" '$5 == s || index($5, s "/") == 1' /proc/self/mountinfo
}

# Saves the whole table as NAME; assert_table_unchanged NAME compares.
snapshot() {
	cp /proc/self/mountinfo "$BATS_TEST_TMPDIR/table.$1"
}

assert_table_unchanged() {
	if ! diff -u "$BATS_TEST_TMPDIR/table.$1" /proc/self/mountinfo; then
		echo "the kernel's table changed (see above)" >&2
		return 1
	fi
}

# The sandbox's mounts without ids, one per line, sorted:
# "MOUNTPOINT ROOT FSTYPE SOURCE MNT/SB on PARENT-MOUNTPOINT" (MNT and SB:
# rw or ro, of the mount and of its superblock), paths under $S written as
# "$S...": comparable with a native run of the same scenario.
table() {
	awk -v s="$S" '
		function sub_s(p) {
			return index(p, s) == 1 ? "$S" substr(p, length(s) + 1) : p
		}
		{ mp[$1] = $5 }
		$5 == s || index($5, s "/") == 1 { keep[$1] = $0 }
		END {
			for (id in keep) {
				split(keep[id], f, " ")
				for (i = 7; f[i] != "-"; i++) ;
				print sub_s(f[5]) " " f[4] " " f[i + 1] " " \
				      f[i + 2] " " substr(f[6], 1, 2) "/" \
				      substr(f[i + 3], 1, 2) " on " sub_s(mp[f[2]])
			}
		}' /proc/self/mountinfo | LC_ALL=C sort
}

# "MOUNTPOINT MAJ:MIN" of every mount whose source is NAME.
mounts_of() {
	awk -v src="$1" '{
		for (i = 7; $i != "-"; i++) ;
		if ($(i + 2) == src) print $5, $3
	}' /proc/self/mountinfo
}

# The mount points of the mounts whose source is NAME, sorted (C locale).
mountpoints_of() {
	mounts_of "$1" | cut -d' ' -f1 | LC_ALL=C sort
}

# Is PATH a mount point in the kernel's table?
is_mountpoint() {
	awk -v p="$1" '$5 == p { found = 1 } END { exit !found }' /proc/self/mountinfo
}

# The kernel itself propagates nothing: no shared:, master: or unbindable
# field in its table (the broker makes every copy a private mount).
assert_kernel_private() {
	if awk '{ for (i = 7; $i != "-"; i++) print }' /proc/self/mountinfo |
		grep -q .; then
		echo "the kernel's table has propagation fields:" >&2
		grep -E ' (shared|master):| unbindable ' /proc/self/mountinfo >&2
		return 1
	fi
}
