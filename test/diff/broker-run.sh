#!/bin/bash
# broker-run.sh SCRIPT VIEW... - run one scenario through libshare: the
# util-linux commands of SCRIPT run under the legacy simulation (legacy-sim:
# the kernel refuses propagation flags, namespaces and the new mount API)
# with libshare.so preloaded, so every mount and umount goes to a
# sharebrokerd of this run, which does it all with plain private mounts.
#
# Output: exactly native-run.sh's format (base, L<line> results, one
# "--- view V" per VIEW, "--- files" with DIFF_FILES=1), read from the real
# kernel without the shim: the broker's propagation is compared by what it
# did to the table and to the files, not by what it would report.
# With BROKER_VIRTUAL=1 a line "--- virtual" follows, then the same views
# once more as read through the shim (the broker's virtual mountinfo, with
# the propagation fields only the broker knows): what it reports.
#
# Every run gets a private mount namespace of its own (even under
# run-diff.sh's), because the broker imports the whole table of its
# namespace, and whatever it leaves mounted dies with the namespace. The
# sandbox (tmpfs BASE, made private while the kernel still allows it) exists
# before the broker starts, so the broker imports it. The broker is stopped
# and waited for, and nothing stays mounted, whatever the scenario did
# (timeout included); its log goes to stderr.
#
# With BROKER_RESTART=1 the broker is killed (SIGKILL) and started again
# before every mount-family command and before the views (restart.sh): a
# restart must lose nothing.  BROKER_RESTART=v restarts it only before the
# views (to tell what a single restart loses).
#
# Environment: as native-run.sh (DIFF_BIN, DIFF_TIMEOUT, NATIVE_ERR,
# DIFF_FILES), and where the programs are (defaults: this source tree):
# SHAREBROKERD, SHARECTL, LIBSHARE_SO, LEGACY_SIM.
set -u
here=${0%/*}
[[ $0 == */* ]] || here=.
here=$(cd "$here" && pwd)
# shellcheck source=../lib/holder.bash
source "$here/../lib/holder.bash"
bindir=${DIFF_BIN:-$here}
top=$here/../..
SHAREBROKERD=${SHAREBROKERD:-$top/daemon/sharebrokerd}
SHARECTL=${SHARECTL:-$top/daemon/sharectl}
LIBSHARE_SO=${LIBSHARE_SO:-$top/shim/libshare.so}
LEGACY_SIM=${LEGACY_SIM:-$top/test/legacy/legacy-sim}

if (($# < 1)); then
	echo "usage: broker-run.sh SCRIPT VIEW..." >&2
	exit 2
fi
if [[ ${BROKER_RUN_NS:-} != $$ ]]; then
	# exec keeps the pid: the mark says "this very process unshared"
	BROKER_RUN_NS=$$ exec unshare -m --propagation private bash "$0" "$@"
fi
unset BROKER_RUN_NS
if [[ /proc/self/ns/mnt -ef /proc/1/ns/mnt ]]; then
	echo "broker-run.sh: not in a private mount namespace" >&2
	exit 2
fi
for p in "$SHAREBROKERD" "$SHARECTL" "$LIBSHARE_SO" "$LEGACY_SIM" \
	"$bindir/spy.so" "$bindir/lsview"; do
	[[ -e $p ]] || { echo "broker-run.sh: $p is missing" >&2; exit 2; }
done
[[ $LIBSHARE_SO == /* ]] || LIBSHARE_SO=$PWD/$LIBSHARE_SO

[[ -r $1 ]] || { echo "broker-run.sh: cannot read $1" >&2; exit 2; }
script=$1
[[ $script == /* ]] || script=$PWD/$script # it runs from /
shift

dir=$(mktemp -d "${TMPDIR:-/tmp}/libshare-broker.XXXXXX") || exit 1
log=$dir.log
state=$dir.state               # the broker's: stage/, park/, its log
nsfile=$dir.ns                 # "NAME PID" of the namespaces' keepers
: >"$nsfile"
sock=@libshare-diff-$$
broker=

# The keeper of namespace NAME:/ (native.sh's unshare).
keeper() {
	awk -v n="${1%:/}" '$1 == n { print $2 }' "$nsfile"
}

# The broker's pid, if it is still that broker (pid reuse).
broker_alive() {
	[[ $broker ]] && broker_on "$broker" "$sock"
}

# SIGTERM ends its loop; a broker stuck elsewhere gets SIGKILL after 5 s.
# It is no child of ours (it detached): poll until it is gone.
stop_broker() {
	local i
	# restarts (BROKER_RESTART) change the pid: the pidfile has the last
	[[ -r $state/sharebrokerd.pid ]] && read -r broker <"$state/sharebrokerd.pid"
	[[ $broker ]] || broker=$(pgrep -f -- "--socket $sock --state-dir" | head -1)
	end_holders "$state"  # the last broker's: it keeps covered mounts
	broker_alive || return 0
	kill "$broker" 2>/dev/null
	for ((i = 0; i < 500; i++)); do   # it ends in a few ms: poll finely
		broker_alive || return 0
		sleep 0.01
	done
	broker_alive && kill -KILL "$broker" 2>/dev/null
	while broker_alive; do
		sleep 0.01
	done
	end_holders "$state"  # one that still keeps something outlives it
	return 0
}

# Lazily (a holder may outlive the script), deepest first; a stack is
# listed once per mount, so one pass clears it; more are a safety net.
cleanup() {
	local m i left=1
	trap '' PIPE    # a reader gone: the cleanup goes on regardless
	while read -r m i; do   # the namespaces' keepers
		kill "$i" 2>/dev/null
	done <"$nsfile"
	stop_broker
	if [[ -s $state/sharebrokerd.log ]]; then
		echo "--- broker log"
		cat "$state/sharebrokerd.log"
	fi >&2
	for ((i = 0; i < 8 && left; i++)); do
		left=0
		for m in $(mounts_under "$dir") $(mounts_under "$state"); do
			/usr/bin/umount -l "$m" 2>/dev/null
			left=1
		done
	done
	rmdir "$dir"
	# --one-file-system: never into a mount, should one have survived
	rm -rf --one-file-system "$state" "$log" "$nsfile"
}
trap cleanup EXIT
trap 'exit 129' HUP     # a signal runs the cleanup too (a live broker
trap 'exit 130' INT     # would keep this namespace and its mounts alive)
trap 'exit 143' TERM
trap 'exit 141' PIPE

# The make-private must come first: under legacy-sim nothing can.
/usr/bin/mount -t tmpfs BASE "$dir" && /usr/bin/mount --make-private "$dir" ||
	exit 1
start=("$LEGACY_SIM" "$SHAREBROKERD" --socket "$sock" --state-dir "$state"
	--log "$state/sharebrokerd.log" --debug)
if [[ ${BROKER_RESTART:-} == [1v] ]]; then
	export RESTART_BROKER="${start[*]:1}" RESTART_STATE=$state \
		RESTART_WRAP=$LEGACY_SIM
	source "$here/restart.sh"
fi
if ! "${start[@]}"; then
	echo "broker-run.sh: sharebrokerd did not start" >&2
	exit 1
fi
# "sharebrokerd PID: ...": the first number of the status line
broker=$(timeout 10 "$SHARECTL" --socket "$sock" status | grep -o '[0-9]\+' |
	head -1)
broker_alive || broker=
echo "base $dir"

# As native-run.sh, with the whole scenario under legacy-sim and the shim
# preloaded (native.sh: DIFF_SHIM) into each util-linux command.
(cd / && B=$dir SCENARIO=$script SPY_SO=$bindir/spy.so SPY_LOG=$log \
	NS_FILE=$nsfile DIFF_SHIM=$LIBSHARE_SO LIBSHARE_SOCKET=$sock RESTART_WRAP= \
	timeout "${DIFF_TIMEOUT:-120}" "$LEGACY_SIM" bash -c \
	'source "$1" && { [[ -z $2 ]] || source "$2"; } && source "$SCENARIO"
	_release_all; exit 0' broker-run "$here/native.sh" \
	"$( [[ ${BROKER_RESTART:-} == 1 ]] && echo "$here/restart.sh")" \
	</dev/null) || echo "TIMEOUT or error $? in script"
if [[ ${BROKER_RESTART:-} == [1v] ]]; then
	restart_broker         # the views too come from a restarted broker
	[[ -s $state/restart.err ]] && cat "$state/restart.err" >&2
fi

for v in "$@"; do
	v=${v//'$B'/$dir}
	echo "--- view $v"
	if [[ $v == / ]]; then
		cat /proc/self/mountinfo
	elif [[ $v == *:/ ]]; then      # NAME:/ a namespace: the broker's
		"$bindir/lsview" "$(readlink "/proc/$(keeper "$v")/root")"
	else
		"$bindir/lsview" "$v"
	fi
done
if [[ ${DIFF_FILES:-} == 1 ]]; then   # as native-run.sh lists them
	echo "--- files"
	find "$dir" -mindepth 1 -printf '%y B/%P\n' -fstype sysfs -prune \
		2>/dev/null | LC_ALL=C sort
fi
# The same views as the processes see them through the shim (BROKER_VIRTUAL=1):
# lsview -s with libshare.so preloaded, chrooted by the shim's chroot, opens
# /proc/self/mountinfo like any program; the broker renders its table for
# that root, propagation fields included. Same broker, same state: the
# virtual comparison costs a few reads, not a second run.
if [[ ${BROKER_VIRTUAL:-} == 1 ]]; then
	echo "--- virtual"
	for v in "$@"; do
		v=${v//'$B'/$dir}
		echo "--- view $v"
		# a jail a mount hid since: nothing to chroot into, and lsview
		# shows nothing natively either
		[[ $v == / || $v == *:/ || -d $v ]] || continue
		enter=()                # a namespace: entered by the shim
		[[ $v == *:/ ]] && enter=(nsenter -t "$(keeper "$v")" -m) v=/
		LD_PRELOAD=$LIBSHARE_SO LIBSHARE_SOCKET=$sock \
			timeout 20 "${enter[@]}" "$bindir/lsview" -s "$v" ||
			echo "lsview -s $v: exit status $?"
	done
fi
