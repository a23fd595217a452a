#!/bin/sh
# login-ns USER CMD...: a PAM-free login for legacy systems (RFC Example 4).
# Runs CMD as USER in a mount namespace of USER's own: a copy of the
# system's tree made a slave of it, where USER's home (kept at
# /srv/home/USER) is bound at /home/USER and a tmpfs of USER's own is on
# /tmp.  The administrator's later mounts reach the session; the session's
# mounts reach nobody.  Run as root; needs util-linux (unshare, mount,
# setpriv) and, on a kernel without mount namespaces, libshare.so.
set -eu
if [ $# -lt 2 ]; then
	echo "usage: login-ns USER CMD..." >&2
	exit 2
fi
user=$1
shift
uid=$(id -u "$user") gid=$(id -g "$user")
exec unshare -m --propagation unchanged -- sh -eu -c '
	user=$1 uid=$2 gid=$3
	shift 3
	mount --make-rslave /
	mount --bind "/srv/home/$user" "/home/$user"
	mount -t tmpfs -o mode=1777 "tmp-$user" /tmp
	cd "/home/$user"
	exec setpriv --reuid "$uid" --regid "$gid" --clear-groups -- "$@"
' login-ns "$user" "$uid" "$gid" "$@"
