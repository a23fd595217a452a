#!/bin/bash
# fault-diff.sh [--kinds | --full | --list [--kinds | --full] |
#               SCENARIO:LINE...] - a broker
# killed in the middle of a request recovers one of the kernel's two
# outcomes (issue 9, what must be true 4).
#
# For each corpus command given as SCENARIO:LINE the broker is killed at
# every kill point k of that command (fault-run.sh, LIBSHARE_FAULT=step:k:
# right after the k-th step of its plan, or after a mount is moved aside
# within a step), in the middle of each write of its saves (save:k:
# the intent, if it has steps, then the journal's record), and right
# after each copy
# the kernel bound straight on its place, before the record says so
# (copy:k, copy.c), then started again; the
# kernel's table, the files and every view (host, jails and namespaces),
# and the same views read through the shim (the graph, propagation
# fields included), must all equal what the kernel gives natively without
# the command or with it (native-run.sh on the scenario cut before or
# after LINE), the same one of the two for both; and no mount may stay on
# the broker's staging or parking places, nor under STATE/ns once no
# namespace is left.  Prints TAP, one point per kill; the plan comes last.
#
# Which commands:
#   (none)   what make check runs: one command for every plan shape of
#            the corpus on the host, and one for every shape in a jail
#            (chroot).  The shape is the kinds of its plan's steps in
#            order as sharedry --trace gives them, a run of steps of one
#            kind written once ("new bind+ park bind move"), a step that
#            moves a covering mount aside marked "^", one that leaves its
#            mount where no path reaches it (under a mount, or a mount on
#            it: recovery reaches it through a descriptor) "~"; a plan of
#            no step (mount --make-shared) is a shape, its state save the
#            only kill, and so is a refusal ("fails": nothing to kill,
#            nothing may change).  Of the commands of one shape the
#            cheapest (shortest prefix, fewest kill points) is killed
#            at every one of its kill points: a longer run of steps of one
#            kind goes through the same code at every k (the 1764 binds of
#            s14-mount-explosion.sh:14, the 2 of
#            s13-rbind-into-own-subdir.sh:9: killed after the first, undo
#            one bind; after the k-th, undo k).  --list shows the choice.
#            Namespace copies are not in sharedry's reach: a host mount
#            that reaches a copy and one made in the copy that reaches the
#            host (s33:18, s33:19) join, their kill points found by running.
#            The saves are one code for every command: they are killed
#            in those of the first command of each kind of save (host or
#            jail; a plan with steps, one without, a refusal, a
#            namespace's), the other commands at their steps alone.
#   --kinds  one command for every operation kind and plan shape, killed
#            in its saves too (what make check ran before: 98 commands,
#            about 490 points): the kind is the command and its options
#            (mount --bind, chroot umount -l, mount -o remount,ro...).
#   --full   every mount, umount, umount2 and pivot_root line of every
#            corpus scenario the legacy setting runs, and every mount,
#            umount and unshare line of those with namespace copies (kill
#            points found by running), each at every kill point: a
#            benchmark-style run (~6000 kills).
#   --list   the commands chosen, with kind, shape and kill points; no run.
#
# Each kill is a run of its own (fault-run.sh: sandbox, private namespace,
# broker), LIBSHARE_DIFF_JOBS (default 2) at once, the points printed in
# order.  The kill points of a command are known beforehand from its plan
# in sharedry (the engine's), so its kills run side by side; the runs go
# on past the prediction until the broker survives.  A native outcome is
# made once per cut of a scenario (line n's "done" is line n+1's "not
# done").
# Needs root; environment as broker-run.sh, SHAREDRY (default
# daemon/sharedry of this tree).
set -u
here=${0%/*}
[[ $0 == */* ]] || here=.
here=$(cd "$here" && pwd)
bindir=${DIFF_BIN:-$here}
export DIFF_BIN=$bindir DIFF_FILES=1
corpus=$here/corpus
SHAREDRY=${SHAREDRY:-$here/../../daemon/sharedry}
njobs=${LIBSHARE_DIFF_JOBS:-2}
[[ $njobs =~ ^[1-9][0-9]*$ ]] || njobs=2

mode=shapes list=0
targets=()
# Regressions, always in make check: killed after the park of LOCAL,
# whose return covered a copy the holder had not kept (s19:12); with
# COVER moved aside, in no record then (s36:12); after the copy onto the
# hidden original, which recovery looked for by its path (s12a:9); in
# the second request of mount --bind -o ro (options-and-remount.sh:17);
# after the park of the counterpart with its child, and after each
# umount (s18a:17, found by --full on main).
pinned=(s19-tucking.sh:12 s36-covered-receiver-place.sh:12
	s12a-shared-bound-onto-itself.sh:9 options-and-remount.sh:17
	s18a-counterpart-with-child-survives.sh:17)
while (($#)); do
	case $1 in
	--full) mode=full ;;
	--kinds) mode=kinds ;;
	--list) list=1 ;;
	-*) echo "usage: fault-diff.sh [--kinds | --full | --list [--kinds | --full] | SCENARIO:LINE...]" >&2
	    exit 2 ;;
	*) mode=given; targets+=("$1") ;;
	esac
	shift
done
if ((EUID != 0 && !list)); then
	echo "Bail out! needs root (mount namespaces, real mounts)"
	exit 1
fi
if [[ ! -x $SHAREDRY ]]; then
	echo "Bail out! $SHAREDRY not found (build it, or set SHAREDRY)"
	exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/libshare-faultdiff.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# commands_of SCENARIO, legacy SCENARIO
# shellcheck source=fault-pick.sh
. "$here/fault-pick.sh"

# $work/commands: SCENARIO:LINE <tab> KILL-POINTS <tab> KIND <tab> SHAPE
# for every command considered, then $work/chosen: those to run.
for f in "$corpus"/*.sh; do
	legacy "$f" || continue
	commands_of "$f" | sed "s|^|${f##*/}:|"
done >"$work/commands"
# with namespace copies: SCENARIO:LINE and no prediction
for f in "$corpus"/*.sh; do
	legacy "$f" && continue
	grep -nE '^((chroot|within) [^ ]+ )?(mount|umount|umount2) |^unshare ' "$f" |
		sed -E "s|^([0-9]+):.*|${f##*/}:\1\t0\t?\t?|"
done >"$work/commands.ns"
nspinned=(s33-namespace-copy.sh:18 s33-namespace-copy.sh:19)
case $mode in
full) cat "$work/commands" "$work/commands.ns" >"$work/chosen" ;;
given)
	for t in "${targets[@]}"; do
		grep -m1 "^$t"$'\t' "$work/commands" ||
			printf '%s\t0\t?\t?\n' "$t"   # sharedry does not know it
	done >"$work/chosen" ;;
shapes|kinds)
	# per shape, on the host and in a jail (per kind and shape with
	# --kinds) the cheapest: prefix length times kill points
	awk -F '\t' -v kinds="$([[ $mode == kinds ]] && echo 1)" '{
		split($1, a, ":")
		key = (kinds ? $3 : ($3 ~ /^chroot / ? "jail" : "host")) "\t" $4
		cost = (a[2] + 20) * ($2 + 4)
		if (!(key in best) || cost < bestcost[key]) {
			if (!(key in best))
				order[++n] = key
			best[key] = $0
			bestcost[key] = cost
		}
	} END { for (i = 1; i <= n; i++) print best[order[i]] }' \
		"$work/commands" >"$work/chosen.shapes"
	# and the points that found recovery bugs, whatever the choice
	for t in "${pinned[@]}"; do
		grep -m1 "^$t"$'\t' "$work/commands"
	done | cat - "$work/chosen.shapes" | sort -u -t: -k1,1 -k2,2n \
		>"$work/chosen"
	for t in "${nspinned[@]}"; do
		grep -m1 "^$t"$'\t' "$work/commands.ns"
	done >>"$work/chosen" ;;
esac
if ((list)); then
	awk -F '\t' '{ printf "%s\t%d kill points\t%s\t%s\n", $1, $2, $3, $4 }' \
		"$work/chosen"
	exit 0
fi

# As run-diff.sh: "/", each chroot jail, each "# view:", each namespace
# ("NAME:/").
views_of() {
	local -A seen=()
	local v
	echo /
	while read -r v; do
		[[ -z ${seen[$v]:-} ]] && echo "$v"
		seen[$v]=1
	done < <(sed -nE -e 's/^[[:space:]]*chroot[[:space:]]+(\$B[^[:space:]]*).*/\1/p' \
		-e 's/^#[[:space:]]*view:[[:space:]]*(\$B[^[:space:]]*).*/\1/p' \
		-e 's/^[[:space:]]*unshare[[:space:]]+([^[:space:]]+).*/\1:\//p' "$1")
}

# A run's output split: NAME.kern (table, views, files; no propagation
# fields, the broker's kernel table is private) and NAME.virt (the views
# with them).  Results and fault lines go: a killed request has none.
split() {
	local raw=$1 out=$2
	sed -e '/^--- virtual$/,$d' -e '/^L[0-9]* /d' -e '/^fault /d' "$raw" |
		"$bindir/mtnorm" -P >"$out.kern"
	if grep -q '^--- virtual$' "$raw"; then
		{ sed -n '/^base /p' "$raw"; sed '1,/^--- virtual$/d' "$raw"; }
	else
		awk '/^base / || /^--- files$/ { v = 0 } /^base / { print }
			/^--- view / { v = 1 } v' "$raw"
	fi | "$bindir/mtnorm" >"$out.virt"
}

# pool CMD...: CMD in the background once fewer than $njobs run.
pool() {
	while (($(jobs -rp | wc -l) >= njobs)); do
		wait -n
	done
	"$@" &
}

# native KEY SCENARIO CUT VIEW...: the kernel's outcome of the scenario's
# first CUT lines, $nat/KEY.{kern,virt}, then KEY.done.  When line CUT is
# a command of several system calls (mount --bind -o ro: a bind, then a
# remount), each is a request of its own to the broker, recovered on its
# own: a kill in the second leaves the first done.  So the outcomes in
# between count too, the command cut short after its j-th call (spy.so's
# SPY_MAX_CALLS): KEY.mj.{kern,virt}, listed in KEY.mids.
nat=$work/native
mkdir "$nat"
native_one() {
	bash "$here/native-run.sh" "$nat/$1.sh" "${@:2}" >"$nat/$1.raw" \
		2>/dev/null
	split "$nat/$1.raw" "$nat/$1"
	rm -f "$nat/$1.raw" "$nat/$1.sh"
}
native() {
	local key=$1 f=$2 cut=$3 j calls
	shift 3
	head -n "$cut" "$f" >"$nat/$key.sh"
	NATIVE_CALLS=$nat/$key.calls native_one "$key" "$@"
	calls=$(sed -n "s/^L$cut //p" "$nat/$key.calls" 2>/dev/null | tail -1)
	: >"$nat/$key.mids"
	for ((j = 1; j < ${calls:-0}; j++)); do
		head -n "$cut" "$f" |
			sed "\$s/^/export SPY_MAX_CALLS=$j; /" >"$nat/$key.m$j.sh"
		native_one "$key.m$j" "$@"
		echo "$key.m$j" >>"$nat/$key.mids"
	done
	rm -f "$nat/$key.calls"
	: >"$nat/$key.done"
}
declare -A made=()
need_native() {
	[[ ${made[$1]:-} ]] && return
	made[$1]=1
	pool native "$@"
}

# diag LABEL-A FILE-A LABEL-B FILE-B: their diff as TAP diagnostics.
diag() {
	diff -u --label "$1" "$2" --label "$3" "$4" | head -n 80 | sed 's/^/# /'
}

# kill_one DIR TARGET A B SCENARIO LINE SPEC VIEW...: one kill, judged
# against the natives A (not done) and B (done): DIR/SPEC.v, a point
# without its number ("ok - ..." or "not ok - ..." and diagnostics), and
# DIR/SPEC.how (killed, survived, or nothing for a run that failed).
kill_one() {
	local d=$1 t=$2 a=$nat/$3 b=$nat/$4 f=$5 line=$6 spec=$7
	shift 7
	local r=$d/${spec/:/} o=none x left how
	bash "$here/fault-run.sh" "$f" "$line" "$spec" "$@" >"$r.raw" 2>"$r.err"
	while [[ ! -e $a.done || ! -e $b.done ]]; do
		sleep 0.1
	done
	split "$r.raw" "$r"
	for x in "A:$a" $(sed 's|^\(.*\.m\)\([0-9]*\)$|M\2:'"$nat"'/&|' "$b.mids") \
		"B:$b"; do
		cmp -s "$r.kern" "${x#*:}.kern" && cmp -s "$r.virt" "${x#*:}.virt" &&
			{ o=${x%%:*}; break; }
	done
	left=$(sed -n 's/^fault leftovers //p' "$r.raw")
	how=$(sed -n 's/^fault \(killed\|survived\)$/\1/p' "$r.raw")
	{
		x="$t $spec ($how): outcome $o, leftovers ${left:-?}"
		if [[ $o != none && $left == 0 && $how ]]; then
			echo "ok - $x"
		else
			echo "not ok - $x"
			diag not-done "$a.kern" fault "$r.kern"
			diag done "$b.kern" fault "$r.kern"
			diag not-done-views "$a.virt" fault-views "$r.virt"
			diag done-views "$b.virt" fault-views "$r.virt"
			head -n 300 "$r.err" | sed 's/^/# /'
		fi
	} >"$r.v.new"
	echo "$how" >"$r.how"
	rm -f "$r.raw" "$r.err" "$r.kern" "$r.virt"
	mv "$r.v.new" "$r.v"
}

# Targets, in order: tdir[i], what[i] (SCENARIO:LINE, kind, shape), the
# arguments of their kills (kargs[i], quoted) and how many save and step
# kills were launched (nsave[i], nstep[i]): a request writes its intent
# (a plan with steps) and its state, in two writes.
declare -a tdir=() what=() kargs=() nstep=() nsave=()
declare -A saved=()
launched=0 printed=0 k=0 failed=0

# series I KIND LAUNCHED: the points of target I's kills of KIND (save,
# step, copy) in order, up to the first the broker survived; past the LAUNCHED
# ones, more kills, one at a time.
series() {
	local i=$1 kind=$2 n=$3 d=${tdir[$1]} s
	local -a args
	eval "args=(${kargs[i]})"
	for ((s = 1; ; s++)); do
		if ((s > n)); then
			((s > n + 200)) && break   # not a plan: a loop
			kill_one "${args[@]:0:6}" "$kind:$s" "${args[@]:6}"
		fi
		# a copy kill the broker survived is no point: no copy k
		[[ $kind == copy && $(<"$d/$kind$s.how") == survived ]] &&
			break
		point "$d/$kind$s.v"
		[[ $(<"$d/$kind$s.how") == killed ]] || break
	done
}

# The points of target $1, once all its launched kills are judged.
print_target() {
	local i=$1 d=${tdir[$1]} s
	for ((s = 1; s <= nsave[i]; s++)); do
		[[ -e $d/save$s.v ]] || return 1
	done
	for ((s = 1; s <= nstep[i]; s++)); do
		[[ -e $d/step$s.v ]] || return 1
	done
	[[ -e $d/copy1.v ]] || return 1
	echo "# ${what[i]}"
	((nsave[i])) && series "$i" save "${nsave[i]}"
	series "$i" step "${nstep[i]}"
	series "$i" copy 1
	rm -rf "$d"
}

point() {
	local first rest
	{ read -r first; rest=$(cat); } <"$1"
	[[ $first == ok* ]] || failed=1
	echo "${first%% - *} $((++k)) - ${first#* - }"
	[[ -z $rest ]] || echo "$rest"
}

print_ready() {
	while ((printed < launched)) && print_target "$printed"; do
		((++printed))
	done
}

while IFS=$'\t' read -r t n kind shape; do
	f=$corpus/${t%:*} line=${t##*:} scn=${t%:*}
	i=$launched
	d=$work/t$i
	mkdir "$d"
	mapfile -t views < <(views_of "$f")
	need_native "$scn.$((line - 1))" "$f" "$((line - 1))" "${views[@]}"
	need_native "$scn.$line" "$f" "$line" "${views[@]}"
	args=("$t" "$scn.$((line - 1))" "$scn.$line" "$f" "$line")
	tdir[i]=$d
	what[i]="$t $kind: ${shape:-no step} ($n kill points)"
	kargs[i]="$(printf '%q ' "$d" "${args[@]}")___VIEWS___"
	kargs[i]=${kargs[i]/___VIEWS___/$(printf '%q ' "${views[@]}")}
	nstep[i]=$((n + 1))    # the last one survives, if sharedry is right
	nsave[i]=$((n ? 4 : 3))   # the last one survives, as a rule
	# by default the saves of the first command of each kind of save
	where=host
	[[ $kind == chroot* ]] && where=jail
	class=$where/$((n > 0))/${shape/#[!f?]*/}
	[[ $mode == shapes && ${saved[$class]:-} ]] && nsave[i]=0
	saved[$class]=1
	for ((s = 1; s <= nsave[i]; s++)); do
		pool kill_one "$d" "${args[@]}" "save:$s" "${views[@]}"
	done
	for ((s = 1; s <= n + 1; s++)); do
		pool kill_one "$d" "${args[@]}" "step:$s" "${views[@]}"
	done
	pool kill_one "$d" "${args[@]}" "copy:1" "${views[@]}"
	((++launched))
	print_ready
done <"$work/chosen"
while ((printed < launched)); do
	wait -n 2>/dev/null || sleep 0.2
	print_ready
done
wait
echo "1..$k"
exit $failed
