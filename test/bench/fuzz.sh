#!/bin/bash
# test/bench/fuzz.sh [CASES [SEED]] - the protocol fuzzer's long run (issue 9
# item 9): test/fuzz/wirefuzz.bats with CASES cases (default 100000), seed
# SEED (default: the time).  A benchmark, not a test (not in TESTS; make
# check runs the same file with 10,000): it prints the seed, each part's
# cases per second and outcome counts, the broker's descriptors and VmRSS
# before and after, and ok or not ok.  A bad case prints the wirefuzz line
# that replays it.
#
# Needs root and a built tree (make check TESTS= builds the programs);
# LIBSHARE_BUILDDIR for a VPATH build.  It runs in a private mount
# namespace of its own, as make check does.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if ((EUID != 0)); then
	echo "fuzz.sh: needs root (a private mount namespace, real mounts)" >&2
	exit 1
fi
export LIBSHARE_FUZZ_CASES=${1:-100000}
export LIBSHARE_FUZZ_SEED=${2:-$(date +%s)}
start=$SECONDS
unshare -m --propagation private bats --tap "$here/../fuzz/wirefuzz.bats" |
	grep -v '^# sharebrokerd: \(pid\|refused\)'
rc=${PIPESTATUS[0]}
t=$((SECONDS - start))
echo "fuzz.sh: $LIBSHARE_FUZZ_CASES cases, seed $LIBSHARE_FUZZ_SEED," \
	"$t s in all ($((LIBSHARE_FUZZ_CASES / (t > 0 ? t : 1))) cases/s with" \
	"the broker's start and stop), exit $rc"
exit "$rc"
