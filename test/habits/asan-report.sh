#!/bin/sh
# asan-report.sh DIR STATUS: make check-asan's verdict.  DIR holds a file
# per process that ASan or UBSan reported on (log_path); STATUS is make
# check's.  Prints each report and the count; fails on either.
dir=$1
status=$2
n=0
for f in "$dir"/*; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	echo "--- $f"
	cat "$f"
done
echo "check-asan: $n sanitizer report(s), make check status $status"
[ "$n" -eq 0 ] && [ "$status" -eq 0 ]
