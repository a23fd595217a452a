#!/bin/sh
# tree.sh DISTDIR BUILDDIR [CFLAGS]: the sanitized and instrumented builds
# of test/habits/include.am.  Brings BUILDDIR up to date with DISTDIR (a
# fresh make distdir, removed after: only files newer than the copy's are
# copied, so make rebuilds only what changed), configures it once, and
# builds the preload objects with CFLAGS (default: plain -g -O2).
set -e
src=$1
dir=$2
cflags=${3:--g -O2}
mkdir -p "$dir"
cp -pRu "$src"/. "$dir"/
rm -rf "$src"
cd "$dir"
[ -f Makefile ] || ./configure --quiet
${MAKE:-make} --no-print-directory CFLAGS="$cflags" shim/libshare.so \
	test/diff/spy.so
