# native.sh - prelude sourced by bash before a scenario script (native side of
# the kernel-differential harness). It turns the scenario language into real
# util-linux calls and prints "L<line> <RESULT>" for every mount/umount.
#
# Expects: SPY_SO (path of spy.so), SPY_LOG (scratch log file), SCENARIO (the
# script path exactly as it will be sourced, to find its line numbers), B.
# DIFF_SHIM (broker-run.sh only): libshare.so, preloaded after spy.so so that
# the spy's dlsym(RTLD_NEXT, "mount") reaches the shim's mount, not libc's.
# Commands never abort the script: a failure is a result to compare.

_preload=$SPY_SO${DIFF_SHIM:+ $DIFF_SHIM}

declare -A _ns       # NAME -> pid of the process keeping namespace NAME
_enter=()            # set (dynamically scoped) by "within NAME cmd..."
declare -A _holds    # DIR -> "pid fd ..." of the processes holding DIR busy
_jail=               # set (dynamically scoped) by "chroot JAIL cmd..."
_cwd=                # /proc/PID/cwd of the keeper of "cd DIR", or empty
_cwd_keeper=         # "pid fd" of that keeper
_lineno=

# The scenario line that issued the current command: the innermost frame
# called from the scenario file (chroot adds a frame of its own).
_scenario_line() {
	local i
	for ((i = 1; i < ${#BASH_SOURCE[@]}; i++)); do
		if [[ ${BASH_SOURCE[i]} == "$SCENARIO" ]]; then
			_lineno=${BASH_LINENO[i - 1]}
			return
		fi
	done
	_lineno=0
}

# Result of the command just run: what the kernel said to its last mount(2)
# or umount2(2) (OK or the errno name), or, if util-linux made no such call,
# OK or FAIL<exit status>. The syscall wins over the exit status: in a jail
# without /run, util-linux exits 16 after a successful move (it cannot
# update utab), yet the mount table changed.
_result() {
	local rc=$1 line res=
	while read -r line; do
		res=${line##* }
	done <"$SPY_LOG"
	case $res in
	'') ((rc == 0)) && res=OK || res=FAIL$rc ;;
	0) res=OK ;;
	esac
	echo "L$_lineno $res"
}

# _exec VAR=VALUE... CMD ARGS...: exports the VARs and execs CMD, entered
# into namespace _enter first when one is set (nsenter, then env).  Run
# in a subshell: one process per command, where env(1) would add an exec.
_exec() {
	((${#_enter[@]})) && exec "${_enter[@]}" env "$@"
	while [[ $1 == *=* ]]; do
		export "${1?}"
		shift
	done
	exec "$@"
}

# Run a util-linux binary under the spy, inside the jail if one is set.
# NATIVE_CALLS=FILE: "L<line> <calls>" appended for every command, how
# many mount(2)/umount2(2)/pivot_root(2) calls it made (fault-diff.sh).
_spied() {
	local rc
	_scenario_line
	: >"$SPY_LOG"
	(_exec "LD_PRELOAD=$_preload" SPY_LOG="$SPY_LOG" SPY_ROOT="$_jail" \
		SPY_CWD="$_cwd" "$@") >/dev/null 2>>"${NATIVE_ERR:-/dev/null}"
	rc=$?
	[[ -z ${NATIVE_CALLS:-} ]] ||
		echo "L$_lineno $(grep -c '' "$SPY_LOG")" >>"$NATIVE_CALLS"
	_result $rc
}

mount() { _spied /usr/bin/mount "$@"; }
umount() { _spied /usr/bin/umount "$@"; }
pivot_root() { _spied /usr/sbin/pivot_root "$@"; }
# umount2 [-l] [--nofollow] PATH: the system call with PATH as given
# (umount(8) makes it absolute, even with -c).
umount2() { _spied "$DIFF_BIN/umount2" "$@"; }

# mkdir and touch print nothing; inside a jail they still need the spy's
# chroot.
_quiet() {
	if [[ $_jail || $_cwd ]]; then
		(_exec "LD_PRELOAD=$_preload" SPY_ROOT="$_jail" \
			SPY_CWD="$_cwd" "$@") 2>/dev/null
	else                   # the program, not the function of its name
		(_exec "$@") 2>/dev/null
	fi
	return 0
}
mkdir() { _quiet mkdir "$@"; }
touch() { _quiet touch "$@"; }

# unshare NAME: a copy of the mount namespace (CLONE_NEWNS within the same
# user namespace, propagation unchanged), kept by a sleeping process until
# native-run.sh has taken the views; "NAME PID" goes to $NS_FILE.  With
# DIFF_SHIM (broker-run.sh) unshare, readlink and nsenter go through the
# shim: the broker's namespaces.
_via_shim=(${DIFF_SHIM:+env LD_PRELOAD=$DIFF_SHIM})
unshare() {
	local pid self
	self=$("${_via_shim[@]}" readlink /proc/self/ns/mnt)
	"${_via_shim[@]}" "$(type -P unshare)" -m --propagation unchanged \
		sleep infinity &
	pid=$!
	while [[ $("${_via_shim[@]}" readlink "/proc/$pid/ns/mnt") == "$self" ]]
	do
		sleep 0.01
	done
	_ns[$1]=$pid
	echo "$1 $pid" >>"$NS_FILE"
}

# within NAME cmd...: cmd runs in namespace NAME, from its root.
within() {
	local -a _enter=("${_via_shim[@]}" nsenter -t "${_ns[$1]}" -m --)
	shift
	"$@"
}

# chroot JAIL cmd...: jail-relative paths; the spy does the real chroot.
chroot() {
	local _jail=$1
	shift
	"$@"
}

# hold DIR: a process keeps its cwd in DIR (the top mount there is busy).
# It reports through a pipe once its cwd is set, so the next command sees
# the mount busy. A DIR that cannot be entered holds nothing.
hold() {
	local fd pid ready=
	exec {fd}< <(builtin cd -P -- "$1" 2>/dev/null && echo ready &&
		exec sleep infinity)
	pid=$!
	read -r -u "$fd" ready
	if [[ $ready ]]; then
		_holds[$1]+="$pid $fd "
	else
		wait "$pid" 2>/dev/null
		exec {fd}<&-
	fi
}

# hold_fd FILE: a process keeps FILE open (its mount is busy, as with
# hold); release FILE ends it.
hold_fd() {
	local fd pid ready=
	exec {fd}< <(exec 3<"$1" 2>/dev/null && echo ready && exec sleep infinity)
	pid=$!
	read -r -u "$fd" ready
	if [[ $ready ]]; then
		_holds[$1]+="$pid $fd "
	else
		wait "$pid" 2>/dev/null
		exec {fd}<&-
	fi
}

# use stat|open|chdir PATH (or "chroot JAIL use ..."): another process
# stats PATH, opens it, or makes it its cwd, and exits.  Each is a use of
# the mount PATH ends on: its reference dropped clears the mount's
# MNT_EXPIRE mark (fs/namespace.c mntput(); issue 29).
use() {
	case $1 in
	stat) _quiet stat -- "$2" >/dev/null ;;
	open) _quiet head -c0 -- "$2" ;;
	chdir) _quiet env -C "$2" true ;;
	esac
}

# release DIR: every holder of DIR exits (and is reaped, so it no longer
# pins the mount) before the next command runs.
release() {
	local -a h=(${_holds[$1]})
	local i fd
	for ((i = 0; i < ${#h[@]}; i += 2)); do
		kill "${h[i]}" 2>/dev/null
		wait "${h[i]}" 2>/dev/null
		fd=${h[i + 1]}
		exec {fd}<&-
	done
	unset "_holds[$1]"
}

# cd DIR (or "chroot JAIL cd DIR"): the scenario's commands run from DIR
# from now on, a relative DIR taken from the cwd before.  A process keeps
# it (its cwd, so the mount there is busy, semantics.md 5.3) and every
# command enters the keeper's /proc/PID/cwd: the very (mount, dentry), so
# a cwd covered by a later mount stays beneath it, as a shell's would.  A
# DIR that cannot be entered (hidden by a mount since) gives the sandbox
# $B, or in a jail its root, instead: never the namespace's "/", where a
# relative "mount ." would reach past the sandbox (sharedry does the same).
cd() {
	local fallback=$B
	[[ $_jail ]] && fallback=/
	_keep_cwd "$1" || _keep_cwd "$fallback"
}

# A keeper whose cwd is $1 (relative: to the cwd before); 1 if it failed.
_keep_cwd() {
	local fd pid ready=
	exec {fd}< <(_exec "LD_PRELOAD=$_preload" SPY_ROOT="$_jail" \
		SPY_CWD="$_cwd" SPY_CHDIR="$1" sleep infinity 2>/dev/null)
	pid=$!
	read -r -u "$fd" ready
	if [[ $ready ]]; then
		_drop_cwd
		_cwd=/proc/$pid/cwd _cwd_keeper="$pid $fd"
		return 0
	fi
	wait "$pid" 2>/dev/null
	exec {fd}<&-
	return 1
}

_drop_cwd() {
	local -a k=($_cwd_keeper)
	local fd
	((${#k[@]})) || return 0
	kill "${k[0]}" 2>/dev/null
	wait "${k[0]}" 2>/dev/null
	fd=${k[1]}
	exec {fd}<&-
	_cwd= _cwd_keeper=
}

_release_all() {
	local d
	for d in "${!_holds[@]}"; do
		release "$d"
	done
	_drop_cwd
}
