# helpers.bash: what the jail-examples tests share.
#
#   load helpers
#
# Binaries: SHAREBROKERD, SHARECTL and LIBSHARE_SO (exported, as
# the example scripts take them) come from $LIBSHARE_BUILDDIR when set, else
# from the current directory when it holds a build (make check runs the tests
# from the top build directory: distcheck's VPATH build too), else from the
# source tree.  LEGACY_SIM and legacy CMD come from test/lib/legacy.bash.

load "${BASH_SOURCE[0]%/*}/../test/lib/legacy"

EXAMPLES=$(cd "${BASH_SOURCE[0]%/*}" && pwd -P)
MKJAIL=$EXAMPLES/mkjail.sh

SHAREBROKERD=${SHAREBROKERD:-$(libshare_find daemon/sharebrokerd)}
SHARECTL=${SHARECTL:-$(libshare_find daemon/sharectl)}
LIBSHARE_SO=${LIBSHARE_SO:-$(libshare_find shim/libshare.so)}
export SHAREBROKERD SHARECTL LIBSHARE_SO

# For setup: root, and everything built (a missing binary is a broken build
# and fails; it is not skipped).
require_built() {
	local f
	if ((EUID != 0)); then
		echo "needs root (real mounts)" >&2
		return 1
	fi
	for f in "$SHAREBROKERD" "$SHARECTL" "$LIBSHARE_SO"; do
		if [ ! -e "$f" ]; then
			echo "not built: $f (make check builds it)" >&2
			return 1
		fi
	done
}

# A sandbox of the test's own: a private tmpfs at $S.
sandbox_setup() {
	S=$BATS_TEST_TMPDIR/sb
	mkdir -p "$S"
	mount -t tmpfs sandbox "$S"
	mount --make-private "$S"
}

sandbox_teardown() {
	if [ -n "${S:-}" ] && mountpoint -q "$S"; then
		umount -R -l "$S"
	fi
}

# The kernel's mount points under DIR, one per line.
mounts_under() {
	awk -v d="$1" '$5 == d || index($5, d "/") == 1 { print $5 }' \
		/proc/self/mountinfo
}
