# test/bench/perf-profile.sh - perf.sh's profiles (sourced): with
# BENCH_PROFILE=DIR, perf(1) records the broker during the libshare rounds
# of every pair perf.sh runs (the kernel rounds between them are left out:
# the recording is enabled and disabled around each libshare round through
# perf record's control fifo), and during each broker start.  For each pair
# NAME (the first word after "pair" or "tpair" in perf.sh: single_bind,
# m_100000, read_1000...; start_M for the start with M mounts) DIR holds
#   NAME.data    perf record's data, for perf report -i / perf script -i
#   NAME.txt     perf report --stdio: symbols by inclusive (children) time
#   NAME.folded  the stacks folded, one "frame;frame;... count" a line
#   NAME.svg     a flame graph, when FlameGraph's flamegraph.pl is on PATH
# BENCH_PROFILE_CALLGRAPH is perf record's --call-graph (default dwarf:
# the broker is built without frame pointers).  A profile slows the rows
# it records: their figures are for reading the profile beside, not for
# comparing with a run without one.

profile=${BENCH_PROFILE:-} prof_pid= prof_name= prof_ctl= prof_ack=
prof_graph=${BENCH_PROFILE_CALLGRAPH:-dwarf}

prof_check() {
	[[ $profile ]] || return 0
	command -v perf >/dev/null ||
		{ echo "perf.sh: BENCH_PROFILE needs perf(1)" >&2; return 1; }
	mkdir -p "$profile" && profile=$(cd "$profile" && pwd)
}

# prof_begin NAME: perf record attached to the broker, started disabled.
# The fifos are opened read-write, which never blocks, before perf opens
# them; each command then waits for perf's ack.
prof_begin() {
	local pid
	[[ $profile ]] && pid=$(broker_pid) || return 0
	prof_name=$1
	rm -f "$dir/prof.ctl" "$dir/prof.ack"
	mkfifo "$dir/prof.ctl" "$dir/prof.ack" || return 1
	exec {prof_ctl}<>"$dir/prof.ctl" {prof_ack}<>"$dir/prof.ack"
	perf record -q -o "$profile/$1.data" --call-graph "$prof_graph" -D -1 \
		--control "fifo:$dir/prof.ctl,$dir/prof.ack" -p "$pid" \
		2>"$profile/$1.log" &
	prof_pid=$!
}

# prof_cmd enable|disable: around one libshare round.
prof_cmd() {
	[[ $prof_pid ]] || return 0
	echo "$1" >&"$prof_ctl"
	read -r -t 30 -u "$prof_ack" _ ||
		echo "perf.sh: perf record did not answer $1" >&2
}

# prof_end: stop the recording and write NAME's report and stacks.
prof_end() {
	[[ $prof_pid ]] || return 0
	kill -INT "$prof_pid"
	wait "$prof_pid"
	exec {prof_ctl}>&- {prof_ack}>&-
	rm -f "$dir/prof.ctl" "$dir/prof.ack"
	prof_pid=
	prof_report "$prof_name"
}

# prof_start_broker NAME COMMAND...: COMMAND (the broker's start, which
# returns once the daemon it forks is ready) recorded whole, its children
# included.
prof_start_broker() {
	local name=$1
	shift
	[[ $profile ]] || { "$@"; return; }
	perf record -q -o "$profile/$name.data" --call-graph "$prof_graph" \
		-- "$@" 2>"$profile/$name.log"
	local rc=$?
	prof_report "$name"
	return $rc
}

prof_report() {
	local p=$profile/$1
	perf report -i "$p.data" --stdio --children -g none \
		-F overhead_children,overhead,sym --percent-limit 0.5 \
		>"$p.txt" 2>>"$p.log"
	perf script -i "$p.data" -F comm,ip,sym 2>>"$p.log" | prof_fold >"$p.folded"
	command -v flamegraph.pl >/dev/null &&
		flamegraph.pl --title "$1" "$p.folded" >"$p.svg" 2>>"$p.log"
	echo "# profile $1: $p.txt"
}

# perf script's samples (a line naming the command, then a frame a line,
# innermost first, then a blank line) folded as flamegraph.pl reads them.
prof_fold() {
	awk '/^\t/ || /^ +[0-9a-f]+ / {
		s = $2; sub(/\+0x[0-9a-f]+$/, "", s); f[++n] = s; next }
	NF == 0 { if (n) { k = comm; for (i = n; i > 0; i--) k = k ";" f[i]
			c[k]++ }
		n = 0; next }
	{ comm = $1; n = 0 }
	END { if (n) { k = comm; for (i = n; i > 0; i--) k = k ";" f[i]; c[k]++ }
		for (k in c) print k, c[k] }' | sort
}
