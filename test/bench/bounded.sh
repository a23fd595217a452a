#!/bin/bash
# test/bench/bounded.sh [PAIRS [ROOTS [REQS]]] - the long run of the
# bounded-resources test (issue 9 item 8): test/broker/broker-bounded.bats
# with PAIRS propagating mount/umount pairs (default 100000) and ROOTS
# roots of REQS requests each (defaults 5000 and 10: 100,000 requests).  A
# benchmark, not a test (make check runs the same file with 300 pairs and
# 100 roots): it prints the state directory's entries, the broker's
# descriptors and VmRSS before and after, and ok or not ok.
#
# Needs root and a built tree (make check TESTS= builds the programs);
# LIBSHARE_BUILDDIR for a VPATH build.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if ((EUID != 0)); then
	echo "bounded.sh: needs root (a private mount namespace, real mounts)" >&2
	exit 1
fi
export BOUNDED_PAIRS=${1:-100000} BOUNDED_ROOTS=${2:-5000} BOUNDED_REQS=${3:-10}
start=$SECONDS
unshare -m --propagation private bats --tap --show-output-of-passing-tests \
	"$here/../broker/broker-bounded.bats" | grep -v '^# sharebrokerd: mount'
rc=${PIPESTATUS[0]}
echo "bounded.sh: $BOUNDED_PAIRS pairs, $BOUNDED_ROOTS roots x $BOUNDED_REQS" \
	"requests, $((SECONDS - start)) s, exit $rc"
exit "$rc"
