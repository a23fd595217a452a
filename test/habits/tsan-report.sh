#!/bin/sh
# tsan-report.sh DIR STATUS: make check-tsan's verdict.  DIR holds a file
# per process that ThreadSanitizer reported in (log_path; none when none
# did); STATUS is make check's.  Fails on a report or a failed test.
dir=$1
status=$2
n=0
for f in "$dir"/*; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	echo "--- $f"
	cat "$f"
done
echo "check-tsan: $n process(es) with reports, make check status $status"
[ "$n" -eq 0 ] && [ "$status" -eq 0 ]
