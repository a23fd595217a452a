# Helpers of test/admin/pam.bats: pam_libshare through a real PAM stack,
# in a jail of the test's own (mkjail.sh, so every program in it loads
# the shim through its /etc/ld.so.preload), with the test's own broker
# (test/lib/broker.bash: a sandbox $S, the jail $J, the broker under the
# legacy simulation).
#
# The jail has everything the PAM stack reads: its /etc (users lsalice
# and lsbob, group lsstaff with lsbob in it, /etc/pam.d/pamls and su,
# the module's configuration) and /libshare (the shim, the module, the
# scripts pam_exec runs inside the session being opened), so that a
# process whose privileges are dropped reads nothing of the checkout.
# Its /dev/log is logcatch's: what the module told syslog lands in
# $LOG.

load "${BATS_TEST_DIRNAME}/../lib/broker"

PAMMOD=$(libshare_find pam/pam_libshare.so)
LOGCATCH=$(libshare_find test/admin/logcatch)
MKJAIL=$(cd "${BATS_TEST_DIRNAME}/../../jail-examples" && pwd)/mkjail.sh

pam_setup() {
	broker_setup
	if [ ! -e "$PAMMOD" ] || [ ! -x "$LOGCATCH" ]; then
		echo "not built: $PAMMOD or $LOGCATCH" >&2
		return 1
	fi
	LOG=$S/syslog
	shimmed "$MKJAIL" "$J" "$SHIM" >/dev/null
	# the jail's root is a mount, as a system's is (jail-examples/example4.sh)
	shimmed mount --rbind "$J" "$J"
	jail_users
	jail_dirs
	install -m 0644 "$PAMMOD" "$J/libshare/pam_libshare.so"
	mkdir -p "$J/etc/pam.d" "$J/etc/libshare"
	conf_write '/ - slave' '/exch - shared ~@lsstaff' '/tmp - tmpfs' \
		'/home/$USER /srv/home/ user'
	service_write ""
	script inside :
	script closed :
	background "$LOGCATCH" "$J/dev/log" "$LOG"
	wait_file "$J/dev/log"
	chmod 0666 "$J/dev/log"     # users log too, as to a real /dev/log
}

# The jail's own root mount (with what was mounted in it) goes first,
# through the broker: umount -R of the sandbox cannot name the /usr it
# covers.
pam_teardown() {
	ns_all_gone || true
	if broker_alive && mountpoint -q "$J"; then
		shimmed umount -l "$J"
	fi
	broker_teardown
}

jail_users() {
	cat >>"$J/etc/passwd" <<-EOF
	lsalice:x:4001:4001::/home/lsalice:/bin/sh
	lsbob:x:4002:4002::/home/lsbob:/bin/sh
	EOF
	printf '%s\n' lsalice:x:4001: lsbob:x:4002: lsstaff:x:4100:lsbob \
		>>"$J/etc/group"
}

# Homes (the users'), their instances under /srv/home (notes that say
# whose), /data and /exch: shared binds of the system.
jail_dirs() {
	local u id
	mkdir -p "$J/srv/home" "$J/data/disk" "$J/exch/x" "$J/out" "$J/mnt"
	chmod 1777 "$J/out"
	for u in lsalice:4001 lsbob:4002; do
		id=${u#*:} u=${u%:*}
		mkdir -p "$J/home/$u" "$J/srv/home/$u"
		echo "$u's home" >"$J/srv/home/$u/note"
		chown -R "$id:$id" "$J/home/$u" "$J/srv/home/$u"
	done
	for u in data exch; do
		shimmed mount --bind "$J/$u" "$J/$u"
		shimmed mount --make-shared "$J/$u"
	done
}

CONF_ARG=config=/etc/libshare/namespace.conf

# The module's configuration: one line per argument.
conf_write() {
	printf '%s\n' "$@" >"$J/etc/libshare/namespace.conf"
	chmod 0644 "$J/etc/libshare/namespace.conf"
}

# /etc/pam.d/pamls (for pamtester), su and su-l (su -l's), with the module's
# ARGS; pam_exec runs /libshare/inside in the session being opened and
# /libshare/closed after the module closed it, when they exist.
service_write() {
	local args=$1 f
	for f in pamls su su-l; do
		cat >"$J/etc/pam.d/$f" <<-EOF
		auth     sufficient pam_rootok.so
		auth     required   pam_permit.so
		account  required   pam_permit.so
		session  required   /libshare/pam_libshare.so $CONF_ARG $args
		session  required   pam_permit.so
		EOF
	done
	cat >>"$J/etc/pam.d/pamls" <<-EOF
	session  optional   pam_exec.so type=open_session quiet /libshare/inside
	session  optional   pam_exec.so type=close_session quiet /libshare/closed
	EOF
}

# script NAME BODY: /libshare/NAME, a sh script that reaches the broker
# (pam_exec hands on no environment of the process's own).
script() {
	printf '#!/bin/sh\nexport LIBSHARE_SOCKET=%s\n%s\n' \
		"$LIBSHARE_SOCKET" "$2" >"$J/libshare/$1"
	chmod 0755 "$J/libshare/$1"
}

# CMD in the jail, as root, the broker's socket in its environment.
in_jail() {
	legacy env LIBSHARE_SOCKET="$LIBSHARE_SOCKET" chroot "$J" "$@"
}

# pamtester's session for USER: opened, then closed.
session() {
	in_jail pamtester pamls "$1" open_session close_session
}

# The number of namespaces the broker has besides its own.
ns_count() {
	"$SHARECTL" ns | grep -c '^mnt:' | awk '{ print $1 - 1 }'
}

# The syslog holds a line of pam_libshare's matching the ERE.
logged() {
	wait_for_log "pam_libshare\\(pamls:session\\): $1"
}

wait_for_log() {
	local i
	for ((i = 0; i < 100; i++)); do
		grep -Eq -- "$1" "$LOG" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "no line /$1/ in the syslog:" >&2
	cat "$LOG" >&2 2>/dev/null
	return 1
}
