#!/bin/bash
# test/bench/load.sh [--seconds N] [--repeat R] - the load test's long run
# (issue 9 item 9): test/fuzz/load.bats, 16 clients in 4 jails and one on
# the host, rounds of R iterations each (default 3) for N seconds (default
# 60), every call checked, then the final state compared with the kernel's.
# A benchmark, not a test (not in TESTS; make check runs one round): it
# prints the rounds, the calls and the time, and ok or not ok.
#
# Needs root and a built tree (make check TESTS= builds the programs);
# LIBSHARE_BUILDDIR for a VPATH build.  It runs in a private mount
# namespace of its own, as make check does.
set -u
here=$(cd "$(dirname "$0")" && pwd)
export LOAD_SECONDS=60 LOAD_REPEAT=3
while (($#)); do
	case $1 in
	--seconds) LOAD_SECONDS=$2; shift ;;
	--repeat) LOAD_REPEAT=$2; shift ;;
	*) echo "usage: load.sh [--seconds N] [--repeat R]" >&2; exit 2 ;;
	esac
	shift
done
if ((EUID != 0)); then
	echo "load.sh: needs root (a private mount namespace, real mounts)" >&2
	exit 1
fi
start=$SECONDS
unshare -m --propagation private bats --tap "$here/../fuzz/load.bats" |
	grep -v '^# sharebrokerd: \(pid\|refused\)'
rc=${PIPESTATUS[0]}
echo "load.sh: $LOAD_SECONDS s of rounds asked, $((SECONDS - start)) s in all, exit $rc"
exit "$rc"
