#!/bin/bash
# test/bench/unshare.sh [ROUNDS] - the cost of one `unshare -m true`
# through libshare against the kernel's own (issue 11's closing note), with
# 100 and with 1000 mounts in the caller's tree.  A benchmark, not a test:
# it prints, for each size, the median wall time of each side over ROUNDS
# (default 20) alternating rounds and their ratio.
#
# The kernel's side runs natively in a private mount namespace holding the
# sandbox's M tmpfs mounts (unshare copies all of them, and the host's).
# libshare's runs the same command under the legacy simulation with the
# shim preloaded, against a broker of its own that imported the same
# table: the broker copies the caller's tree with plain binds and, once the
# command has exited, takes the copy down again.  Its time is counted up to
# the moment the copy is gone (sharectl ns, polled), so that both sides
# start every round from the same table; the command's own time is shown
# beside it.
#
# Needs root and a built tree; environment: SHAREBROKERD, SHARECTL,
# LIBSHARE_SO, LEGACY_SIM (default: this tree).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$here/../..
SHAREBROKERD=${SHAREBROKERD:-$top/daemon/sharebrokerd}
SHARECTL=${SHARECTL:-$top/daemon/sharectl}
LIBSHARE_SO=${LIBSHARE_SO:-$top/shim/libshare.so}
LEGACY_SIM=${LEGACY_SIM:-$top/test/legacy/legacy-sim}
rounds=${1:-20}
if ((EUID != 0)); then
	echo "unshare.sh: needs root" >&2
	exit 1
fi
if [[ ${UNSHARE_BENCH_NS:-} != $$ ]]; then
	UNSHARE_BENCH_NS=$$ exec unshare -m --propagation private bash "$0" "$@"
fi
LIBSHARE_SO=$(realpath "$LIBSHARE_SO")
base=$(mktemp -d /tmp/libshare-unshare-bench.XXXXXX)
mount -t tmpfs bench "$base"
mount --make-private "$base"
export LIBSHARE_SOCKET=@libshare-unshare-bench-$$

cleanup() {
	"$SHARECTL" stop >/dev/null 2>&1
	sleep 0.2
	umount -R -l "$base" 2>/dev/null
	rmdir "$base"
}
trap cleanup EXIT

now() { date +%s%N; }

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# One size: M mounts under the sandbox, a broker that imports them, then
# the alternating rounds.
measure() {
	local m=$1 i t0 t1
	mkdir -p "$base/m$m"
	for ((i = 0; i < m; i++)); do
		mkdir "$base/m$m/$i"
		mount -t tmpfs "t$i" "$base/m$m/$i"
	done
	mkdir -p "$base/state$m"
	"$LEGACY_SIM" "$SHAREBROKERD" --socket "$LIBSHARE_SOCKET" \
		--state-dir "$base/state$m" 2>/dev/null || {
		echo "unshare.sh: the broker did not start" >&2
		exit 1
	}
	: >"$base/native" && : >"$base/shim" && : >"$base/cmd"
	for ((i = 0; i < rounds; i++)); do
		t0=$(now)
		unshare -m --propagation unchanged true
		t1=$(now)
		echo $(((t1 - t0) / 1000)) >>"$base/native"
		t0=$(now)
		"$LEGACY_SIM" env LD_PRELOAD="$LIBSHARE_SO" \
			unshare -m --propagation unchanged true ||
			echo "unshare.sh: unshare through libshare failed" >&2
		t1=$(now)
		echo $(((t1 - t0) / 1000)) >>"$base/cmd"
		until [ "$("$SHARECTL" ns | wc -l)" -eq 1 ]; do sleep 0.002; done
		t1=$(now)
		echo $(((t1 - t0) / 1000)) >>"$base/shim"
	done
	local n s c total
	n=$(median <"$base/native")
	s=$(median <"$base/shim")
	c=$(median <"$base/cmd")
	total=$(wc -l </proc/self/mountinfo)
	printf '%6d mounts in the tree (%d in the namespace): kernel %7d us, libshare %8d us (the command alone %d us), ratio %6.1fx\n' \
		"$m" "$total" "$n" "$s" "$c" "$(echo "$s / $n" | bc -l)"
	"$SHARECTL" stop >/dev/null 2>&1
	sleep 0.3
}

echo "unshare -m true, $rounds alternating rounds, medians (load: $(cut -d' ' -f1-3 /proc/loadavg))"
measure 100
measure 1000
