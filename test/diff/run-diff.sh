#!/bin/bash
# run-diff.sh [--native-only | --broker] [--random N [--seed-base S]]
#             [--jobs N] [SCENARIO...]
#
# Kernel-differential test: every scenario runs natively (native-run.sh, real
# kernel in a private mount namespace) and through the engine's dry run
# (sharedry); both outputs are normalised by mtnorm and must be identical:
# each mount/umount result and the mount tree host-wide and from each jail.
# Prints TAP, one test point per scenario; a failure shows the diff and, for
# a random scenario, its seed and script.
#
# Views: "/" plus every jail the script chroots into ("chroot $B/jN ...")
# plus any "# view: $B/DIR" comment line plus "NAME:/" for every namespace
# it makes ("unshare NAME"); random scenarios always use $B/j1 and $B/j2.
# --native-only runs only the native side and shows its normalised output
# (to check scenarios against semantics.md without an engine).
#
# --broker compares the kernel with libshare itself instead of sharedry: the
# other side is broker-run.sh (sharebrokerd and libshare.so under the legacy
# simulation; namespace copies through the broker too), random scenarios
# come from "gen --legacy", and both sides also list the files visible
# under the sandbox (DIFF_FILES=1) and lose their propagation fields
# (mtnorm -P: the broker's kernel table is all private).
# --broker also compares what processes see (issue 4 item 4): every
# scenario gets a second test point, "(virtual)", where the same broker run
# reads its views again through the shim (broker-run.sh BROKER_VIRTUAL=1:
# /proc/self/mountinfo on the host and chrooted in each jail, which has no
# /proc, served by the broker) and they must equal the native views WITH
# their propagation fields (mtnorm without -P; ids and groups renumbered).
# That needs a shim that serves the mount table: LIBSHARE_DIFF_VIRTUAL=auto
# (default) turns it on when libshare.so exports fopen (nm -D), and
# otherwise one point says "# SKIP shim has no mount-table wrappers";
# 1 forces it on, 0 off.
#
# --jobs N runs up to N scenarios at once (each has its own sandbox,
# namespace and broker), the points still printed in order.
# With --broker, BROKER_RESTART=1 in the environment restarts the broker
# (SIGKILL) before every command (broker-run.sh, restart.sh).
#
# Needs root; without sharedry (or, with --broker, without the broker, the
# shim or legacy-sim) it bails out rather than skip.
# Environment: SHAREDRY (default ../../daemon/sharedry from this directory,
# else sharedry on PATH), DIFF_BIN (where mtnorm, gen, lsview, spy.so are;
# default this directory), DIFF_TIMEOUT (seconds per side, default 120);
# with --broker SHAREBROKERD, SHARECTL, LIBSHARE_SO, LEGACY_SIM (default: in
# this source tree, see broker-run.sh).
set -u
here=${0%/*}
[[ $0 == */* ]] || here=.
here=$(cd "$here" && pwd)
bindir=${DIFF_BIN:-$here}
export DIFF_BIN=$bindir

native_only=0 broker=0 random=0 seed_base=1 virtual=0 jobs=1
files=()
while (($#)); do
	case $1 in
	--native-only) native_only=1 ;;
	--broker) broker=1 ;;
	--random) random=$2; shift ;;
	--seed-base) seed_base=$2; shift ;;
	--jobs) jobs=$2; shift ;;
	-*) echo "usage: run-diff.sh [--native-only | --broker] [--random N [--seed-base S]] [--jobs N] [SCENARIO...]" >&2
	    exit 2 ;;
	*) files+=("$1") ;;
	esac
	shift
done

if ((native_only && broker)); then
	echo "run-diff.sh: --native-only and --broker exclude each other" >&2
	exit 2
fi
if ((EUID != 0)); then
	echo "Bail out! needs root (mount namespaces, real mounts)"
	exit 1
fi
if [[ ${LIBSHARE_DIFF_NS:-} != 1 ]]; then
	# One private namespace for the whole run: cheaper than one per
	# scenario, and group ids are renumbered anyway.
	LIBSHARE_DIFF_NS=1 exec unshare -m --propagation private bash "$0" \
		--random "$random" --seed-base "$seed_base" --jobs "$jobs" \
		$( ((native_only)) && echo --native-only) \
		$( ((broker)) && echo --broker) "${files[@]}"
fi

if ((broker)); then
	top=$here/../..
	export SHAREBROKERD=${SHAREBROKERD:-$top/daemon/sharebrokerd} \
		SHARECTL=${SHARECTL:-$top/daemon/sharectl} \
		LIBSHARE_SO=${LIBSHARE_SO:-$top/shim/libshare.so} \
		LEGACY_SIM=${LEGACY_SIM:-$top/test/legacy/legacy-sim} \
		DIFF_FILES=1 NATIVE_ERR=/dev/stderr
	norm=(-P)
	gen=("$bindir/gen" --legacy)
	virtual=${LIBSHARE_DIFF_VIRTUAL:-auto}
	if [[ $virtual == auto ]]; then
		# the table wrappers come with the shim's fopen (issue 4 item 1)
		if nm -D --defined-only "$LIBSHARE_SO" 2>/dev/null |
			grep -qE ' fopen(@|$)'; then
			virtual=1
		else
			virtual=0
		fi
	fi
	[[ $virtual == 1 ]] || virtual=0
	export BROKER_VIRTUAL=$virtual
else
	unset DIFF_FILES       # sharedry lists no files
	norm=()
	gen=("$bindir/gen")
fi
if ((!native_only && !broker)) && [[ -z ${SHAREDRY:-} ]]; then
	SHAREDRY=$here/../../daemon/sharedry
	[[ -x $SHAREDRY ]] || SHAREDRY=$(command -v sharedry)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/libshare-rundiff.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# Views of SCRIPT, '$B' unexpanded: "/", each chroot jail, each "# view:".
views_of() {
	local -A seen=()
	local v
	echo /
	while read -r v; do
		[[ -z ${seen[$v]:-} ]] && echo "$v"
		seen[$v]=1
	done < <(sed -nE -e 's/^[[:space:]]*(within[[:space:]]+[^[:space:]]+[[:space:]]+)?chroot[[:space:]]+(\$B[^[:space:]]*).*/\2/p' \
		-e 's/^#[[:space:]]*view:[[:space:]]*(\$B[^[:space:]]*).*/\1/p' \
		-e 's/^[[:space:]]*unshare[[:space:]]+([^[:space:]]+).*/\1:\//p' "$1")
}

# Lines of FILE as TAP diagnostics.
diag() {
	sed 's/^/# /' "$1"
}

# run_one NUMBER NAME SCRIPT VIEW...: one TAP test point.
run_one() {
	local k=$1 name=$2 script=$3 base rc=0
	shift 3
	local -a dviews=()
	rm -f "$work/native.raw" "$work/broker.raw"
	: >"$work/native.err"
	DIFF_TIMEOUT=${DIFF_TIMEOUT:-120} bash "$here/native-run.sh" "$script" "$@" \
		>"$work/native.raw" 2>>"$work/native.err"
	base=$(sed -n '1s/^base //p' "$work/native.raw")
	if [[ -z $base ]]; then
		echo "not ok $k - $name"
		echo "# native run failed:"
		diag "$work/native.err"
		return 1
	fi
	"$bindir/mtnorm" "${norm[@]}" "$work/native.raw" >"$work/native"
	if ((broker)); then
		broker_side "$k" "$name" "$script" "$@"
		return
	fi
	if ((native_only)); then
		if ! grep -q '^TIMEOUT' "$work/native"; then
			echo "ok $k - $name"
			rc=0
		else
			echo "not ok $k - $name"
			rc=1
		fi
		diag "$work/native"
		diag "$work/native.err"
		return $rc
	fi
	for v in "$@"; do
		dviews+=(--view "${v//'$B'/$base}")
	done
	timeout "${DIFF_TIMEOUT:-120}" "$SHAREDRY" --base "$base" "${dviews[@]}" \
		"$script" >"$work/dry.raw" 2>"$work/dry.err" || rc=$?
	"$bindir/mtnorm" -b "$base" "$work/dry.raw" >"$work/dry"
	if ((rc == 0)) && diff -u --label native --label sharedry \
		"$work/native" "$work/dry" >"$work/diff"; then
		echo "ok $k - $name"
		return 0
	fi
	echo "not ok $k - $name"
	((rc == 0)) || echo "# sharedry exit status $rc"
	diag "$work/dry.err"
	diag "$work/diff"
	return 1
}

# The other side of run_one with --broker: broker-run.sh, diffed with the
# native output just made; on failure the broker's stderr (its log at the
# end) and the native util-linux messages come with the diff.
broker_side() {
	local k=$1 name=$2 script=$3
	shift 3
	# append: util-linux appends to the same file (NATIVE_ERR=/dev/stderr)
	: >"$work/broker.err"
	DIFF_TIMEOUT=${DIFF_TIMEOUT:-120} bash "$here/broker-run.sh" "$script" \
		"$@" >"$work/broker.raw" 2>>"$work/broker.err"
	if ! grep -q '^base ' "$work/broker.raw"; then
		echo "not ok $k - $name"
		echo "# broker run failed:"
		diag "$work/broker.err"
		return 1
	fi
	sed '/^--- virtual$/,$d' "$work/broker.raw" |
		"$bindir/mtnorm" -P >"$work/broker"
	if diff -u --label native --label broker "$work/native" \
		"$work/broker" >"$work/diff"; then
		echo "ok $k - $name"
		return 0
	fi
	echo "not ok $k - $name"
	diag "$work/diff"
	echo "# broker side (stderr, broker log):"
	diag "$work/broker.err"
	echo "# native side (stderr):"
	diag "$work/native.err"
	return 1
}

# virtual_point NUMBER NAME: the second point of a scenario with --broker:
# the native views (no results, no files) against broker-run.sh's
# "--- virtual" section, both normalised with their propagation fields.
virtual_point() {
	local k=$1 name="$2 (virtual)"
	if [[ ! -s $work/native.raw || ! -s $work/broker.raw ]] ||
		! grep -q '^--- virtual$' "$work/broker.raw"; then
		echo "not ok $k - $name"
		echo "# no views to compare (a side failed, see the point before)"
		return 1
	fi
	awk '/^base / || /^--- files$/ { v = 0 } /^base / { print }
		/^--- view / { v = 1 } v' "$work/native.raw" |
		"$bindir/mtnorm" >"$work/native.virt"
	{ sed -n '/^base /p' "$work/broker.raw"
	  sed '1,/^--- virtual$/d' "$work/broker.raw"; } |
		"$bindir/mtnorm" >"$work/broker.virt"
	if diff -u --label native --label "broker+shim" "$work/native.virt" \
		"$work/broker.virt" >"$work/diff"; then
		echo "ok $k - $name"
		return 0
	fi
	echo "not ok $k - $name"
	diag "$work/diff"
	echo "# broker side (stderr, broker log):"
	diag "$work/broker.err"
	return 1
}

k=0 failed=0
if ((broker && virtual)); then
	echo "1..$((2 * (${#files[@]} + random)))"
elif ((broker)); then
	echo "1..$((${#files[@]} + random + 1))"
	echo "ok $((++k)) - virtual views # SKIP shim has no mount-table wrappers"
else
	echo "1..$((${#files[@]} + random))"
fi
if ((!native_only && !broker)) && [[ ! -x $SHAREDRY ]]; then
	echo "Bail out! sharedry not found (build it, or set SHAREDRY)"
	exit 1
fi
if ((broker)); then
	for p in "$SHAREBROKERD" "$SHARECTL" "$LIBSHARE_SO" "$LEGACY_SIM"; do
		if [[ ! -e $p ]]; then
			echo "Bail out! $p not found (build it, or set its variable)"
			exit 1
		fi
	done
	if ! "$LEGACY_SIM" --check; then
		echo "Bail out! legacy-sim cannot simulate a legacy kernel here"
		exit 1
	fi
fi
# scenario K NAME SCRIPT [RANDOM-SEED] -- VIEW...: its test point(s), its
# diagnostics; 1 if one failed.  The files of a run are in $work.
scenario() {
	local k=$1 name=$2 script=$3 seed=$4 bad=0
	shift 5
	run_one "$k" "$name" "$script" "$@" || bad=1
	if ((virtual)); then
		virtual_point $((k + 1)) "$name" || bad=1
	fi
	((bad)) || return 0
	if [[ $seed ]]; then
		echo "# seed $seed (reproduce: ${gen[*]##*/} $seed >s.sh;" \
			"run-diff.sh$( ((broker)) && echo " --broker") s.sh):"
		diag "$script"
	elif ((broker)); then
		echo "# script $script:"
		diag "$script"
	fi
	return 1
}

# Each scenario in a work directory of its own, up to $jobs at once (they
# share nothing: every run has its own sandbox, namespace and broker);
# the points are printed in order as the runs end.
started=0 printed=0
declare -a done_dir=()
print_ready() {
	while ((printed < started)) && [[ -e ${done_dir[printed]}/rc ]]; do
		cat "${done_dir[printed]}/out"
		[[ $(<"${done_dir[printed]}/rc") == 0 ]] || failed=1
		rm -rf "${done_dir[printed]}"
		((++printed))
	done
}
launch() {
	local dir=$work/run.$started
	mkdir -p "$dir"
	done_dir[started]=$dir
	((++started))
	if ((jobs <= 1)); then
		work=$dir scenario "$@" >"$dir/out"
		echo $? >"$dir/rc"
	else
		while (($(jobs -rp | wc -l) >= jobs)); do
			wait -n
			print_ready
		done
		(work=$dir scenario "$@" >"$dir/out"; echo $? >"$dir/rc.new"
		 mv "$dir/rc.new" "$dir/rc") &
	fi
	print_ready
}

per=$((1 + virtual))
for f in "${files[@]}"; do
	mapfile -t views < <(views_of "$f")
	launch $((k + 1)) "${f##*/}" "$f" "" -- "${views[@]}"
	((k += per))
done
for ((i = 0; i < random; i++)); do
	seed=$((seed_base + i))
	script=$work/random-$seed.sh
	"${gen[@]}" "$seed" >"$script"
	mapfile -t nsviews < <(views_of "$script" | grep ':/$')
	launch $((k + 1)) "random seed $seed" "$script" "$seed" -- / '$B/j1' \
		'$B/j2' "${nsviews[@]}"
	((k += per))
done
wait
print_ready
# The TAP points say what failed; the status also tells a plain driver.
exit $failed
