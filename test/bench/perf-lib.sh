# test/bench/perf-lib.sh - perf.sh's helpers (sourced): the broker, the
# alternating rounds and the rows.  Results go to $dir/res/NAME.k (kernel)
# and NAME.s (libshare), one line of "name value" pairs per round.

# The median of the numbers on stdin.
median() {
	sort -g | awk '{ a[NR] = $1 } END {
		if (NR == 0) print "nan"
		else if (NR % 2) print a[(NR + 1) / 2]
		else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# The median of column KEY of result FILE.
col() {
	awk -v k="$1" '{ for (i = 1; i < NF; i += 2) if ($i == k) print $(i + 1) }' \
		"$2" | median
}

# The broker's pid (not holder.pid's, which sorts first: with it the
# broker was never stopped and outlived every run).
broker_pid() {
	local p
	# the broker's own: holder.pid ("PID FD") names its holder, and
	# sorts first where covered mounts make the broker start one
	p=$(cat "$state"/sharebrokerd.pid 2>/dev/null | head -1)
	[[ $p && -d /proc/$p ]] && echo "$p"
}

# A broker on a fresh state directory (the jail changed while it was
# stopped); with M, its start time and resident size are printed.
start_broker() {
	local t0 t1 pid rss
	state=$dir/state.${1:-0}
	rm -rf "$state"
	t0=$(date +%s%N)
	prof_start_broker "start_${1:-0}" "$LEGACY_SIM" "$SHAREBROKERD" \
		--socket "$sock" --state-dir "$state" \
		--log "$state/sharebrokerd.log" ${BENCH_BROKER_ARGS:-} ||
		{ echo "perf.sh: sharebrokerd did not start" >&2; return 1; }
	t1=$(date +%s%N)
	pid=$(broker_pid)
	rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
	[[ ${1:-} ]] && awk -v t=$(((t1 - t0) / 1000)) -v r="${rss:-0}" -v m="$1" 'BEGIN {
		printf "%-30s %10.3f s  RSS %8.0f KiB  %7.2f KiB/mount  (target <= 2 s, <= 1 KiB/mount at 100k)\n",
			"broker start, M=" m, t / 1e6, r, r / m }'
	return 0
}

stop_broker() {
	local pid i
	pid=$(broker_pid) || return 0
	timeout 10 "$SHARECTL" --socket "$sock" stop >/dev/null 2>&1
	for ((i = 0; i < 100; i++)); do
		[[ -d /proc/$pid ]] || break
		sleep 0.05
	done
}

cleanup() {
	prof_end
	idle_stop
	stop_broker
	umount -l "$dir" 2>/dev/null
	rm -rf "$dir"
	[[ ${mount_max:-} ]] && echo "$mount_max" >/proc/sys/fs/mount-max
}

# A jail of M tmpfs mounts at $jail, made natively (no broker running).
make_jail() {
	umount -l "$jail" 2>/dev/null   # the whole tree goes; -R is quadratic
	mount_room "$1" && "$tab" mkjail "$jail" "$1" >/dev/null
}

# fs.mount-max counts the mounts of each namespace, and the sandbox's
# holds the jail's M beside its own.  The setting is global, not the
# namespace's: it is raised only when M needs it, and put back at exit.
mount_room() {
	local now want=$(($1 + $(wc -l </proc/self/mountinfo) + 2000))
	now=$(cat /proc/sys/fs/mount-max) || return 1
	((want > now)) || return 0
	mount_max=${mount_max:-$now}
	echo "$want" >/proc/sys/fs/mount-max || return 1
	echo "# fs.mount-max raised from $now to $want for M=$1 (put back at exit)"
}

# COMMAND through libshare.so.  With LEGACY_SIM_PROFILE (an older
# kernel's ABI: legacy-sim reads it, the broker's too) COMMAND runs under
# the same simulation as the broker, so that the shim's fallbacks count.
shimmed() {
	if [[ ${LEGACY_SIM_PROFILE:-} ]]; then
		"$LEGACY_SIM" env LD_PRELOAD="$LIBSHARE_SO" "$@"
	else
		LD_PRELOAD=$LIBSHARE_SO "$@"
	fi
}

# pair NAME COMMAND...: rounds of COMMAND natively (a mount namespace of
# its own, the same layout) then through libshare.so.
pair() {
	local name=$1 r
	shift
	mkdir -p "$dir/res"
	: >"$dir/res/$name.k"
	: >"$dir/res/$name.s"
	prof_begin "$name"
	for ((r = 0; r < rounds; r++)); do
		unshare -m --propagation unchanged "$@" >>"$dir/res/$name.k" ||
			echo "perf.sh: $name: kernel round failed" >&2
		prof_cmd enable
		shimmed "$@" >>"$dir/res/$name.s" ||
			echo "perf.sh: $name: libshare round failed" >&2
		prof_cmd disable
	done
	prof_end
}

# tpair NAME mounttable-bench read N JAIL: the kernel's table (chrooted,
# a /proc descriptor) against the shim's.
tpair() {
	local name=$1 r
	shift
	mkdir -p "$dir/res"
	: >"$dir/res/$name.k"
	: >"$dir/res/$name.s"
	prof_begin "$name"
	for ((r = 0; r < rounds; r++)); do
		"$@" kernel >>"$dir/res/$name.k"
		prof_cmd enable
		shimmed "$@" shim >>"$dir/res/$name.s"
		prof_cmd disable
	done
	prof_end
}

# row LABEL NAME KEY TARGET: kernel and libshare medians (us) and ratio.
row() {
	local k s
	k=$(col "$3" "$dir/res/$2.k") s=$(col "$3" "$dir/res/$2.s")
	awk -v l="$1" -v k="$k" -v s="$s" -v t="$4" 'BEGIN {
		printf "%-30s kernel %10.1f us  libshare %10.1f us  %8.1fx", l,
			k / 1000, s / 1000, s / k
		print t == "-" ? "" : "  (target <= " t "x)" }'
}

# broker_cpu NAME: the broker's CPU time per call in libshare's rounds of
# mounttable-bench poll (the kernel answers from a counter in the caller).
broker_cpu() {
	awk -v p="$(col broker_poll "$dir/res/$1.s")" \
		-v e="$(col broker_epoll "$dir/res/$1.s")" 'BEGIN {
		printf "%-30s poll(2) %8.2f us  epoll_wait %8.2f us  per call while nothing changes\n",
			"broker CPU, libshare", p / 1000, e / 1000 }'
}

# against LABEL A B KEY TARGET: libshare's A over its B.
against() {
	local a b
	a=$(col "$4" "$dir/res/$2.s") b=$(col "$4" "$dir/res/$3.s")
	awk -v l="$1" -v a="$a" -v b="$b" -v t="$5" 'BEGIN {
		printf "%-42s %10.1f / %10.1f us  %6.2fx  (target <= %sx)\n", l,
			a / 1000, b / 1000, a / b, t }'
}

# share LABEL NAME KEY PCT: libshare's rate as a share of the kernel's.
share() {
	local k s
	k=$(col "$3" "$dir/res/$2.k") s=$(col "$3" "$dir/res/$2.s")
	awk -v l="$1" -v k="$k" -v s="$s" -v t="$4" 'BEGIN {
		printf "%-30s kernel %10.0f /s  libshare %10.1f /s  %6.2f%%  (target >= %s%%)\n",
			l, k, s, s / k * 100, t }'
}

# K sleeping processes until idle_stop.
idle_start() {
	idle=
	(($1)) || return 0
	coproc IDLE { exec "$ops" idle "$1"; }
	idle=$IDLE_PID
	read -r -u "${IDLE[0]}" _ _ || return 1
}

idle_stop() {
	[[ $idle ]] || return 0
	kill -KILL "$idle" 2>/dev/null
	wait "$idle" 2>/dev/null
	idle=
}

# fanrow NAME N: item 2's rows: the propagated mount and umount per copy
# against the kernel's floor (N plain calls, measured in the kernel round),
# and the receivers' setup per call against the kernel's.
fanrow() {
	local k=$dir/res/$1.k s=$dir/res/$1.s
	awk -v n="$2" -v km="$(col mount "$k")" -v sm="$(col mount "$s")" \
		-v fm="$(col floor_mount "$k")" -v ku="$(col umount "$k")" \
		-v su="$(col umount "$s")" -v fu="$(col floor_umount "$k")" \
		-v fs="$(col floor_umount_seq "$k")" \
		-v ks="$(col setup "$k")" -v ss="$(col setup "$s")" 'BEGIN {
		printf "N=%-5d mount  kernel %9.1f us  libshare %9.1f us  floor %9.1f us  %6.2fx floor  (target <= 1.5x)\n",
			n, km / 1000, sm / 1000, fm * n / 1000, sm / (fm * n)
		printf "N=%-5d umount kernel %9.1f us  libshare %9.1f us  floor %9.1f us  %6.2fx floor  (target <= 1.5x)\n",
			n, ku / 1000, su / 1000, fu * n / 1000, su / (fu * n)
		printf "N=%-5d umount floor from one thread %9.1f us: libshare %6.2fx that\n",
			n, fs * n / 1000, su / (fs * n)
		printf "N=%-5d setup per call  kernel %7.1f us  libshare %9.1f us  %7.1fx  (target <= 20x)\n",
			n, ks / 1000, ss / 1000, ss / ks }'
}
