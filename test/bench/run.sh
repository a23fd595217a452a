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
#    (nm -D: no fopen) the shim row says so instead.
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
bin=${BENCH_BIN:-$here}/mounttable-bench
SHAREBROKERD=${SHAREBROKERD:-$top/daemon/sharebrokerd}
SHARECTL=${SHARECTL:-$top/daemon/sharectl}
LIBSHARE_SO=${LIBSHARE_SO:-$top/shim/libshare.so}
LEGACY_SIM=${LEGACY_SIM:-$top/test/legacy/legacy-sim}
mounts=${1:-1000}
opens=${BENCH_OPENS:-200000} rounds=${BENCH_ROUNDS:-7} reads=${BENCH_READS:-200}

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

dir=$(mktemp -d "${TMPDIR:-/tmp}/libshare-bench.XXXXXX") || exit 1
state=$dir/state jail=$dir/jail sock=@libshare-bench-$$
export LIBSHARE_SOCKET=$sock
cleanup() {
	timeout 10 "$SHARECTL" --socket "$sock" stop >/dev/null 2>&1
	sleep 0.2
	umount -R -l "$dir" 2>/dev/null
	rmdir "$dir"
}
trap cleanup EXIT
mount -t tmpfs sandbox "$dir" && mount --make-private "$dir" || exit 1
mkdir "$jail" && "$bin" mkjail "$jail" "$mounts" || exit 1
"$LEGACY_SIM" "$SHAREBROKERD" --socket "$sock" --state-dir "$state" \
	--log "$state/sharebrokerd.log" ||
	{ echo "run.sh: sharebrokerd did not start" >&2; exit 1; }
timeout 10 "$SHARECTL" status

echo "== full read of mountinfo in a jail of $mounts mounts, $reads per round, $rounds rounds (median us/read)"
wrapped=0
nm -D --defined-only "$LIBSHARE_SO" 2>/dev/null | grep -qE ' fopen(@|$)' &&
	wrapped=1
: >/tmp/bench-k.$$ ; : >/tmp/bench-s.$$ ; : >/tmp/bench-b.$$
for ((r = 0; r < rounds; r++)); do
	"$bin" read "$reads" "$jail" kernel >>/tmp/bench-k.$$
	((wrapped)) && LD_PRELOAD=$LIBSHARE_SO "$bin" read "$reads" "$jail" shim \
		>>/tmp/bench-s.$$
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
	row "shim (virtual table)" /tmp/bench-s.$$
else
	echo "shim (virtual table)         not measured: libshare.so has no mount-table wrappers yet"
fi
row "broker alone (MOUNTTABLE)" /tmp/bench-b.$$
echo "target: shim within 3x of the kernel"
rm -f /tmp/bench-k.$$ /tmp/bench-s.$$ /tmp/bench-b.$$
