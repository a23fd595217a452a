#!/bin/bash
# test/bench/run.sh [MOUNTS] - the mount-table benchmark (issue 4 item 5).
# A benchmark, not a test (not in TESTS): it prints times and ratios.
#
# 1. open+close of an ordinary file (/etc/hostname), BENCH_OPENS (default
#    200000) times per round, without and with libshare.so preloaded,
#    alternating for BENCH_ROUNDS (default 7) rounds; the medians and the
#    overhead (target: at most 2%).
# 2. A full read of /proc/self/mountinfo chrooted in a jail of MOUNTS
#    (default 1000) mounts, BENCH_READS (default 200) reads per round,
#    alternating: the kernel's own (through a /proc descriptor opened before
#    the chroot: the jail has no /proc) against the shim's (libshare.so
#    preloaded, served by the broker), and the broker's share alone
#    (LS_OP_MOUNTTABLE asked directly); the medians and ratios (target:
#    the shim within 3x of the kernel).  Without table wrappers in the shim
#    (nm -D: no fopen) the shim row says so instead.  The shim's table is
#    measured twice: served live from the broker's FUSE filesystem (now),
#    and as a snapshot file (a second broker with --no-fuse: before issue
#    13 item 3, and what a kernel without FUSE gets).
# 3. Other descriptors: pread of a file, poll and epoll_wait of a pipe,
#    without and with libshare.so, alternating: the shim must not change
#    their cost (it wraps none of them; target: within noise, <= 2%).
# 4. Change notification: a tmpfs mounted and unmounted BENCH_NOTIFY
#    (default 200) times each, timed from the mount(2)/umount(2) call to
#    the EPOLLPRI event on an open /proc/self/mountinfo: the kernel's own
#    (before the broker starts) against the shim's table, whose mount goes
#    through the broker.
#
# Needs root: it runs in a private mount namespace of its own, on a tmpfs
# sandbox made private before the broker starts (as broker-run.sh does);
# the jail's mounts are made first and imported by the broker, which runs
# under legacy-sim with a socket and state directory of its own, and is
# stopped at the end; nothing stays mounted.
# Environment: BENCH_BIN (where mounttable-bench is; default this
# directory), SHAREBROKERD, SHARECTL, LIBSHARE_SO, LEGACY_SIM (default: this
# tree).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$here/../..
source "$top/test/lib/holder.bash"
bin=${BENCH_BIN:-$here}/mounttable-bench
SHAREBROKERD=${SHAREBROKERD:-$top/daemon/sharebrokerd}
SHARECTL=${SHARECTL:-$top/daemon/sharectl}
LIBSHARE_SO=${LIBSHARE_SO:-$top/shim/libshare.so}
LEGACY_SIM=${LEGACY_SIM:-$top/test/legacy/legacy-sim}
mounts=${1:-1000}
opens=${BENCH_OPENS:-200000} rounds=${BENCH_ROUNDS:-7} reads=${BENCH_READS:-200}
notify=${BENCH_NOTIFY:-200}

if ((EUID != 0)); then
	echo "run.sh: needs root (a private mount namespace, real mounts)" >&2
	exit 1
fi
for p in "$bin" "$SHAREBROKERD" "$SHARECTL" "$LIBSHARE_SO" "$LEGACY_SIM"; do
	[[ -x $p || -e $p ]] || { echo "run.sh: $p is missing (make check builds it)" >&2; exit 1; }
done
LIBSHARE_SO=$(cd "$(dirname "$LIBSHARE_SO")" && pwd)/$(basename "$LIBSHARE_SO")
if [[ ${BENCH_NS:-} != $$ ]]; then
	BENCH_NS=$$ exec unshare -m --propagation private bash "$0" "$@"
fi

# The median of the numbers on stdin.
median() {
	sort -g | awk '{ a[NR] = $1 } END {
		if (NR % 2) print a[(NR + 1) / 2]
		else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
ns() { awk '{ print $2 }'; }

echo "== open+close /etc/hostname, $opens per round, $rounds rounds (median ns/op)"
: >/tmp/bench-plain.$$ ; : >/tmp/bench-shim.$$
for ((r = 0; r < rounds; r++)); do
	"$bin" open "$opens" | ns >>/tmp/bench-plain.$$
	LD_PRELOAD=$LIBSHARE_SO "$bin" open "$opens" | ns >>/tmp/bench-shim.$$
done
plain=$(median </tmp/bench-plain.$$) shim=$(median </tmp/bench-shim.$$)
rm -f /tmp/bench-plain.$$ /tmp/bench-shim.$$
awk -v p="$plain" -v s="$shim" 'BEGIN {
	printf "without shim %10.1f ns/op\nwith shim    %10.1f ns/op\n", p, s
	printf "overhead     %+9.2f %%   (target <= 2%%)\n", (s / p - 1) * 100 }'

echo "== read, poll, epoll_wait of descriptors that are not a mount table, $opens per round (median ns/op)"
: >/tmp/bench-io-p.$$ ; : >/tmp/bench-io-s.$$
for ((r = 0; r < rounds; r++)); do
	"$bin" io "$opens" >>/tmp/bench-io-p.$$
	LD_PRELOAD=$LIBSHARE_SO "$bin" io "$opens" >>/tmp/bench-io-s.$$
done
for col in read poll epoll; do
	p=$(awk -v c=$col '{ for (i = 3; i < NF; i += 2) if ($i == c) print $(i + 1) }' \
		/tmp/bench-io-p.$$ | median)
	s=$(awk -v c=$col '{ for (i = 3; i < NF; i += 2) if ($i == c) print $(i + 1) }' \
		/tmp/bench-io-s.$$ | median)
	awk -v c=$col -v p="$p" -v s="$s" 'BEGIN {
		printf "%-6s without shim %8.1f  with shim %8.1f  overhead %+6.2f %%\n",
			c, p, s, (s / p - 1) * 100 }'
done
echo "target: within noise (<= 2%): the shim wraps none of them"
rm -f /tmp/bench-io-p.$$ /tmp/bench-io-s.$$

dir=$(mktemp -d "${TMPDIR:-/tmp}/libshare-bench.XXXXXX") || exit 1
state=$dir/state jail=$dir/jail sock=@libshare-bench-$$
snapstate=$dir/snapstate snapsock=@libshare-bench-snap-$$
export LIBSHARE_SOCKET=$sock
cleanup() {
	timeout 10 "$SHARECTL" --socket "$sock" stop >/dev/null 2>&1
	timeout 10 "$SHARECTL" --socket "$snapsock" stop >/dev/null 2>&1
	sleep 0.2
	end_holders "$state" "$snapstate"  # one kept covered mounts
	umount -R -l "$dir" 2>/dev/null
	rmdir "$dir"
}
trap cleanup EXIT
mount -t tmpfs sandbox "$dir" && mount --make-private "$dir" || exit 1
mkdir "$dir/notify" || exit 1
kn=$("$bin" notify "$notify" "$dir/notify") || exit 1
mkdir "$jail" && "$bin" mkjail "$jail" "$mounts" || exit 1
"$LEGACY_SIM" "$SHAREBROKERD" --socket "$sock" --state-dir "$state" \
	--log "$state/sharebrokerd.log" ||
	{ echo "run.sh: sharebrokerd did not start" >&2; exit 1; }
"$LEGACY_SIM" "$SHAREBROKERD" --socket "$snapsock" --state-dir "$snapstate" \
	--no-fuse || { echo "run.sh: sharebrokerd --no-fuse did not start" >&2; exit 1; }
timeout 10 "$SHARECTL" status

echo "== full read of mountinfo in a jail of $mounts mounts, $reads per round, $rounds rounds (median us/read)"
wrapped=0
nm -D --defined-only "$LIBSHARE_SO" 2>/dev/null | grep -qE ' fopen(@|$)' &&
	wrapped=1
: >/tmp/bench-k.$$ ; : >/tmp/bench-s.$$ ; : >/tmp/bench-b.$$ ; : >/tmp/bench-n.$$
for ((r = 0; r < rounds; r++)); do
	"$bin" read "$reads" "$jail" kernel >>/tmp/bench-k.$$
	((wrapped)) && LD_PRELOAD=$LIBSHARE_SO "$bin" read "$reads" "$jail" shim \
		>>/tmp/bench-s.$$
	((wrapped)) && LIBSHARE_SOCKET=$snapsock LD_PRELOAD=$LIBSHARE_SO \
		"$bin" read "$reads" "$jail" shim >>/tmp/bench-n.$$
	"$bin" read "$reads" "$jail" broker >>/tmp/bench-b.$$
done
row() { # LABEL FILE
	local t
	t=$(ns <"$2" | median)
	awk -v l="$1" -v t="$t" -v k="$kernel" -v info="$(tail -1 "$2" |
		cut -d' ' -f3-)" 'BEGIN {
		printf "%-28s %10.1f us/read  %5.2fx kernel  (%s)\n", l, t / 1000,
			t / k, info }'
}
kernel=$(ns </tmp/bench-k.$$ | median)
row "kernel (chrooted, /proc fd)" /tmp/bench-k.$$
if ((wrapped)); then
	row "shim, live (FUSE)" /tmp/bench-s.$$
	row "shim, snapshot (--no-fuse)" /tmp/bench-n.$$
else
	echo "shim (virtual table)         not measured: libshare.so has no mount-table wrappers yet"
fi
row "broker alone (MOUNTTABLE)" /tmp/bench-b.$$
echo "target: shim within 3x of the kernel"
rm -f /tmp/bench-k.$$ /tmp/bench-s.$$ /tmp/bench-b.$$ /tmp/bench-n.$$
# Two brokers must not share a namespace while mounts change: each takes
# the other's new mounts for drift and holds them (umount: EBUSY).
timeout 10 "$SHARECTL" --socket "$snapsock" stop >/dev/null 2>&1
sleep 0.2

echo "== change notification: $notify mounts and umounts of a tmpfs (mean us, from the call)"
sn=$(LD_PRELOAD=$LIBSHARE_SO "$bin" notify "$notify" "$dir/notify") || exit 1
awk -v k="$kn" -v s="$sn" 'BEGIN {
	split(k, a, " "); split(s, b, " ")
	printf "kernel        call %8.1f us  event %8.1f us  missed %d\n",
		a[4] / 1000, a[2] / 1000, a[6]
	printf "shim (FUSE)   call %8.1f us  event %8.1f us  missed %d\n",
		b[4] / 1000, b[2] / 1000, b[6]
	printf "the event after the call returned: kernel %.1f us, shim %.1f us\n",
		(a[2] - a[4]) / 1000, (b[2] - b[4]) / 1000 }'
