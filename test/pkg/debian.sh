#!/bin/bash
# test/pkg/debian.sh: the Debian packages, built, linted and installed as an
# administrator would (issue 26 item 1).  Not part of make check: it
# installs packages on the machine (a minute or two), as root.
#
#   test/pkg/debian.sh [--build] [DEBDIR]
#
# --build: first dpkg-buildpackage -us -uc -b in a clean clone of the
# source tree's HEAD (under DEBDIR, default a temporary directory), then
# lintian on the result: 0 errors, 0 warnings.  Then, with the packages of
# DEBDIR (default ..), in a mount namespace of its own (the broker it
# starts sees only its mounts, and its mounts stay out of the host's):
#
#   1. apt-get install ./libshare*.deb ./libpam-libshare*.deb: the service
#      runs, started by the package (systemd, invoke-rc.d) or else as an
#      admin would (systemctl where systemd is PID 1, otherwise the init
#      script); the PAM module is in /lib/<triplet>/security, and
#      pam-auth-update --enable libshare puts it in common-session;
#   2. mkjail JAIL, sharectl apply of a jailtab that makes a host directory
#      shared and the jail's /srv a slave of it: a mount made on the host
#      afterwards shows in the jail, and sharectl tree --root JAIL shows
#      /srv as a slave;
#   2b. with that jail, a covered mount and a namespace live, the next
#      release (the packages rebuilt as version V+next1) installed over
#      this one, a real upgrade: the broker is
#      restarted, and its tree, namespaces and the namespace's tree are
#      the same after, propagation going on (issue 26 item 3);
#   3. RFC Example 1 (the installed jail-examples/example1.sh) passes;
#   4. apt-get remove: no PAM stack names the module, no process of the
#      package is left, no mount that was
#      not there before the install, and no new file but the conffiles and
#      the state directory /run/libshare;
#   5. apt-get purge: no new file at all (one a package still installed
#      owns excepted: another install going on meanwhile).
# Each check prints "ok N WHAT" or "not ok N WHAT"; exit 1 if one failed.
set -u

DEBDIR=
BUILD=no
for a in "$@"; do
	case $a in
	--build) BUILD=yes ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) DEBDIR=$a ;;
	esac
done
SRC=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "debian.sh: run as root" >&2; exit 2; }

N=0
FAILED=0
check() {     # check WHAT CMD...: runs CMD, prints the TAP line
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

build() {
	DEBDIR=${DEBDIR:-$(mktemp -d /tmp/libshare-deb.XXXXXX)}
	mkdir -p "$DEBDIR"
	DEBDIR=$(cd "$DEBDIR" && pwd)
	rm -rf "$DEBDIR/libshare"
	git clone -q "$SRC" "$DEBDIR/libshare" || exit 1
	echo "# dpkg-buildpackage in $DEBDIR/libshare (log: $DEBDIR/build.log)"
	(cd "$DEBDIR/libshare" && dpkg-buildpackage -us -uc -b) \
		>"$DEBDIR/build.log" 2>&1
	check "dpkg-buildpackage -us -uc -b on a clean clone" [ $? -eq 0 ]
	lintian --pedantic -I "$DEBDIR"/libshare_*.changes >"$DEBDIR/lintian.log" 2>&1
	LINTIAN_RC=$?
	sed 's/^/# lintian: /' "$DEBDIR/lintian.log"
	# lintian ran (127: not installed; 2: it could not read the changes)
	check "lintian: no error, no warning" \
		eval '[ "$LINTIAN_RC" -le 1 ] && ! grep -q "^[EW]: " "$DEBDIR/lintian.log"'
}

if [ "$BUILD" = yes ]; then
	build
fi
DEBDIR=$(cd "${DEBDIR:-..}" && pwd)
ls "$DEBDIR"/libshare_*.deb "$DEBDIR"/libshare-shim_*.deb >/dev/null ||
	{ echo "debian.sh: no packages in $DEBDIR" >&2; exit 2; }
if dpkg-query -W -f='${Status}\n' libshare libshare-shim libpam-libshare \
	2>/dev/null |
   grep -q installed; then
	echo "debian.sh: libshare is installed already: not touching it" >&2
	exit 2
fi
exec unshare -m --propagation private -- bash "$SRC/test/pkg/installed.sh" \
	"$DEBDIR" "$N" "$FAILED"
