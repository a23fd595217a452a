#!/bin/bash
# test/bench/perf.sh - the benchmark of issue 10 (make bench): each figure
# of "What must be true" as a ratio measured side by side in one run.
# A benchmark, not a test (not in TESTS; timing is never an assertion).
#
# Every row alternates the two variants for BENCH_ROUNDS (default 5) rounds
# and compares the medians: the kernel natively (a private mount namespace
# of its own, unshare -m, with the same layout: the work mount made shared,
# no receivers) against libshare (ops-bench through libshare.so, a broker
# under the legacy simulation, the same mount made shared through it).
#  1. single operations: bind, tmpfs, umount2, MNT_DETACH from a C program;
#     util-linux mount --bind, mount -t tmpfs and umount as processes
#  2. fan-out: a bind received by N (BENCH_FAN, default "1 10 100 1000")
#     slave binds, then its umount2, per copy against the floor (N plain
#     bind mount(2) or umount2 calls in a C loop, in the kernel round;
#     the umount2 calls from as many threads as the broker's executor
#     uses, 16, and for reference from one); the receivers' setup per
#     call against the kernel's
#  4. umount with 0, 250 and 1000 extra sleeping processes
#  5. mount+umount pairs per second from 1, 4 and 16 clients
#  3. a bind+umount and a tmpfs+umount with M unrelated mounts (BENCH_M, default
#     "100 1000 10000"), the broker's start time and RSS at each M
#  6. a full read of the virtual mountinfo in a jail of M mounts; an open
#     one polled (timeout 0, POLLPRI) while nothing changes, by poll(2) and
#     by epoll_wait, and the broker's CPU time per call of each
# Environment: BENCH_ONLY (the items to run, default "1 2 3 4 5"; 3 runs
# 6 too), BENCH_ROUNDS, BENCH_N (operations per round, default 100),
# BENCH_SECS (throughput seconds per round, default 1), BENCH_M, BENCH_BIN
# (where ops-bench and mounttable-bench are), SHAREBROKERD, SHARECTL,
# LIBSHARE_SO, LEGACY_SIM, and LEGACY_SIM_PROFILE (legacy-sim's profile
# words, e.g. "--abi 3.2": the broker and libshare's rounds on that older
# ABI, the kernel's rounds as they are; issue 23's cost of the fallbacks),
# and BENCH_BROKER_ARGS (more of sharebrokerd's, e.g. "--threads 1").
# BENCH_PROFILE=DIR: a perf(1) profile of the broker for each pair of rounds
# run (BENCH_ONLY chooses them), its libshare rounds only, and of each
# broker start: DIR/NAME.data, NAME.txt (perf report --stdio), NAME.folded
# (stacks for a flame graph) and NAME.svg with flamegraph.pl on PATH; NAME
# is the pair's (the word after "pair" below), start_M for a start
# (perf-profile.sh; BENCH_PROFILE_CALLGRAPH, default dwarf).
# M = 100000 needs fs.mount-max above 100000, the kernel's default: it is
# raised as far as needed for the run and put back at exit.
# Needs root; nothing stays mounted or running.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$here/../..
binpath=${BENCH_BIN:-$here}
ops=$binpath/ops-bench tab=$binpath/mounttable-bench
SHAREBROKERD=${SHAREBROKERD:-$top/daemon/sharebrokerd}
SHARECTL=${SHARECTL:-$top/daemon/sharectl}
LIBSHARE_SO=${LIBSHARE_SO:-$top/shim/libshare.so}
LEGACY_SIM=${LEGACY_SIM:-$top/test/legacy/legacy-sim}
rounds=${BENCH_ROUNDS:-5} n=${BENCH_N:-100} secs=${BENCH_SECS:-1}
only=" ${BENCH_ONLY:-1 2 3 4 5} "
sizes=${BENCH_M:-100 1000 10000}

if ((EUID != 0)); then
	echo "perf.sh: needs root (a private mount namespace, real mounts)" >&2
	exit 1
fi
for p in "$ops" "$tab" "$SHAREBROKERD" "$SHARECTL" "$LIBSHARE_SO" "$LEGACY_SIM"; do
	[[ -e $p ]] || { echo "perf.sh: $p is missing (make check TESTS= builds it)" >&2; exit 1; }
done
LIBSHARE_SO=$(cd "$(dirname "$LIBSHARE_SO")" && pwd)/$(basename "$LIBSHARE_SO")
if [[ ${BENCH_NS:-} != $$ ]]; then
	BENCH_NS=$$ exec unshare -m --propagation private bash "$0" "$@"
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/libshare-perf.XXXXXX") || exit 1
state=$dir/state w=$dir/w jail=$dir/jail sock=@libshare-perf-$$ idle=
export LIBSHARE_SOCKET=$sock
. "$here/perf-lib.sh"
. "$here/perf-profile.sh"
prof_check || exit 1
trap cleanup EXIT
mount -t tmpfs sandbox "$dir" && mount --make-private "$dir" &&
	mkdir "$w" "$jail" && mount -t tmpfs work "$w" || exit 1

echo "# $(date -u '+%F %T UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)," \
	"kernel $(uname -r), $rounds rounds, medians," \
	"libshare on the ABI of ${LEGACY_SIM_PROFILE:-this kernel}"
start_broker >/dev/null || exit 1

on() { [[ $only == *" $1 "* ]]; }

on 1 && {
echo "== 1. single operations, 0 receivers, $n per round (us/op)"
pair single_bind "$ops" single bind 0 "$n" "$w"
row "bind mount(2)" single_bind mount 20
row "umount2 of it" single_bind umount 20
pair single_tmpfs "$ops" single tmpfs 0 "$n" "$w"
row "tmpfs mount(2)" single_tmpfs mount 10
row "umount2 of it" single_tmpfs umount 20
pair single_detach "$ops" single bind detach "$n" "$w"
row "umount2 MNT_DETACH (bind)" single_detach umount 10
pair exec_bind "$ops" exec bind $((n / 5 + 1)) "$w"
row "mount --bind (process)" exec_bind mount 1.2
row "umount (process)" exec_bind umount 1.2
pair exec_tmpfs "$ops" exec tmpfs $((n / 5 + 1)) "$w"
row "mount -t tmpfs (process)" exec_tmpfs mount 1.2
row "umount (process)" exec_tmpfs umount 1.2
}

on 4 && {
echo "== 4. umount2 with extra sleeping processes ($(ls -d /proc/[0-9]* 2>/dev/null | wc -l) now; us/op)"
for k in 0 250 1000; do
	idle_start "$k" || break
	pair "idle_$k" "$ops" single bind 0 "$n" "$w"
	idle_stop
	row "umount2, $k extra" "idle_$k" umount -
done
against "libshare umount2, 1000 extra vs 0" idle_1000 idle_0 umount 1.2
}

on 5 && {
echo "== 5. bind+umount pairs per second, $secs s per round (higher is better)"
for c in 1 4 16; do
	pair "tput_$c" "$ops" tput "$c" "$secs" "$w"
	share "$c clients" "tput_$c" pairs/s 10
done
}

on 2 && {
echo "== 2. fan-out: a bind on a shared mount received by N slave binds, then its umount2"
mkdir "$dir/r"
for f in ${BENCH_FAN:-1 10 100 1000}; do
	pair "fan_$f" "$ops" fan "$f" "$w" "$dir/r"
	fanrow "fan_$f" "$f"
done
}

on 3 || sizes=
for m in $sizes; do
	echo "== 3, 6. $m unrelated mounts (a jail of $m tmpfs)"
	stop_broker
	make_jail "$m" || exit 1
	start_broker "$m" || exit 1
	pair "m_$m" "$ops" single bind 0 $((n / 2 + 1)) "$w"
	row "bind mount(2), M=$m" "m_$m" mount -
	row "umount2 of it, M=$m" "m_$m" umount -
	pair "mt_$m" "$ops" single tmpfs 0 $((n / 2 + 1)) "$w"
	row "tmpfs mount(2), M=$m" "mt_$m" mount -
	row "umount2 of it, M=$m" "mt_$m" umount -
	reads=$((200000 / m + 2))
	tpair "read_$m" "$tab" read "$reads" "$jail"
	row "mountinfo read, M=$m" "read_$m" ns/op 2
	BENCH_BROKER_PID=$(broker_pid) tpair "poll_$m" "$tab" poll 20000 "$jail"
	row "mountinfo poll(2), M=$m" "poll_$m" poll -
	row "mountinfo epoll_wait, M=$m" "poll_$m" epoll -
	broker_cpu "poll_$m"
done
first=${sizes%% *} last=${sizes##* }
[[ $sizes ]] && {
against "libshare bind, M=$last vs M=$first" "m_$last" "m_$first" mount 1.3
against "libshare umount2, M=$last vs M=$first" "m_$last" "m_$first" umount 1.3
against "libshare tmpfs, M=$last vs M=$first" "mt_$last" "mt_$first" mount 1.3
against "libshare its umount2, M=$last vs M=$first" "mt_$last" "mt_$first" umount 1.3
}
echo "# done $(date -u '+%T UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
