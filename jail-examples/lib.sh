# shellcheck shell=bash
# lib.sh: what the example scripts share (sourced by example*.sh, not run).
#
# An example calls ex_init first.  It then has:
#   $B          its sandbox, a tmpfs of its own under /tmp
#   $SOCK       the socket of its own broker (abstract, unique)
#   ex_jail J   builds the jail $B/J with mkjail.sh (before the broker starts)
#   ex_broker   starts the broker on $SOCK, state in $B/state
#   host CMD    prints and runs CMD on the host through the shim
#               (LD_PRELOAD=libshare.so, LIBSHARE_SOCKET=$SOCK)
#   jail J CMD  prints and runs CMD chrooted in $B/J; the jail's
#               /etc/ld.so.preload loads the shim, LIBSHARE_SOCKET names
#               the broker
#   write, show_dir, show_mounts
#               a file's text put in place; what a side sees in a
#               directory; what findmnt shows on each side, PROPAGATION
#               column included
#   expect_*    the verification: each check prints "ok: WHY", or ends
#               the example with exit 1 and a FAIL line saying what the
#               RFC expected and what was there instead
#   ex_done     the broker stopped, the count of checks passed
# and on exit, whatever happened, the broker is stopped and every mount of
# the sandbox is gone.
#
# Binaries: SHAREBROKERD, SHARECTL and LIBSHARE_SO name them; otherwise the
# ones built beside this directory (../daemon, ../shim), else the installed
# ones (where paths.sh, written by make, says), else PATH.
# Jails of another architecture: EX_ARCH (a Debian architecture) has
# ex_jail build them with mkjail.sh --arch EX_ARCH, the shim EX_ARCH_SHIM
# (built for it) and the downloaded system kept in EX_ARCH_CACHE.

ex_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=/dev/null
. "$ex_here/paths.sh" 2>/dev/null || LS_ROOT='' LS_SBINDIR='' LS_BINDIR='' \
	LS_PKGLIBDIR=''

die() {
	echo "${EX_NAME:-example}: $*" >&2
	exit 1
}

# The first candidate that exists, else nothing (status 1).
first_file() {
	local c
	for c in "$@"; do
		if [[ -n $c && -f $c ]]; then
			echo "$c"
			return 0
		fi
	done
	return 1
}

# pick VAR WHAT CANDIDATE...: VAR keeps its value if set, else takes the
# first candidate that exists; either way it must name a file.
pick() {
	local var=$1 what=$2 path
	shift 2
	path=${!var:-$(first_file "$@")} || true
	[[ -n $path && -f $path ]] ||
		die "$what not found${path:+ at $path}: build it (make) or set $var"
	printf -v "$var" '%s' "$(realpath -- "$path")"
	export "${var?}"
}

ex_find_binaries() {
	pick SHAREBROKERD sharebrokerd "$ex_here/../daemon/sharebrokerd" \
		"${LS_SBINDIR:+$LS_ROOT$LS_SBINDIR/sharebrokerd}" \
		"$(command -v sharebrokerd || true)"
	pick SHARECTL sharectl "$ex_here/../daemon/sharectl" \
		"${LS_BINDIR:+$LS_ROOT$LS_BINDIR/sharectl}" \
		"$(command -v sharectl || true)"
	pick LIBSHARE_SO libshare.so "$ex_here/../shim/libshare.so" \
		"${LS_PKGLIBDIR:+$LS_ROOT$LS_PKGLIBDIR/libshare.so}"
}

# True when some mount of this namespace propagates (a systemd host).
kernel_propagates() {
	awk '$7 ~ /^(shared|master):/ { found = 1 } END { exit !found }' \
		/proc/self/mountinfo
}

# The broker refuses a namespace whose mounts the kernel already
# propagates: run the example in a private copy of it.  That copy also
# takes the sandbox away if the example is killed.  A legacy kernel
# without mount namespaces has nothing shared, and runs it in place.
ex_private_namespace() {
	[[ -n ${LIBSHARE_EXAMPLE_NS:-} ]] && return 0
	if unshare -m --propagation private true 2>/dev/null; then
		export LIBSHARE_EXAMPLE_NS=1
		exec unshare -m --propagation private -- \
			bash "$EX_SCRIPT" "$@"
	fi
	if kernel_propagates; then
		die "the kernel propagates this namespace's mounts and no" \
			"private namespace can be made: run" \
			"'mount --make-rprivate /' first"
	fi
}

# ex_init NAME "$@": the namespace, the binaries, the sandbox, the trap.
ex_init() {
	EX_NAME=$1
	shift
	EX_SCRIPT=$(realpath -- "$0")
	[[ $(id -u) -eq 0 ]] || die "must be run as root"
	ex_private_namespace "$@"
	ex_find_binaries
	MKJAIL=$ex_here/mkjail.sh
	EX_CHECKS=0
	EX_BROKER=
	EX_JAILS=
	SOCK=@libshare-$EX_NAME-$$
	B=$(mktemp -d "/tmp/libshare-$EX_NAME.XXXXXX")
	trap ex_cleanup EXIT
	mount -t tmpfs "$EX_NAME-sandbox" "$B" || die "cannot mount the sandbox"
	echo "== $EX_NAME: sandbox B=$B, broker socket $SOCK"
}

ex_jail() {
	EX_JAILS+=" $1"
	if [[ -n ${EX_ARCH:-} ]]; then
		"$MKJAIL" --arch "$EX_ARCH" --cache "${EX_ARCH_CACHE:-.}" \
			"$B/$1" "${EX_ARCH_SHIM:?EX_ARCH needs EX_ARCH_SHIM}" \
			>/dev/null || die "mkjail.sh --arch $EX_ARCH $B/$1 failed"
		echo "   jail $1: $B/$1 (mkjail.sh --arch $EX_ARCH: its own" \
			"programs, its shim in /etc/ld.so.preload)"
		return
	fi
	"$MKJAIL" "$B/$1" "$LIBSHARE_SO" >/dev/null ||
		die "mkjail.sh $B/$1 failed"
	echo "   jail $1: $B/$1 (mkjail.sh: /usr read-only, shim in" \
		"/etc/ld.so.preload)"
}

# Its warnings about the host's own mounts (covered ones, out of its
# reach) go to $B/state/start.log, shown only if something fails.
ex_broker() {
	mkdir -p "$B/state"
	"$SHAREBROKERD" --socket "$SOCK" --state-dir "$B/state" \
		--log "$B/state/sharebrokerd.log" 2>"$B/state/start.log" ||
		die "sharebrokerd did not start: $(cat "$B/state/start.log")"
	EX_BROKER=started
	echo "   broker: $("$SHARECTL" --socket "$SOCK" status)"
}

# The broker's pid, found by its command line (it detaches): only the
# process started with this example's own socket.
ex_broker_pid() {      # [@]... : not the grep's own argument
	grep -lzx -- "[${SOCK:0:1}]${SOCK:1}" /proc/[0-9]*/cmdline 2>/dev/null |
		sed -n 's|^/proc/\([0-9]*\)/cmdline$|\1|p'
}

ex_stop_broker() {
	local i pid
	[[ -n $EX_BROKER ]] || return 0
	EX_BROKER=
	"$SHARECTL" --socket "$SOCK" stop >/dev/null 2>&1 || true
	for ((i = 0; i < 50; i++)); do
		"$SHARECTL" --socket "$SOCK" status >/dev/null 2>&1 || return 0
		sleep 0.1
	done
	echo "$EX_NAME: the broker did not stop; killing it" >&2
	for pid in $(ex_broker_pid); do
		kill "$pid" 2>/dev/null || true
	done
}

# Mount points under the sandbox, latest first (mountinfo's octal escapes
# decoded by printf %b).
ex_sandbox_mounts() {
	awk -v b="$B" '$5 == b || index($5, b "/") == 1 { print $5 }' \
		/proc/self/mountinfo | tac | while IFS= read -r m; do
		printf '%b\n' "$m"
	done
}

ex_cleanup() {
	local rc=$? m
	trap - EXIT
	set +e
	if [[ $rc -ne 0 ]]; then
		for m in start.log sharebrokerd.log; do
			[[ -s $B/state/$m ]] || continue
			echo "-- the broker's $m:" >&2
			tail -n 20 "$B/state/$m" >&2
		done
	fi
	ex_stop_broker
	ex_sandbox_mounts | while IFS= read -r m; do
		umount -l -- "$m" 2>/dev/null
	done
	rmdir -- "$B" 2>/dev/null
	exit "$rc"
}

# --- doing and showing ----------------------------------------------------

say() {
	echo
	echo "## $*"
}

# Prints a command as one would type it, with the sandbox written as $B.
show_cmd() {
	local who=$1 a line=
	shift
	for a in "$@"; do
		[[ $a == *[[:space:]\"\'\>\<\;\|\&]* ]] && a="'${a//\'/\'\\\'\'}'"
		line+=" $a"
	done
	echo "$who#${line//$B/\$B}"
}

host() {
	show_cmd host "$@"
	LD_PRELOAD=$LIBSHARE_SO LIBSHARE_SOCKET=$SOCK "$@" ||
		die "host command failed: ${*//$B/\$B}"
}

jail() {
	local j=$1
	shift
	show_cmd "$j" "$@"
	env -u LD_PRELOAD LIBSHARE_SOCKET="$SOCK" chroot "$B/$j" "$@" ||
		die "command in jail $j failed: $*"
}

# write WHO PATH TEXT: puts TEXT (plain words) in a file, as the host or
# inside a jail.
write() {
	local who=$1 path=$2 text=$3
	if [[ $who == host ]]; then
		echo "host# echo $text >${path//$B/\$B}"
		echo "$text" >"$path" || die "cannot write $path"
	else
		jail "$who" sh -c "echo $text >$path"
	fi
}

# What a side sees in a directory: its entries, with the text of each
# file.  WHO is "host" (PATH under $B) or a jail's name (PATH in the jail).
listing() {
	local who=$1 path=$2
	# shellcheck disable=SC2016 # expanded by the sh that runs it
	local script='cd "$1" 2>/dev/null || { echo "(no such directory)"; exit; }
		for f in * .[!.]*; do
			[ -e "$f" ] || continue
			if [ -f "$f" ]; then printf "%s=\"%s\" " "$f" "$(cat "$f")"
			else printf "%s/ " "$f"; fi
		done'
	if [[ $who == host ]]; then
		sh -c "$script" sh "$path"
	else
		env -u LD_PRELOAD chroot "$B/$who" sh -c "$script" sh "$path"
	fi
}

show_dir() {
	local who=$1 path=$2
	printf '   %-6s %-22s %s\n' "$who:" "${path//$B/\$B}" \
		"$(listing "$who" "$path")"
}

# What findmnt shows on each side, through the shim: the broker's table,
# with the PROPAGATION column the kernel's own table (all private mounts)
# cannot have.  The host's view under $B, then each jail's whole view;
# the jails' /usr (and the like, from mkjail.sh) and the broker's state
# directory are left out.
show_mounts() {
	local j cols=TARGET,SOURCE,PROPAGATION
	echo "   host# findmnt -R -o $cols \$B"
	LD_PRELOAD=$LIBSHARE_SO LIBSHARE_SOCKET=$SOCK findmnt -R -o "$cols" "$B" |
		ex_table
	for j in $EX_JAILS; do
		echo "   $j# findmnt -o $cols"
		env -u LD_PRELOAD LIBSHARE_SOCKET="$SOCK" chroot "$B/$j" \
			findmnt -o "$cols" | ex_table
	done
}

# A findmnt table, indented, $B written as such, without the mounts that
# every jail has (mkjail.sh's) and the broker's own.
ex_table() {
	awk -v b="$B" -v jails="$EX_JAILS" '
		BEGIN { n = split(jails, jl, " ") }
		{
			t = $0; sub(/^[^\/$]*/, "", t); sub(/ .*/, "", t)
			if (t ~ /^\/(usr|bin|sbin|lib[a-z0-9]*)(\/|$)/) next
			if (index(t, b "/state") == 1) next
			for (k = 1; k <= n; k++)
				if (t ~ ("^" b "/" jl[k] "/(usr|bin|sbin|lib[a-z0-9]*)(/|$)")) next
			line[++m] = $0
			if (index($0, b)) short = 1
		}
		END {
			# "$B" is shorter than the path: so is the TARGET column
			pad = sprintf("%*s", length(b) - 2, "")
			for (k = 1; k <= m; k++) {
				if (k == 1 && short) sub("TARGET" pad, "TARGET", line[k])
				gsub(b, "$B", line[k])
				print "     " line[k]
			}
		}'
}

# The sources of the stack of mounts at exactly PATH (a host path), bottom
# first: each one is mounted on the one before (parent ids), whatever the
# order of mountinfo's lines.
sources_at() {
	awk -v p="$1" '
		$5 == p {
			for (i = 7; $i != "-"; i++) ;
			src[$1] = $(i + 2); parent[$1] = $2; n++
		}
		END {
			for (id in src) if (!(parent[id] in src)) cur = id
			for (k = 0; k < n && cur != ""; k++) {
				printf "%s ", src[cur]; next_id = ""
				for (id in src) if (parent[id] == cur) next_id = id
				cur = next_id
			}
		}' /proc/self/mountinfo
}

# The content of a file as WHO sees it, or nothing.
content() {
	local who=$1 path=$2
	if [[ $who == host ]]; then
		cat -- "$path" 2>/dev/null
	else
		env -u LD_PRELOAD chroot "$B/$who" cat -- "$path" 2>/dev/null
	fi
	return 0
}

# --- verifying -------------------------------------------------------------

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

pass() {
	EX_CHECKS=$((EX_CHECKS + 1))
	echo "   ok: $*"
}

# expect_content WHO PATH TEXT WHY: WHO reads TEXT at PATH.
expect_content() {
	local who=$1 path=$2 want=$3 why=$4 got
	got=$(content "$who" "$path")
	[[ $got == "$want" ]] ||
		fail "$why: $who reads '${got:-<nothing>}' at ${path//$B/\$B}," \
			"expected '$want'"
	pass "$why"
}

# expect_missing WHO PATH WHY: nothing at PATH for WHO.
expect_missing() {
	local who=$1 path=$2 why=$3 found
	if [[ $who == host ]]; then
		[[ -e $path ]] && found=yes
	else
		env -u LD_PRELOAD chroot "$B/$who" test -e "$path" 2>/dev/null &&
			found=yes
	fi
	[[ -z ${found:-} ]] ||
		fail "$why: $who still sees ${path//$B/\$B}"
	pass "$why"
}

# expect_sources PATH "SRC..." WHY: the kernel's stack at a host path.
expect_sources() {
	local path=$1 want=$2 why=$3 got
	got=$(sources_at "$path")
	[[ ${got% } == "$want" ]] ||
		fail "$why: the mounts at ${path//$B/\$B} are '${got% }'," \
			"expected '$want'"
	pass "$why"
}

ex_done() {
	ex_stop_broker
	echo
	echo "== $EX_NAME: all $EX_CHECKS checks passed"
}
