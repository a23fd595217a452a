#!/bin/sh
# shimbuild.sh SRCDIR DIR CONFIGURE-ARGS...: the shim alone, built as a user
# would build it for another architecture or libc (./configure --host=...
# or CC=musl-gcc, then make), in DIR from a copy of SRCDIR's build files.
# The copy is needed because automake refuses a second build beside an
# in-tree one; it keeps the files' times, so that nothing is regenerated.
# A later run reuses DIR's configuration and rebuilds only what changed.
# Prints the path of the built libshare.so.  Needs flock (util-linux).
set -e
src=$1 dir=$2
shift 2
mkdir -p "$dir"
# One build of DIR at a time: make -j check runs tests side by side.
exec 9>"$dir.lock"
flock 9
# Not into builds: these (DIR may be under SRCDIR) and distcheck's _build.
(cd "$src" && find . \( -path '*/test/cross/build' -o -name _build \) -prune \
	-o -type f \( -name '*.am' -o -path './shim/*' -o -path './include/*' \
	-o -path './build-aux/*' \) -print |
	grep -v -e '\.o$' -e '\.so$' -e '/\.deps/' -e '\.dirstamp$' |
	tar -cf - -T - configure configure.ac aclocal.m4 Makefile.in \
		daemon/engine/engine.h) | (cd "$dir" && tar -xpf -)
cd "$dir"
if [ ! -f config.status ]; then
	./configure --disable-broker "$@" >configure.out 2>&1 ||
		{ tail -n 20 configure.out >&2; exit 1; }
fi
make shim/libshare.so >make.out 2>&1 || { tail -n 30 make.out >&2; exit 1; }
echo "$PWD/shim/libshare.so"
