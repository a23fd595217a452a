#!/bin/sh
# analyze.sh LOG: make analyze's verdict on gcc -fanalyzer's output.  A
# finding is explained when one of the three lines above the line it
# names, or that line, has a comment that says "-fanalyzer" (why it is a
# false positive); the others are counted, and fail.
log=$1
explained=0
open=0
for at in $(sed -n 's/^\([^ :]*\.[ch]\):\([0-9]*\):[0-9]*: warning: .*\[-Wanalyzer-.*/\1:\2/p' "$log" | sort -u); do
	file=${at%:*}
	line=${at##*:}
	from=$((line > 3 ? line - 3 : 1))
	if sed -n "${from},${line}p" "$file" | grep -q -- '-fanalyzer'; then
		explained=$((explained + 1))
	else
		open=$((open + 1))
		grep -A3 "^$at:[0-9]*: warning:" "$log" | head -n 4
	fi
done
echo "analyze: $open finding(s), $explained explained at their lines (analyze.log)"
[ "$open" -eq 0 ]
