# Legacy-kernel simulation for bats tests (design.md Principle 4).
#
#   load ../lib/legacy
#   legacy_require            # in setup: fail if unbuilt, skip without seccomp
#   legacy mount --bind a b   # run a command (and all it starts) under it
#
# LEGACY_SIM is the absolute path of the built test/legacy/legacy-sim. It is
# looked for in the build directory: $LIBSHARE_BUILDDIR when set (VPATH
# builds; then only there), else the source tree this file lives in (a plain
# build), else the current directory (make check runs tests from the top
# build directory, which is how distcheck's VPATH build finds it).

# libshare_find PATH: the absolute path of the built PATH (relative to the
# top build directory), found as said above; for the other helpers too.
libshare_find() {
	local top dir dirs
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
	dirs=("$top" "$PWD")
	[ -n "${LIBSHARE_BUILDDIR:-}" ] && dirs=("$LIBSHARE_BUILDDIR")
	for dir in "${dirs[@]}"; do
		if [ -e "$dir/$1" ]; then
			(cd "$dir/${1%/*}" && printf '%s/%s\n' "$(pwd -P)" "${1##*/}")
			return
		fi
	done
	# Not built: name where it was expected, so that the failure says so.
	printf '%s/%s\n' "${LIBSHARE_BUILDDIR:-$top}" "$1"
}

LEGACY_SIM=$(libshare_find test/legacy/legacy-sim)

# A missing binary is a broken build and fails; a kernel without seccomp
# cannot host the simulation and skips.
legacy_require() {
	if [ ! -x "$LEGACY_SIM" ]; then
		echo "legacy-sim not built: $LEGACY_SIM (set LIBSHARE_BUILDDIR)" >&2
		return 1
	fi
	"$LEGACY_SIM" --check || skip "seccomp filters unavailable"
}

legacy() {
	"$LEGACY_SIM" -- "$@"
}
