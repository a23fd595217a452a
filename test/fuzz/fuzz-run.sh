#!/bin/sh
# fuzz-run.sh CORPUS_DIR TARGET...: make fuzz (targets.am).  Runs each
# fuzz-build/TARGET for FUZZ_TIME seconds on fuzz-build/corpus-TARGET (where
# it writes what it finds) and CORPUS_DIR/TARGET (the seeds, read only),
# then says how many inputs each ran and whether it crashed.  Exit 1 when
# any target crashed: its input is fuzz-build/TARGET-crash-* (or -leak-,
# -timeout-, -oom-), to fix and then copy into CORPUS_DIR/TARGET.
corpus=$1
shift
time=${FUZZ_TIME:-60}
failed=
summary=
for t; do
	mkdir -p "fuzz-build/corpus-$t"
	eval "extra=\${FUZZ_${t}_ARGS:-}"
	echo "fuzz: $t, $time s"
	# shellcheck disable=SC2086  # the argument lists are word lists
	"fuzz-build/$t" $FUZZ_ARGS $extra -max_total_time="$time" \
		-artifact_prefix="fuzz-build/$t-" "fuzz-build/corpus-$t" \
		"$corpus/$t" > "fuzz-build/$t.log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' \
		"fuzz-build/$t.log")
	cov=$(grep -o 'cov: [0-9]*' "fuzz-build/$t.log" | tail -n 1)
	if [ "$rc" -ne 0 ]; then
		failed="$failed $t"
		tail -n 30 "fuzz-build/$t.log"
	fi
	summary="$summary$t: ${runs:-?} inputs in $time s, $cov, exit $rc
"
done
printf '%s' "$summary"
if [ -n "$failed" ]; then
	echo "fuzz: crashed:$failed (fuzz-build/*.log)"
	exit 1
fi
