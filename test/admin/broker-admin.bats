#!/usr/bin/env bats
# sharebrokerd as a service runs it (issue 12 items 4 and 5): the pidfile
# and the lock on the state directory, the signals (SIGHUP reopens the log
# and reads the configuration again, SIGUSR1 writes the tree to the log,
# SIGTERM stops), and what the log says at the default level and with
# --debug, in a file and through syslog.

load admin

CALL=$(libshare_find test/shim/call)

setup() {
	admin_setup
	mkdir -p "$S/jail"
}
teardown() { admin_teardown; }

# The pid of CMD..., run with the shim: "PID" on the first line of output.
shimmed() {
	sh -c 'echo $$; exec env LD_PRELOAD="$0" "$@"' "$SHIM" "$@"
}

@test "the pidfile names the broker while it runs, and goes when SIGTERM stops it" {
	start_broker
	local pid
	pid=$(pid_of)
	run "$SHARECTL" status
	[[ $output == "sharebrokerd $pid: "* ]]
	[ "$(readlink "/proc/$pid/exe")" = "$SHAREBROKERD" ]
	kill -TERM "$pid"
	wait_gone "$pid"
	[ ! -e "$STATE/sharebrokerd.pid" ]
	grep -q "sharebrokerd\[$pid\]: started: socket $SOCK, state directory $STATE" "$S/broker.log"
	grep -q "sharebrokerd\[$pid\]: stopped: every mount stays where it is" "$S/broker.log"
}

@test "a second broker on the same state directory refuses, naming the first one's pid" {
	start_broker
	local pid
	pid=$(pid_of)
	run "$SHAREBROKERD" --socket "$SOCK-2" --state-dir "$STATE" --log "$S/2.log"
	[ "$status" -eq 1 ]
	[ "${lines[-1]}" = "sharebrokerd: $STATE: a broker (pid $pid) already uses this state directory" ]
	run "$SHARECTL" --socket "$SOCK-2" status
	[ "$status" -eq 1 ]
	[ "$(pid_of)" = "$pid" ]
	run "$SHARECTL" status
	[[ $output == "sharebrokerd $pid: "* ]]
	# in the foreground too, and another directory is no obstacle
	run "$SHAREBROKERD" --foreground --socket "$SOCK-2" --state-dir "$STATE"
	[ "$status" -eq 1 ]
	start_broker --socket "$SOCK-3" --state-dir "$S/state3"
	run "$SHARECTL" --socket "$SOCK-3" status
	[[ $output == "sharebrokerd $(pid_of "$S/state3/sharebrokerd.pid"): "* ]]
}

@test "SIGHUP reopens the log and reads the configuration again" {
	printf 'log = %s\n' "$S/a.log" >"$S/conf"
	"$SHAREBROKERD" --config "$S/conf" --socket "$SOCK" --state-dir "$STATE"
	local pid
	pid=$(pid_of)
	grep -q "started:" "$S/a.log"
	# logrotate moves the file away; debug is switched on
	mv "$S/a.log" "$S/a.log.1"
	printf 'log = %s\ndebug = yes\n' "$S/a.log" >"$S/conf"
	kill -HUP "$pid"
	wait_for_line "$S/a.log" "SIGHUP: $S/conf read again, log reopened"
	"$SHARECTL" status >/dev/null
	wait_for_line "$S/a.log" "status from pid [0-9]+ \(root /\): ok"
	! grep -q SIGHUP "$S/a.log.1"
	# the same broker, still serving
	run "$SHARECTL" status
	[[ $output == "sharebrokerd $pid: "* ]]
	# a broken file changes nothing
	echo 'max-mounts = none' >>"$S/conf"
	kill -HUP "$pid"
	wait_for_line "$S/a.log" "SIGHUP: $S/conf:3: max-mounts 'none': .*: the settings stay as they were"
	run "$SHARECTL" status
	[ "$status" -eq 0 ]
}

@test "SIGUSR1 writes the mount tree, with its propagation, to the log" {
	start_broker
	mkdir "$S/shared"
	LD_PRELOAD=$SHIM mount --bind "$S/shared" "$S/shared"
	LD_PRELOAD=$SHIM mount --make-shared "$S/shared"
	kill -USR1 "$(pid_of)"
	wait_for_line "$S/broker.log" "SIGUSR1: the mount tree, [0-9]+ mounts:"
	wait_for_line "$S/broker.log" "TARGET +SOURCE +FSROOT +PROPAGATION"
	wait_for_line "$S/broker.log" "$S/shared +admin-sandbox\[/shared\] +/shared +shared"
}

@test "at the default level: start, and every refused request with op, pid, root and errno" {
	start_broker
	mkdir "$S/not-a-mount"
	run shimmed "$CALL" umount2 "$S/not-a-mount" 0
	[ "${lines[1]}" = "umount2: EINVAL" ]
	wait_for_line "$S/broker.log" \
		"refused umount from pid ${lines[0]} \(root /\): EINVAL \(Invalid argument\)"
	# from a jail: the caller's root is the jail
	run shimmed "$CALL" chroot "$S/jail" umount2 /nothing 0
	wait_for_line "$S/broker.log" \
		"refused umount from pid ${lines[0]} \(root $S/jail\): ENOENT \(No such file or directory\)"
	# accepted requests are not logged without --debug
	"$SHARECTL" status >/dev/null
	! grep -q "status from pid" "$S/broker.log"
}

@test "--debug logs every request by its op's name" {
	start_broker --debug
	"$SHARECTL" status >/dev/null
	"$SHARECTL" jails >/dev/null
	LD_PRELOAD=$SHIM cat /proc/self/mountinfo >/dev/null
	wait_for_line "$S/broker.log" "status from pid [0-9]+ \(root /\): ok"
	wait_for_line "$S/broker.log" "jails from pid [0-9]+ \(root /\): ok"
	wait_for_line "$S/broker.log" "mounttable from pid [0-9]+ \(root /\): ok"
	! grep -q " op [0-9]" "$S/broker.log"
}

@test "--debug gives each request's time in microseconds, split by phase" {
	start_broker --debug
	mkdir "$S/jail/t"
	LD_PRELOAD=$SHIM "$CALL" mount none "$S/jail/t" tmpfs 0 "" umount2 "$S/jail/t" 0
	local us="[0-9]+ us: identify [0-9]+, resolve [0-9]+, plan [0-9]+, execute [0-9]+, persist [0-9]+$"
	wait_for_line "$S/broker.log" "\]: mount from pid [0-9]+ \(root /\): ok, $us"
	wait_for_line "$S/broker.log" "umount from pid [0-9]+ \(root /\): ok, $us"
	# a new filesystem is made by the kernel: that is execution
	grep -E "\]: mount from pid [0-9]+ \(root /\): ok, $us" "$S/broker.log" |
		grep -vqE "execute 0,"
	! mountpoint -q "$S/jail/t"
}

# syslog in a container: no syslog daemon runs here, so logcatch stands for
# one on a /dev/log of the broker's own (a bind mount over /dev in a mount
# namespace made for it); what is checked is what syslog(3) sent.
@test "detached without --log, the broker logs to syslog: LOG_DAEMON, ident sharebrokerd" {
	mkdir "$S/dev" "$S/run"
	touch "$S/dev/null"
	mount --bind /dev/null "$S/dev/null"
	background "$LOGCATCH" "$S/dev/log" "$S/syslog"
	for ((i = 0; i < 100; i++)); do [ -S "$S/dev/log" ] && break; sleep 0.05; done
	unshare -m --propagation private sh -c 'mount --bind "$1/dev" /dev &&
		exec "$2" --socket "$3" --state-dir "$4"' sh "$S" \
		"$SHAREBROKERD" "$SOCK" "$STATE"
	local pid
	pid=$(pid_of)
	# <30>: facility LOG_DAEMON (3 * 8) at LOG_INFO (6)
	wait_for_line "$S/syslog" "^<30>.*sharebrokerd\[$pid\]: started: socket $SOCK"
	# this shell is outside the broker's namespace: refused, and said why
	run "$SHARECTL" tree
	[ "$status" -eq 1 ]
	wait_for_line "$S/syslog" "^<28>.*sharebrokerd\[$pid\]: pid [0-9]+ is in mount namespace mnt:\[[0-9]+\], not the broker's mnt:\[[0-9]+\]: .*libshare-enter"
	wait_for_line "$S/syslog" "^<30>.*sharebrokerd\[$pid\]: refused tree from pid [0-9]+ \(root /\): EXDEV"
	kill -TERM "$pid"
	wait_gone "$pid"
	wait_for_line "$S/syslog" "^<30>.*sharebrokerd\[$pid\]: stopped"
}
