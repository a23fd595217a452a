#!/usr/bin/env bats
# The services (issue 12 item 4): the LSB init script and the OpenRC script
# start, report, restart and stop the installed broker; the systemd unit
# leaves it in a mount namespace of its own, which jails enter through
# libshare-enter, and a jail started outside it is refused, saying why.
#
# What runs: the scripts and the unit as make generated them (what
# --enable-lsb-init, --enable-openrc and --with-systemdsystemunitdir
# install), against a tree installed with DESTDIR and bound over the
# prefix in this test's private mount namespace, so that their paths are
# the real ones.  The LSB script runs under Debian's start-stop-daemon and
# /lib/lsb/init-functions; the OpenRC script under the real openrc-run,
# with a /run/openrc of this namespace's own (OpenRC did not boot this
# machine).  systemd is not PID 1 here: the unit is checked by
# systemd-analyze verify, and its ExecStart, PIDFile, ExecReload and
# default stop signal are carried out by hand as systemd would.

load admin

setup_file() {
	load admin
	install_tree
}

setup() {
	admin_setup
	ROOT=$BATS_FILE_TMPDIR/root
	PREFIX=$(make_var prefix)
	local d
	for d in sysconfdir runstatedir; do
		[[ $(make_var $d) == "$PREFIX"/* ]] ||
			skip "$d is outside the prefix: binding the prefix is not enough"
	done
	mkdir -p "$PREFIX"
	mount --bind "$ROOT$PREFIX" "$PREFIX"
	PIDFILE=$(make_var runstatedir)/libshare/sharebrokerd.pid
	printf 'socket = %s\nlog = %s\n' "$SOCK" "$S/service.log" \
		>"$(make_var sysconfdir)/libshare/libshare.conf"
	# the LSB functions must not hand over to a systemd that is not there
	export _SYSTEMCTL_SKIP_REDIRECT=1
}

teardown() {
	local pid
	pid=$(cat "$PIDFILE" 2>/dev/null) && kill -TERM "$pid" 2>/dev/null &&
		wait_gone "$pid"
	umount -l "$PREFIX" 2>/dev/null
	admin_teardown
}

# /etc/default/libshare (under the prefix) holding LINE.
defaults() {
	mkdir -p "$(make_var sysconfdir)/default"
	printf '%s\n' "$1" >"$(make_var sysconfdir)/default/libshare"
}

# The broker of the pidfile is the installed one, and answers.
assert_serving() {
	local pid
	pid=$(cat "$PIDFILE")
	[ "$(readlink "/proc/$pid/exe")" = "$(make_var sbindir)/sharebrokerd" ]
	run "$SHARECTL" status
	[[ $output == "sharebrokerd $pid: "* ]]
}

# No pidfile, and nothing answers on the socket.
assert_stopped() {
	[ ! -e "$PIDFILE" ]
	run "$SHARECTL" status
	[ "$status" -eq 1 ]
}

@test "LSB init script: start, status, reload, restart, stop" {
	[ -r /lib/lsb/init-functions ] || skip "no /lib/lsb/init-functions"
	local init=$DIST/libshare.init pid
	defaults PRIVATE_NAMESPACE=no
	run "$init" start
	[ "$status" -eq 0 ]
	assert_serving
	pid=$(cat "$PIDFILE")
	run "$init" status
	[ "$status" -eq 0 ]
	[[ $output == *"is running"* ]]
	# a second start leaves the first broker alone
	run "$init" start
	[ "$status" -eq 0 ]
	[ "$(cat "$PIDFILE")" = "$pid" ]
	run "$init" reload
	[ "$status" -eq 0 ]
	wait_for_line "$S/service.log" "sharebrokerd\[$pid\]: SIGHUP: .* read again"
	run "$init" restart
	[ "$status" -eq 0 ]
	wait_gone "$pid"
	assert_serving
	[ "$(cat "$PIDFILE")" != "$pid" ]
	run "$init" stop
	[ "$status" -eq 0 ]
	assert_stopped
	run "$init" status
	[ "$status" -eq 3 ]
}

@test "LSB init script with PRIVATE_NAMESPACE=yes: the broker gets a namespace of its own" {
	[ -r /lib/lsb/init-functions ] || skip "no /lib/lsb/init-functions"
	local init=$DIST/libshare.init pid
	defaults PRIVATE_NAMESPACE=yes
	run "$init" start
	[ "$status" -eq 0 ]
	assert_serving
	pid=$(cat "$PIDFILE")
	[ "$(stat -L -c %i "/proc/$pid/ns/mnt")" != "$(stat -L -c %i /proc/self/ns/mnt)" ]
	run "$init" status
	[ "$status" -eq 0 ]
	run "$init" stop
	[ "$status" -eq 0 ]
	assert_stopped
}

# Whether pid $1 has ended (a zombie has), waiting up to 5 seconds.
ended() {
	local i st
	for ((i = 0; i < 100; i++)); do
		read -r st <"/proc/$1/stat" 2>/dev/null || return 0
		[[ ${st##*) } == Z* ]] && return 0
		sleep 0.05
	done
	return 1
}

# A covered mount (LOW under TOP on $S/m) made through the service's broker,
# then SCRIPT restart: the new broker adopted the holder's mounts and ended
# it; SCRIPT stop: no broker follows, the holder ends too (issue 26 item
# 4), every mount stays.
holder_across() {
	local dir=${PIDFILE%/*} old new
	mkdir "$S/m"
	env LD_PRELOAD="$SHIM" mount -t tmpfs LOW "$S/m"
	env LD_PRELOAD="$SHIM" mount -t tmpfs TOP "$S/m"
	read -r old _ <"$dir/holder.pid"
	run "$1" restart
	[ "$status" -eq 0 ]
	assert_serving
	ended "$old"
	read -r new _ <"$dir/holder.pid"
	[ "$new" != "$old" ] && [ "$(cat "/proc/$new/comm")" = sharebrokerhold ]
	run "$1" stop
	[ "$status" -eq 0 ]
	assert_stopped
	ended "$new"
	[ ! -e "$dir/holder.pid" ]
	[ "$(findmnt -n -o SOURCE "$S/m" | xargs)" = "LOW TOP" ]
}

@test "LSB init script: a restart leaves covered mounts to the next broker, a stop ends the holder" {
	[ -r /lib/lsb/init-functions ] || skip "no /lib/lsb/init-functions"
	defaults PRIVATE_NAMESPACE=no
	run "$DIST/libshare.init" start
	[ "$status" -eq 0 ]
	holder_across "$DIST/libshare.init"
}

# OpenRC keeps its service states in /run/openrc: a fresh one of this
# namespace's own, as if OpenRC had booted it.
openrc_booted() {
	mkdir -p /run/openrc
	mount -t tmpfs openrc /run/openrc
	(cd /run/openrc && mkdir daemons exclusive failed hotplugged inactive \
		options scheduled started starting stopping tmp wasinactive &&
		touch softlevel)
}

@test "OpenRC script: start, status, reload, restart, stop" {
	command -v openrc-run >/dev/null ||
		skip "openrc is not installed (apt-get install openrc)"
	openrc_booted
	local rc=$DIST/libshare.openrc pid
	run "$rc" start
	echo "$output"
	[ "$status" -eq 0 ]
	assert_serving
	pid=$(cat "$PIDFILE")
	run "$rc" status
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"status: started"* ]]
	run "$rc" reload
	[ "$status" -eq 0 ]
	wait_for_line "$S/service.log" "sharebrokerd\[$pid\]: SIGHUP: .* read again"
	run "$rc" restart
	[ "$status" -eq 0 ]
	wait_gone "$pid"
	assert_serving
	run "$rc" stop
	[ "$status" -eq 0 ]
	assert_stopped
	run "$rc" status
	[ "$status" -eq 3 ]
	umount -l /run/openrc
}

@test "OpenRC script: a restart leaves covered mounts to the next broker, a stop ends the holder" {
	command -v openrc-run >/dev/null ||
		skip "openrc is not installed (apt-get install openrc)"
	openrc_booted
	# PRIVATE_NAMESPACE=auto: every mount here is private, so no
	run "$DIST/libshare.openrc" start
	[ "$status" -eq 0 ]
	holder_across "$DIST/libshare.openrc"
	umount -l /run/openrc
}

@test "systemd unit: the broker in a namespace of its own; jails enter it through libshare-enter, and one outside is refused, saying why" {
	local unit=$DIST/libshare.service pid start reload
	if command -v systemd-analyze >/dev/null; then
		run systemd-analyze verify --man=no "$unit"
		echo "$output"
		[ "$status" -eq 0 ]
	fi
	[ "$(sed -n 's/^PIDFile=//p' "$unit")" = "$PIDFILE" ]
	grep -qx 'Type=forking' "$unit"
	start=$(sed -n 's/^ExecStart=//p' "$unit")
	# shellcheck disable=SC2086 # a command line, as systemd splits it
	$start
	assert_serving
	pid=$(cat "$PIDFILE")
	# the namespace is the broker's own, and every mount in it is private
	[ "$(stat -L -c %i "/proc/$pid/ns/mnt")" != "$(stat -L -c %i /proc/self/ns/mnt)" ]
	! grep -Eq ' (shared|master):' "/proc/$pid/mountinfo"
	# a jail started outside that namespace: refused, and the log says why
	mkdir "$S/m"
	run env LD_PRELOAD="$SHIM" mount -t tmpfs outside "$S/m"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ $output == *"Invalid cross-device link"* ]]
	wait_for_line "$S/service.log" "pid [0-9]+ is in mount namespace mnt:\[[0-9]+\], not the broker's .*libshare-enter"
	wait_for_line "$S/service.log" "refused mount from pid [0-9]+ \(root /\): EXDEV"
	# through libshare-enter: done, in the broker's namespace only
	run "$DIST/libshare-enter" env LD_PRELOAD="$SHIM" mount -t tmpfs inside "$S/m"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(nsenter --mount="/proc/$pid/ns/mnt" findmnt -n -o SOURCE "$S/m")" = inside ]
	! mountpoint -q "$S/m"
	run "$DIST/libshare-enter" "$SHARECTL" tree
	[[ $output == *"$S/m"*inside* ]]
	# ExecReload, then systemd's default stop: SIGTERM to the main pid
	reload=$(sed -n 's/^ExecReload=//p' "$unit")
	# shellcheck disable=SC2086
	${reload//\$MAINPID/$pid}
	wait_for_line "$S/service.log" "sharebrokerd\[$pid\]: SIGHUP"
	kill -TERM "$pid"
	wait_gone "$pid"
	assert_stopped
}
