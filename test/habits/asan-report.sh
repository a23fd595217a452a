#!/bin/sh
# asan-report.sh DIR STATUS: make check-asan's verdict.  DIR holds a file
# per process that ASan or UBSan wrote to (log_path); STATUS is make
# check's.  A report is an error of either; a warning alone is shown and
# not counted: "ASan is ignoring requested __asan_handle_no_return"
# comes from a process that runs on a stack of its own (clone(2) with a
# stack the broker allocated), which ASan cannot size.  Fails on a
# report or a failed test.
dir=$1
status=$2
n=0
w=0
for f in "$dir"/*; do
	[ -f "$f" ] || continue
	if grep -q 'ERROR: \(Address\|Leak\)Sanitizer\|runtime error:' "$f"
	then
		n=$((n + 1))
		echo "--- $f"
		cat "$f"
	else
		w=$((w + 1))
	fi
done
[ "$w" -gt 0 ] && grep -h 'WARNING' "$dir"/* | sed 's/^==[0-9]*==/  /' |
	sort | uniq -c
echo "check-asan: $n sanitizer report(s) ($w process(es) with warnings" \
	"only), make check status $status"
[ "$n" -eq 0 ] && [ "$status" -eq 0 ]
