#!/bin/bash
# fault-run.sh SCRIPT LINE SPEC VIEW... - broker-run.sh with a crash: the
# scenario's lines before LINE run through sharebrokerd and libshare.so
# under legacy-sim as in broker-run.sh; then the broker's fault injection
# is armed with SPEC (LIBSHARE_FAULT, intent.c: "step:K" kills it right
# after the K-th step of LINE's plan, "save:K" in the middle of its K-th
# write of the intent or the state) and LINE runs; nothing after it.  A
# killed broker is started again, as an administrator would, and the
# views are taken from what it recovered.
#
# Output: broker-run.sh's (without the L<line> results, which a killed
# request makes meaningless), after two lines of its own:
#   fault killed|survived     whether the broker died at SPEC
#   fault leftovers N         mounts left on the broker's staging and
#                             parking places after the restart, and
#                             under STATE/ns when no namespace is left
# Environment: as broker-run.sh.
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

if (($# < 3)); then
	echo "usage: fault-run.sh SCRIPT LINE SPEC VIEW..." >&2
	exit 2
fi
if [[ ${FAULT_RUN_NS:-} != $$ ]]; then
	FAULT_RUN_NS=$$ exec unshare -m --propagation private bash "$0" "$@"
fi
unset FAULT_RUN_NS
if [[ /proc/self/ns/mnt -ef /proc/1/ns/mnt ]]; then
	echo "fault-run.sh: not in a private mount namespace" >&2
	exit 2
fi
[[ $LIBSHARE_SO == /* ]] || LIBSHARE_SO=$PWD/$LIBSHARE_SO
[[ -r $1 ]] || { echo "fault-run.sh: cannot read $1" >&2; exit 2; }
src=$1 line=$2 spec=$3
shift 3

dir=$(mktemp -d "${TMPDIR:-/tmp}/libshare-fault.XXXXXX") || exit 1
log=$dir.log
nsfile=$dir.ns
state=$dir.state
script=$dir.sh
sock=@libshare-fault-$$
broker=

# The lines before LINE, the arming, LINE.
{ head -n "$((line - 1))" "$src"
  echo "echo $spec >\"\$FAULT_FILE\""
  sed -n "${line}p" "$src"; } >"$script"

broker_alive() {
	[[ $broker ]] && broker_on "$broker" "$sock"
}

# The brokers listening on this run's socket, by their command lines:
# what a status that did not answer in time cannot name.  One grep for
# all of them (a process each per pid was most of a run's time), its
# pattern written so that it does not match the grep's own arguments.
socket_pids() {
	grep -lzx -- "[${sock:0:1}]${sock:1}" /proc/[0-9]*/cmdline 2>/dev/null |
		sed -n 's|^/proc/\([0-9]*\)/cmdline$|\1|p'
}

# start [ENV...]: a broker on the sandbox's state directory; its pid.
start() {
	env "$@" "$LEGACY_SIM" "$SHAREBROKERD" --socket "$sock" \
		--state-dir "$state" --log "$state/sharebrokerd.log" --debug ||
		return 1
	broker=$(timeout 10 "$SHARECTL" --socket "$sock" status |
		grep -o '[0-9]\+' | head -1)
	broker_alive || broker=$(socket_pids | head -1)
	broker_alive || broker=
}

stop_broker() {
	local i
	broker_alive || return 0
	kill "$broker" 2>/dev/null
	for ((i = 0; i < 500; i++)); do   # it ends in a few ms: poll finely
		broker_alive || return 0
		sleep 0.01
	done
	kill -KILL "$broker" 2>/dev/null
	while broker_alive; do
		sleep 0.01
	done
}

# The keeper of namespace NAME:/ (native.sh's unshare), if it is alive: a
# copy the kill cut short has none, as the kernel's run without it.
keeper() {
	local pid
	pid=$(awk -v n="${1%:/}" '$1 == n { print $2 }' "$nsfile")
	[[ $pid ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

cleanup() {
	local m i
	trap '' PIPE
	while read -r m i; do   # the namespaces' keepers
		kill "$i" 2>/dev/null
	done <"$nsfile"
	stop_broker
	for i in $(socket_pids); do   # one a slow status left unnamed
		kill -KILL "$i" 2>/dev/null
	done
	end_holders "$state"   # the last broker's holder keeps covered mounts
	if [[ -s $state/sharebrokerd.log ]]; then
		echo "--- broker log"
		cat "$state/sharebrokerd.log"
	fi >&2
	# a lazy umount takes the mount's whole tree with it: one per
	# mount stacked on a place, not one per mount of the sandbox
	for ((i = 0; i < 64; i++)); do
		m=$( (mounts_under "$dir"; mounts_under "$state") | tail -1)
		[[ $m ]] && "$bindir/umount2" -l "$m" || break
	done
	rmdir "$dir"
	rm -rf --one-file-system "$state" "$log" "$script" "$nsfile"
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 141' PIPE

: >"$nsfile"
/usr/bin/mount -t tmpfs BASE "$dir" && /usr/bin/mount --make-private "$dir" ||
	exit 1
if ! start LIBSHARE_FAULT="file:$state/fault"; then
	echo "fault-run.sh: sharebrokerd did not start" >&2
	exit 1
fi
echo "base $dir"

(cd / && B=$dir SCENARIO=$script SPY_SO=$bindir/spy.so SPY_LOG=$log \
	NS_FILE=$nsfile DIFF_SHIM=$LIBSHARE_SO LIBSHARE_SOCKET=$sock \
	FAULT_FILE=$state/fault timeout "${DIFF_TIMEOUT:-120}" "$LEGACY_SIM" \
	bash -c 'source "$1" && source "$SCENARIO"; _release_all; exit 0' \
	fault-run "$here/native.sh" </dev/null) >/dev/null ||
	echo "TIMEOUT or error $? in script"

if broker_alive; then
	echo "fault survived"
else
	echo "fault killed"
	# what a SIGKILL leaves: the socket's name frees with the process
	start || { echo "fault-run.sh: no restart" >&2; exit 1; }
fi
# and a copy's mounts under STATE/ns once no namespace has a keeper (a
# copy the kill cut short, undone; one nobody entered, freed)
alive=0
while read -r _ pid; do
	kill -0 "$pid" 2>/dev/null && alive=1
done <"$nsfile"
echo "fault leftovers $( (mounts_under "$state/stage"; mounts_under "$state/park"
	((alive)) || mounts_under "$state/ns") | wc -l)"

for v in "$@"; do
	v=${v//'$B'/$dir}
	echo "--- view $v"
	if [[ $v == / ]]; then
		cat /proc/self/mountinfo
	elif [[ $v == *:/ ]]; then      # NAME:/ a namespace: the broker's
		pid=$(keeper "$v") &&
			"$bindir/lsview" "$(readlink "/proc/$pid/root")"
	else
		"$bindir/lsview" "$v"
	fi
done
echo "--- files"
find "$dir" -mindepth 1 -printf '%y B/%P\n' -fstype sysfs -prune \
	2>/dev/null | LC_ALL=C sort
echo "--- virtual"
for v in "$@"; do
	v=${v//'$B'/$dir}
	echo "--- view $v"
	[[ $v == / || $v == *:/ || -d $v ]] || continue
	enter=()                # a namespace: entered by the shim
	if [[ $v == *:/ ]]; then
		pid=$(keeper "$v") || continue
		enter=(nsenter -t "$pid" -m) v=/
	fi
	LD_PRELOAD=$LIBSHARE_SO LIBSHARE_SOCKET=$sock \
		timeout 20 "${enter[@]}" "$bindir/lsview" -s "$v" ||
		echo "lsview -s $v: exit status $?"
done
