#!/bin/bash
# native-run.sh SCRIPT VIEW... - run one scenario natively against the kernel.
#
# Output (the format sharedry prints too, plus the first line):
#   base <sandbox path>
#   L<line> <RESULT>            one per mount/umount command of SCRIPT
#   --- view <V>                for each VIEW, then the raw mountinfo seen
#   <mountinfo lines...>        with root V
#   --- files                   only with DIFF_FILES=1: every path under the
#   <type> B/<path>             sandbox as the host sees it (find -printf %y)
# VIEW is "/" (host-wide), a jail path, normally written with a literal
# '$B' ('$B/j1'), which is expanded to the sandbox path here, or "NAME:/",
# the whole of a namespace the script made with "unshare NAME".
#
# Everything happens in a fresh private mount namespace of its own, even
# under run-diff.sh's: a broker run started meanwhile copies its caller's
# namespace, and must not inherit this sandbox, which vanishes from under
# it (rmdir detaches a mountpoint's mounts in every namespace). The sandbox
# is a tmpfs named BASE on a mktemp directory, made private, exactly what
# sharedry models with --base. Nothing stays mounted afterwards.
#
# Environment: DIFF_BIN (dir of spy.so and lsview; default: this script's
# dir), DIFF_TIMEOUT (seconds for the script, default 120), NATIVE_ERR (file
# collecting util-linux messages; default: discarded), DIFF_FILES (1: add
# the files section; sharedry has none, so run-diff.sh asks for it only
# against broker-run.sh).
set -u
here=${0%/*}
[[ $0 == */* ]] || here=.
here=$(cd "$here" && pwd)
bindir=${DIFF_BIN:-$here}

if (($# < 1)); then
	echo "usage: native-run.sh SCRIPT VIEW..." >&2
	exit 2
fi
if [[ ${NATIVE_RUN_NS:-} != $$ ]]; then
	# exec keeps the pid: the mark says "this very process unshared"
	NATIVE_RUN_NS=$$ exec unshare -m --propagation private bash "$0" "$@"
fi
unset NATIVE_RUN_NS
# We mount as root: refuse to do it in the host's namespace.
if [[ /proc/self/ns/mnt -ef /proc/1/ns/mnt ]]; then
	echo "native-run.sh: not in a private mount namespace" >&2
	exit 2
fi

[[ -r $1 ]] || { echo "native-run.sh: cannot read $1" >&2; exit 2; }
script=$1
[[ $script == /* ]] || script=$PWD/$script # it runs from /
shift

dir=$(mktemp -d "${TMPDIR:-/tmp}/libshare-diff.XXXXXX") || exit 1
log=$dir.log
nsfile=$dir.ns
: >"$nsfile"
cleanup() {
	local name pid
	while read -r name pid; do      # the namespaces' keepers
		kill "$pid" 2>/dev/null
	done <"$nsfile"
	while /usr/bin/umount -l "$dir" 2>/dev/null; do :; done
	rmdir "$dir"
	rm -f "$log" "$nsfile"
}
trap cleanup EXIT
/usr/bin/mount -t tmpfs BASE "$dir" && /usr/bin/mount --make-private "$dir" ||
	exit 1
echo "base $dir"

# The scenario runs in its own bash, sourced so that BASH_LINENO gives its
# own line numbers. timeout signals the whole process group, so holders die
# with it.
(cd / && B=$dir SCENARIO=$script SPY_SO=$bindir/spy.so SPY_LOG=$log \
	NS_FILE=$nsfile \
	timeout "${DIFF_TIMEOUT:-120}" bash -c \
	'source "$1" && source "$SCENARIO"; _release_all; exit 0' native-run \
	"$here/native.sh" </dev/null) || echo "TIMEOUT or error $? in script"

for v in "$@"; do
	v=${v//'$B'/$dir}
	echo "--- view $v"
	if [[ $v == / ]]; then
		cat /proc/self/mountinfo
	elif [[ $v == *:/ ]]; then      # NAME:/ a namespace made by "unshare"
		nsenter -t "$(awk -v n="${v%:/}" '$1 == n { print $2 }' "$nsfile")" \
			-m cat /proc/self/mountinfo
	else
		"$bindir/lsview" "$v"
	fi
done
# Crossing mounts, not following symlinks; sorted, so only what is visible
# where counts, not the order of directory entries.  A sysfs is listed
# without its contents: they are the machine's (a bdi for every FUSE
# superblock, the broker's own included, every loop device), not the
# scenario's.
if [[ ${DIFF_FILES:-} == 1 ]]; then
	echo "--- files"
	find "$dir" -mindepth 1 -printf '%y B/%P\n' -fstype sysfs -prune \
		2>/dev/null | LC_ALL=C sort
fi
