#!/usr/bin/env bats
# pam_libshare (issue 26 item 2): a login's own mount namespace, through
# a real PAM stack (pamtester, su -l) in a jail whose programs load the
# shim, with the test's own broker (test/admin/pam.bash).

load pam

setup() {
	pam_setup
}

teardown() {
	pam_teardown
}

@test "pamtester: two sessions, each its own /tmp and home, both see a later mount of the shared subtree" {
	script inside 'u=$PAM_USER
		echo "$u-tmp" >/tmp/mine
		touch /out/$u.ready
		i=0
		while [ ! -e /out/go ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
		{ echo "tmp: $(cat /tmp/mine)"; echo "home: $(cat /home/$u/note)"
		  echo "disk: $(cat /data/disk/label 2>&1)"
		  readlink /proc/self/ns/mnt; } >/out/$u.seen 2>&1'
	local a b
	background session lsalice
	a=$BG
	background session lsbob
	b=$BG
	wait_file "$J/out/lsalice.ready"
	wait_file "$J/out/lsbob.ready"
	[ "$(ns_count)" -eq 2 ]
	shimmed mount -t tmpfs disk "$J/data/disk"
	echo "mounted later" >"$J/data/disk/label"
	touch "$J/out/go"
	wait "$a" "$b"
	cat "$J/out/lsalice.seen" "$J/out/lsbob.seen"
	[ "$(sed -n 1,3p "$J/out/lsalice.seen")" = "tmp: lsalice-tmp
home: lsalice's home
disk: mounted later" ]
	[ "$(sed -n 1,3p "$J/out/lsbob.seen")" = "tmp: lsbob-tmp
home: lsbob's home
disk: mounted later" ]
	# two namespaces, neither the jail's
	[[ $(sed -n 4p "$J/out/lsalice.seen") == "mnt:["* ]]
	[ "$(sed -n 4p "$J/out/lsalice.seen")" != "$(sed -n 4p "$J/out/lsbob.seen")" ]
	[ "$(sed -n 4p "$J/out/lsalice.seen")" != "$(in_jail readlink /proc/self/ns/mnt)" ]
	# nothing of theirs reached the system
	[ ! -e "$J/tmp/mine" ]
	[ "$(cat "$J/home/lsalice/note" 2>&1)" != "lsalice's home" ]
	ns_all_gone
	shimmed umount "$J/data/disk"
}

@test "su -l in the jail: the user's shell runs as the user, in the session's namespace, which ends with it" {
	local jailns
	jailns=$(in_jail readlink /proc/self/ns/mnt)
	run in_jail su -l -w LIBSHARE_SOCKET lsalice -c 'id -u; pwd
		readlink /proc/self/ns/mnt; cat /home/lsalice/note
		echo mine >/tmp/f && cat /tmp/f; findmnt -n -o PROPAGATION /data'
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 4001 ]
	[ "${lines[1]}" = /home/lsalice ]
	[[ ${lines[2]} == "mnt:["* && ${lines[2]} != "$jailns" ]]
	[ "${lines[3]}" = "lsalice's home" ]
	[ "${lines[4]}" = mine ]
	[ "${lines[5]}" = "private,slave" ]
	[ ! -e "$J/tmp/f" ]
	ns_all_gone
}

@test "closing the session ends its namespace, while the process that opened it lives on" {
	local pid
	script inside 'touch /out/opened'
	script closed 'touch /out/closing
		i=0
		while [ ! -e /out/checked ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done'
	background session lsalice
	pid=$BG
	wait_file "$J/out/opened"
	wait_file "$J/out/closing"
	ns_all_gone
	[ "$(ns_count)" -eq 0 ]
	kill -0 "$pid"              # pamtester has not ended
	touch "$J/out/checked"
	wait "$pid"
}

@test "a shared line, for a group: lsbob's mount there reaches the system and lsalice's slave; lsalice's reach nobody" {
	local a b
	script inside 'u=$PAM_USER
		if [ "$u" = lsbob ]; then
			mount -t tmpfs bobs /exch/x && echo bob >/exch/x/who
		else
			mount -t tmpfs alices /mnt && mount -t tmpfs alices /data/disk
		fi
		touch /out/$u.ready
		i=0
		while [ ! -e /out/go ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
		cat /exch/x/who >/out/$u.seen 2>&1
		findmnt -n -o PROPAGATION /exch >>/out/$u.seen'
	background session lsbob
	b=$BG
	wait_file "$J/out/lsbob.ready"
	background session lsalice
	a=$BG
	wait_file "$J/out/lsalice.ready"
	[ "$(cat "$J/exch/x/who")" = bob ]      # bob's reached the system
	! mountpoint -q "$J/mnt"                # alice's did not
	! mountpoint -q "$J/data/disk"
	touch "$J/out/go"
	wait "$a" "$b"
	cat "$J/out/lsalice.seen" "$J/out/lsbob.seen"
	[ "$(cat "$J/out/lsalice.seen")" = "bob
private,slave" ]
	[ "$(cat "$J/out/lsbob.seen")" = "bob
shared" ]
	ns_all_gone
	shimmed umount "$J/exch/x"
}

@test "broker down: broker_down=closed refuses the session, broker_down=open lets it go on without a namespace; each says so" {
	script inside 'cat /home/$PAM_USER/note >/out/seen 2>&1; true'
	broker_stop
	run session lsalice
	[ "$status" -ne 0 ]
	logged "no libshare broker answers \(is sharebrokerd running\?\): session refused \(broker_down=closed\)"
	service_write broker_down=open
	run session lsalice
	[ "$status" -eq 0 ]
	logged "no libshare broker answers .*: the session goes on without a namespace of its own \(broker_down=open\)"
	[[ $(cat "$J/out/seen") == *"No such file"* ]]    # no instance
	broker_start
}

@test "a bad option refuses the session, with a log line, and makes nothing" {
	local opt
	for opt in bogus config=relative/path broker_down=maybe; do
		service_write "$opt"
		run session lsalice
		[ "$status" -ne 0 ]
		logged "unknown or malformed option '$opt': session refused"
	done
	[ "$(ns_count)" -eq 0 ]
}

@test "a configuration root does not alone control, or with a bad line, refuses the session" {
	local f=$J/etc/libshare/namespace.conf i
	chown 4001 "$f"
	run session lsalice
	[ "$status" -ne 0 ]
	logged "/etc/libshare/namespace.conf is not a file root alone may write: refused"
	chown 0 "$f"
	chmod 0666 "$f"
	run session lsalice
	[ "$status" -ne 0 ]
	for ((i = 0; i < 50; i++)); do
		(($(grep -c "is not a file root alone may write" "$LOG") == 2)) && break
		sleep 0.1
	done
	[ "$(grep -c "namespace.conf is not a file root alone may write: refused" "$LOG")" -eq 2 ]
	conf_write '/ - slave' 'tmp - tmpfs'
	run session lsalice
	[ "$status" -ne 0 ]
	logged "/etc/libshare/namespace.conf:2: DIRECTORY must be an absolute path without . or .."
	conf_write '/tmp /x slave'
	run session lsalice
	[ "$status" -ne 0 ]
	logged "/etc/libshare/namespace.conf:1: a propagation line's INSTANCE must be -"
	[ "$(ns_count)" -eq 0 ]
}

@test "an unknown user: refused, with a log line" {
	run session nosuchuser
	[ "$status" -ne 0 ]
	logged "unknown user 'nosuchuser': session refused"
	[ "$(ns_count)" -eq 0 ]
}

@test "a user no line names gets no namespace, and the session goes on" {
	conf_write '/tmp - tmpfs root'
	script inside 'readlink /proc/self/ns/mnt >/out/ns'
	run session root
	[ "$status" -eq 0 ]
	[ "$(cat "$J/out/ns")" = "$(in_jail readlink /proc/self/ns/mnt)" ]
	run session lsalice
	[ "$status" -eq 0 ]
	[ "$(cat "$J/out/ns")" != "$(in_jail readlink /proc/self/ns/mnt)" ]
}

@test "an unprivileged user gets no namespace: not for another user, not through the environment, not through a symlink" {
	# a session opened without privilege: the broker refuses the copy
	run in_jail setpriv --reuid 4001 --regid 4001 --clear-groups \
		pamtester pamls lsbob open_session close_session
	[ "$status" -ne 0 ]
	logged "unshare\(CLONE_NEWNS\) for lsbob: Operation not permitted \(the session must be opened by root\)"
	[ "$(ns_count)" -eq 0 ]
	# $USER and $HOME come from the passwd file, not the environment
	conf_write '$HOME /srv/home/ user'
	script inside 'cat /home/lsalice/note /home/lsbob/note >/out/seen 2>&1'
	run in_jail env USER=lsbob LOGNAME=lsbob HOME=/home/lsbob \
		pamtester pamls lsalice open_session close_session
	[ "$status" -eq 0 ]
	[[ $(cat "$J/out/seen") == "lsalice's home"*"No such file"* ]]
	# a line under a home: the user could swap it for a symlink to /etc
	conf_write '/home/$USER/priv - tmpfs'
	ln -s /etc "$J/home/lsalice/priv"
	run session lsalice
	[ "$status" -ne 0 ]
	logged "/home/lsalice/priv: lsalice is not root's alone, so a user could swap what the path leads to: refused"
	[ "$(ns_count)" -eq 0 ]
}

@test "a process without the shim: the module loads it for its own calls" {
	rm "$J/etc/ld.so.preload"
	service_write shim=/libshare/libshare.so
	script inside 'LD_PRELOAD=/libshare/libshare.so readlink /proc/self/ns/mnt >/out/seen
		cat /home/lsalice/note >>/out/seen'
	run session lsalice
	[ "$status" -eq 0 ]
	[[ $(sed -n 1p "$J/out/seen") == "mnt:["* ]]
	[ "$(sed -n 1p "$J/out/seen")" != \
	  "$(in_jail env LD_PRELOAD=/libshare/libshare.so readlink /proc/self/ns/mnt)" ]
	[ "$(sed -n 2p "$J/out/seen")" = "lsalice's home" ]
	ns_all_gone
}
