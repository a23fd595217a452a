#!/bin/sh
# c-only.sh SRCDIR FILE...: the C sources among FILE..., under SRCDIR, one
# a line: an automake source list (headers included) as a compiler's
# arguments, for the fuzz builds of targets.am.
d=$1
shift
for f; do
	case $f in
	*.c) printf '%s/%s\n' "$d" "$f" ;;
	esac
done
