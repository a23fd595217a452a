# Bats helper for the shim of other architectures and libcs (test/cross/):
# the shim built as a user builds it (test/cross/shimbuild.sh: configure
# --host=TRIPLET or CC=musl-gcc), and foreign programs run on this machine.
#
#   load ../lib/legacy       # libshare_find
#   load cross
#   cross_need TARGET        # skip when its compiler (or qemu) is absent
#   cross_shim TARGET        # its libshare.so, built once: $CROSS_SHIM
#   cross_run TARGET PROG... # a dynamic program of TARGET's, run here
#
# TARGET is a GNU triplet of a cross compiler Debian packages
# (aarch64-linux-gnu, i686-linux-gnu, arm-linux-gnueabihf), or musl.
# Builds are kept in the build tree, test/cross/build/TARGET, so that a
# second run rebuilds only what changed.
#
# How a foreign program runs: its own dynamic loader, from the cross
# compiler's sysroot, is started with --library-path (and --preload for the
# shim).  Where the kernel runs that loader itself (an i386 loader on an
# amd64 kernel with IA32 emulation, or a binfmt_misc entry for qemu) it
# does; where exec answers "Exec format error", the loader runs under
# qemu-ARCH-static.  musl programs run natively, with LD_PRELOAD: their
# loader is the host's /lib/ld-musl-x86_64.so.1.

CROSS_SRC=$(cd "${BASH_SOURCE[0]%/*}/../.." && pwd)
CROSS_BUILD=$(dirname "$(dirname "$(libshare_find shim/libshare.so)")")/test/cross/build

# Sets CROSS_CC, CROSS_ARCH (file(1)'s and readelf's machine), CROSS_QEMU
# (qemu-user's name), CROSS_LOADER and CROSS_LIBDIR for TARGET.
cross_target() {
	CROSS_CC=$1-gcc
	case $1 in
	aarch64-linux-gnu)
		CROSS_ARCH=AArch64 CROSS_QEMU=aarch64
		CROSS_LOADER=ld-linux-aarch64.so.1 ;;
	i686-linux-gnu)
		CROSS_ARCH="Intel 80386" CROSS_QEMU=i386
		CROSS_LOADER=ld-linux.so.2 ;;
	arm-linux-gnueabihf)
		CROSS_ARCH=ARM CROSS_QEMU=arm
		CROSS_LOADER=ld-linux-armhf.so.3 ;;
	musl)
		CROSS_CC=musl-gcc CROSS_ARCH="Advanced Micro Devices X86-64"
		CROSS_QEMU= CROSS_LOADER= ;;
	*)
		echo "unknown target $1" >&2
		return 1 ;;
	esac
	CROSS_LIBDIR=
	if [ -n "$CROSS_LOADER" ] && command -v "$CROSS_CC" >/dev/null; then
		CROSS_LIBDIR=$(dirname "$("$CROSS_CC" -print-file-name=libc.so.6)")
	fi
}

# The Debian packages that bring TARGET's compiler, for skip messages.
cross_packages() {
	case $1 in
	musl) echo musl-tools ;;
	i686-linux-gnu) echo gcc-i686-linux-gnu qemu-user-static ;;
	*) echo "gcc-$1 qemu-user-static" ;;
	esac
}

# Skips the test when TARGET's compiler is not installed, or when its
# programs can run neither natively nor under qemu.  Sets CROSS_RUN: the
# command that starts TARGET's loader.
cross_need() {
	local rc
	cross_target "$1" || return 1
	command -v "$CROSS_CC" >/dev/null ||
		skip "no $CROSS_CC (apt-get install $(cross_packages "$1"))"
	CROSS_RUN=()
	[ -n "$CROSS_LOADER" ] || return 0
	[ -x "$CROSS_LIBDIR/$CROSS_LOADER" ] || {
		echo "no $CROSS_LOADER in $CROSS_LIBDIR" >&2
		return 1
	}
	rc=0
	"$CROSS_LIBDIR/$CROSS_LOADER" --version >/dev/null 2>&1 || rc=$?
	if [ "$rc" -ne 126 ]; then
		CROSS_RUN=("$CROSS_LIBDIR/$CROSS_LOADER")
		return 0
	fi
	command -v "qemu-$CROSS_QEMU-static" >/dev/null ||
		skip "$1 programs need qemu-$CROSS_QEMU-static (apt-get install qemu-user-static)"
	CROSS_RUN=("$(command -v "qemu-$CROSS_QEMU-static")"
		   "$CROSS_LIBDIR/$CROSS_LOADER")
}

# Builds TARGET's shim with configure and make (once; then only what
# changed) and sets CROSS_SHIM to it.
cross_shim() {
	local dir=$CROSS_BUILD/$1 args
	cross_target "$1" || return 1
	if [ "$1" = musl ]; then
		args=(CC=musl-gcc)
	else
		args=(--host="$1")
	fi
	CROSS_SHIM=$("$CROSS_SRC/test/cross/shimbuild.sh" "$CROSS_SRC" "$dir" \
		"${args[@]}") || return 1
}

# Compiles the C program SRC for TARGET into the build tree as NAME, with
# CFLAGS; sets CROSS_PROG.
cross_compile() {
	local target=$1 src=$2 name=$3
	shift 3
	cross_target "$target" || return 1
	mkdir -p "$CROSS_BUILD/$target"
	CROSS_PROG=$CROSS_BUILD/$target/$name
	if [ ! "$CROSS_PROG" -nt "$src" ]; then
		"$CROSS_CC" -D_GNU_SOURCE -Wall -O2 -I"$CROSS_SRC/include" \
			"$@" -o "$CROSS_PROG" "$src" || return 1
	fi
}

# Runs the dynamic program PROG of TARGET with ARGS, its shim preloaded
# when SHIM is set (a glibc loader's --preload, or LD_PRELOAD for musl),
# under the command CROSS_WRAP (an array) when set.
cross_run() {
	local target=$1 prog=$2
	shift 2
	cross_target "$target" || return 1
	if [ -z "$CROSS_LOADER" ]; then
		env ${SHIM:+LD_PRELOAD="$SHIM"} ${CROSS_WRAP[@]+"${CROSS_WRAP[@]}"} \
			"$prog" "$@"
		return
	fi
	env -u LD_PRELOAD ${CROSS_WRAP[@]+"${CROSS_WRAP[@]}"} "${CROSS_RUN[@]}" \
		--library-path "$CROSS_LIBDIR" ${SHIM:+--preload "$SHIM"} \
		"$prog" "$@"
}
