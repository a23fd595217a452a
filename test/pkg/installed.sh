#!/bin/bash
# test/pkg/installed.sh DEBDIR N FAILED: debian.sh's steps 1 to 5, run by it
# in a mount namespace of its own (see there); N and FAILED carry its count.
set -u
DEBDIR=$1
N=$2
FAILED=$3
SOCK=@libshare                # the installed default (libshare.conf)
export LIBSHARE_SOCKET=$SOCK
STATE=/run/libshare
TRIPLET=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null ||
	gcc -print-multiarch)
SO=/usr/lib/$TRIPLET/libshare/libshare.so
T=$(mktemp -d /tmp/libshare-pkg.XXXXXX)
INSTALLED=no

check() {
	local what=$1
	shift
	N=$((N + 1))
	if "$@"; then
		echo "ok $N $what"
	else
		echo "not ok $N $what"
		FAILED=1
	fi
}

# The files a package could leave: everything under these, apt's and
# dpkg's own records and caches aside.
files() {
	find /etc /usr /lib /opt /srv /var /run/libshare -xdev \
		\( -path /var/lib/dpkg -o -path /var/lib/apt -o -path /var/cache \
		-o -path /var/log -o -path /var/tmp -o -path /var/lib/ucf \) \
		-prune -o -print 2>/dev/null | sort
}

# This namespace's mounts: mount point, source, type (ids change).
mounts() {
	awk '{ for (i = 7; $i != "-"; i++); print $5, $(i + 2), $(i + 1) }' \
		/proc/self/mountinfo | sort
}

# Processes running the package's programs (a holder runs the broker's).
package_procs() {
	local p exe
	for p in /proc/[0-9]*; do
		exe=$(readlink "$p/exe" 2>/dev/null) || continue
		case $exe in
		/usr/sbin/sharebrokerd*|/usr/bin/sharectl*) echo "${p#/proc/} $exe" ;;
		esac
	done
}

# New paths in $1 (after) not in $2 (before), minus the lines of $3.
added() {
	comm -13 "$2" "$1" | grep -vxFf "${3:-/dev/null}"
}

# A failed test's broker or holder, of this namespace alone, ends with it.
cleanup() {
	local pid
	[ "$INSTALLED" = yes ] &&
		apt-get purge -y libshare libshare-shim libpam-libshare \
			>/dev/null 2>&1
	package_procs | while read -r pid _; do
		[ "/proc/$pid/ns/mnt" -ef /proc/self/ns/mnt ] && kill -KILL "$pid"
	done
	umount "$POLICY" 2>/dev/null
	umount -R -l "$T" 2>/dev/null
	rmdir "$T" 2>/dev/null
}
trap cleanup EXIT

mount -t tmpfs pkgtest "$T"        # before the broker starts: imported
# A container's policy-rc.d forbids every service action (exit 101), so
# the package would neither start nor stop its service.  This namespace
# binds one that allows them, as on a host, so that the package's own
# invoke-rc.d calls are what this test runs; the host's stays as it is.
POLICY=/usr/sbin/policy-rc.d
if [ -x "$POLICY" ] && { "$POLICY" libshare start; [ $? -eq 101 ]; }; then
	echo "# $POLICY forbids service actions: allowed in this namespace"
	printf '#!/bin/sh\nexit 0\n' >"$T/policy-rc.d"
	chmod 755 "$T/policy-rc.d"
	mount --bind "$T/policy-rc.d" "$POLICY"
fi
mkdir -p "$T/srv" "$T/jail"
files >"$T.before"
mounts >"$T/mounts.before"
mv "$T.before" "$T/files.before"
package_procs >"$T/procs.before"

# The PAM module where Debian's PAM looks, its profile off until enabled;
# enabled, common-session names it (the installed namespace.conf names
# nobody, so logins meanwhile get no namespace).  The remove must take it
# out again: a stack naming a module that is gone fails every login.
pam_step() {
	check "the PAM module at /lib/$TRIPLET/security/pam_libshare.so" \
		[ -f "/lib/$TRIPLET/security/pam_libshare.so" ]
	check "its pam-auth-update profile is off until enabled" \
		eval '! grep -q pam_libshare /etc/pam.d/common-session'
	DEBIAN_FRONTEND=noninteractive pam-auth-update --enable libshare
	check "pam-auth-update --enable libshare: common-session names it" \
		grep -q "required.*pam_libshare.so" /etc/pam.d/common-session
}

# ---- 1. install -------------------------------------------------------
INSTALLED=yes
DEBIAN_FRONTEND=noninteractive apt-get install -y \
	"$DEBDIR"/libshare_*.deb "$DEBDIR"/libshare-shim_*.deb \
	"$DEBDIR"/libpam-libshare_*.deb >"$T/install.log" 2>&1
check "apt-get install ./libshare*.deb ./libpam-libshare*.deb" [ $? -eq 0 ]
sed -n 's/^\(invoke-rc.d\|.*libshare.*service\).*/# &/p' "$T/install.log"
check "the shim at /usr/lib/$TRIPLET/libshare/libshare.so" [ -f "$SO" ]
pam_step
if sharectl status >/dev/null 2>&1; then
	echo "# the package started the broker"
elif [ -d /run/systemd/system ]; then
	echo "# systemctl start libshare"
	systemctl start libshare
else
	echo "# systemd is not PID 1: /etc/init.d/libshare start"
	/etc/init.d/libshare start
fi
check "the service's broker answers" sharectl status
check "it is /usr/sbin/sharebrokerd, its pidfile in $STATE" \
	[ "$(readlink "/proc/$(cat $STATE/sharebrokerd.pid)/exe")" = \
	  /usr/sbin/sharebrokerd ]

# ---- 2. mkjail, sharectl apply ------------------------------------------
LD_PRELOAD=$SO mkjail "$T/jail" >"$T/mkjail.log" 2>&1
check "mkjail JAIL (through the running broker)" [ $? -eq 0 ]
check "the jail preloads the packaged shim" \
	cmp -s "$T/jail/libshare/libshare.so" "$SO"
mkdir -p "$T/jail/srv"
printf '%s %s none bind,shared 0 0\n' "$T/srv" "$T/srv" >"$T/host.tab"
printf '%s /srv none bind,slave 0 0\n' "$T/srv" >"$T/jail.tab"
check "sharectl apply: the host's directory shared" \
	sharectl apply "$T/host.tab"
check "sharectl apply --jail: the jail's /srv its slave" \
	sharectl apply --jail "$T/jail" "$T/jail.tab"
LD_PRELOAD=$SO mount -t tmpfs later "$T/srv" &&
	echo hello >"$T/srv/label"
check "a mount made on the host afterwards shows in the jail" \
	[ "$(cat "$T/jail/srv/label" 2>/dev/null)" = hello ]
check "sharectl tree --root JAIL: /srv a slave" eval \
	'sharectl tree --root "$T/jail" | grep -Eq "^/srv .*private,slave|^/srv .*slave"'

# ---- 2b. upgrade: the package again, its broker restarted -----------------
# What an administrator sees of the graph (the broker's own process count
# aside: the broker is one of them).
views() {
	sharectl tree
	sharectl ns | sed "/(the broker's own)/s/, [0-9]* processes.*//"
	sharectl tree --ns "$1"
}

# next_release OUT: the three packages of $DEBDIR as the next release
# would be, their version V made V+next1 (the libshare-shim dependency
# with it): unpacked and built again, so that dpkg sees a newer version.
next_release() {
	local out=$1 deb d v
	mkdir -p "$out" "$T/repack"
	for deb in "$DEBDIR"/libshare_*.deb "$DEBDIR"/libshare-shim_*.deb \
		"$DEBDIR"/libpam-libshare_*.deb; do
		d=$T/repack/$(basename "$deb" .deb)
		dpkg-deb -R "$deb" "$d" || return 1
		v=$(sed -n 's/^Version: //p' "$d/DEBIAN/control")
		sed -i "s/^Version: .*/Version: $v+next1/; s/(= $v)/(= $v+next1)/" \
			"$d/DEBIAN/control"
		dpkg-deb --root-owner-group -b "$d" "$out" >/dev/null || return 1
	done
}

# With the jail's slave, a covered mount and a namespace live, the next
# release is installed over this one (dpkg runs prerm upgrade, then
# postinst configure with the old version, which restarts the service):
# a new broker, and nothing lost.
upgrade_step() {
	local ns old was
	mkdir -p "$T/c2"
	LD_PRELOAD=$SO mount -t tmpfs low "$T/c2"
	LD_PRELOAD=$SO mount -t tmpfs top "$T/c2"
	LD_PRELOAD=$SO unshare -m --propagation unchanged sleep 600 &
	ns=$!
	sleep 1
	views "$ns" >"$T/views.before"
	check "a namespace lives through the upgrade: sharectl ns lists it" \
		[ "$(grep -c '^mnt:' "$T/views.before")" -ge 2 ]
	old=$(cat "$STATE/sharebrokerd.pid")
	was=$(dpkg-query -W -f='${Version}' libshare)
	check "the next release's packages, version $was+next1" \
		next_release "$T/next"
	DEBIAN_FRONTEND=noninteractive apt-get install -y "$T"/next/*.deb \
		>"$T/upgrade.log" 2>&1
	check "apt-get install ./next/*.deb: an upgrade from $was" [ $? -eq 0 ]
	check "libshare is now $was+next1" \
		[ "$(dpkg-query -W -f='${Version}' libshare)" = "$was+next1" ]
	check "the upgrade restarted the broker" eval \
		'sharectl status && [ "$(cat "$STATE/sharebrokerd.pid")" != "$old" ]'
	views "$ns" >"$T/views.after"
	sed 's/^/# before the upgrade: /' "$T/views.before"
	sed 's/^/# after the upgrade:  /' "$T/views.after"
	diff "$T/views.before" "$T/views.after" | sed 's/^/# /'
	check "every mount, jail and namespace as before the upgrade" \
		cmp -s "$T/views.before" "$T/views.after"
	LD_PRELOAD=$SO mount -t tmpfs again "$T/srv" &&
		echo again >"$T/srv/label2"
	check "propagation goes on into the jail" \
		[ "$(cat "$T/jail/srv/label2" 2>/dev/null)" = again ]
	LD_PRELOAD=$SO umount "$T/srv"
	kill "$ns"
	wait "$ns" 2>/dev/null
	check "the covered mount, held across the restart, unmounts in order" \
		eval 'LD_PRELOAD=$SO umount "$T/c2" && LD_PRELOAD=$SO umount "$T/c2"'
}
upgrade_step

# ---- 3. RFC Example 1 ----------------------------------------------------
/usr/share/libshare/jail-examples/example1.sh >"$T/example1.log" 2>&1
check "RFC Example 1 (jail-examples/example1.sh)" [ $? -eq 0 ]
tail -n 1 "$T/example1.log" | sed 's/^/# /'

# The jail's mounts go as they came, through the broker.
LD_PRELOAD=$SO umount "$T/srv"
LD_PRELOAD=$SO umount "$T/jail/srv"
LD_PRELOAD=$SO umount "$T/srv"
LD_PRELOAD=$SO mkjail --remove "$T/jail" >/dev/null 2>&1
check "the jail's mounts are gone" eval \
	'diff <(mounts) "$T/mounts.before" >/dev/null'

# ---- 4. remove -------------------------------------------------------------
# A covered mount at the removal: the broker's holder keeps it while the
# broker runs, and must not outlive the package.
mkdir "$T/c"
LD_PRELOAD=$SO mount -t tmpfs low "$T/c"
LD_PRELOAD=$SO mount -t tmpfs top "$T/c"
read -r HOLDER _ <"$STATE/holder.pid"
check "the broker's holder runs, named sharebrokerhold" \
	[ "$(cat "/proc/$HOLDER/comm" 2>/dev/null)" = sharebrokerhold ]
DEBIAN_FRONTEND=noninteractive apt-get remove -y libshare libshare-shim \
	libpam-libshare >"$T/remove.log" 2>&1
check "apt-get remove" [ $? -eq 0 ]
check "no PAM stack names pam_libshare any more" \
	eval '! grep -rq pam_libshare /etc/pam.d'
grep -i "stopping" "$T/remove.log" | sed 's/^/# /'
check "no process of the package is left, holder included" eval \
	'diff <(package_procs) "$T/procs.before"'
umount "$T/c" && umount "$T/c"      # the covered mount was ours
check "no mount is left" eval 'diff <(mounts) "$T/mounts.before"'
dpkg-query -W -f='${Conffiles}\n' libshare libpam-libshare |
	awk 'NF { print $1 }' >"$T/conffiles"
check "the conffiles are kept" [ -s "$T/conffiles" ]
files >"$T/files.removed"
added "$T/files.removed" "$T/files.before" "$T/conffiles" |
	while read -r f; do   # what is left: a conffile's directory, the state
		case $f in
		"$STATE"|"$STATE"/*) ;;
		# the service's registrations: update-rc.d and
		# deb-systemd-helper undo them at purge
		/etc/rc?.d/[SK][0-9][0-9]libshare|/etc/runlevels/*/libshare) ;;
		/etc/systemd/system/*/libshare.service) ;;
		/var/lib/systemd/deb-systemd-helper-enabled/*libshare.service*) ;;
		*) grep -q "^$f/" "$T/conffiles" || echo "$f" ;;
		esac
	done >"$T/left"
sed 's/^/# left: /' "$T/left"
check "no new file but the conffiles and $STATE" [ ! -s "$T/left" ]

# ---- 5. purge ----------------------------------------------------------------
DEBIAN_FRONTEND=noninteractive apt-get purge -y libshare libshare-shim \
	libpam-libshare >"$T/purge.log" 2>&1
check "apt-get purge" [ $? -eq 0 ]
INSTALLED=no
files >"$T/files.purged"
added "$T/files.purged" "$T/files.before" | while read -r f; do
	dpkg -S "$f" >/dev/null 2>&1 || echo "$f"
done >"$T/left"
sed 's/^/# left: /' "$T/left"
check "no new file is left" [ ! -s "$T/left" ]
echo "1..$N"
exit "$FAILED"
