#!/usr/bin/env bats
# mkjail.sh builds a jail the system's programs run in, with the shim loaded
# into every one of them by the jail's /etc/ld.so.preload; it says why when
# it cannot, a second run changes no mount, and --remove undoes its mounts.

load helpers

setup() {
	require_built
	sandbox_setup
	J=$S/jail
}

teardown() {
	sandbox_teardown
}

@test "usage errors exit 2, failures exit 1 with the reason" {
	run "$MKJAIL"
	[ "$status" -eq 2 ]
	[[ $output == usage:* ]]
	run "$MKJAIL" --bogus "$J"
	[ "$status" -eq 2 ]
	run "$MKJAIL" "$J" "$LIBSHARE_SO" extra
	[ "$status" -eq 2 ]
	run "$MKJAIL" --no-shim "$J" "$LIBSHARE_SO"
	[ "$status" -eq 2 ]
	run "$MKJAIL" --remove
	[ "$status" -eq 2 ]
	run "$MKJAIL" "$J" /nonexistent/libshare.so
	[ "$status" -eq 1 ]
	[ "$output" = "mkjail.sh: /nonexistent/libshare.so: no such file" ]
	run "$MKJAIL" --remove "$S/nothing"
	[ "$status" -eq 1 ]
	[[ $output == *"no such directory"* ]]
	# a copy that nobody can read: the build tree need not be readable
	local pub
	pub=$(mktemp -d /tmp/mkjail-bats.XXXXXX)
	chmod 755 "$pub"
	cp "$MKJAIL" "$pub/mkjail.sh"
	run setpriv --reuid 65534 --regid 65534 --clear-groups \
		"$pub/mkjail.sh" "$J"
	rm -rf "$pub"
	[ "$status" -eq 1 ]
	[ "$output" = "mkjail.sh: must be run as root" ]
	[ -z "$(mounts_under "$J")" ]
}

@test "the jail: /usr read-only, the host's top links, /etc, /dev/null, /tmp, /run, the shim preloaded" {
	"$MKJAIL" "$J" "$LIBSHARE_SO"
	[ "$(mounts_under "$J")" = "$J/usr" ]
	run touch "$J/usr/mkjail-test"
	[ "$status" -ne 0 ]
	[[ $output == *"Read-only file system"* ]]
	local t
	for t in bin sbin lib lib32 lib64 libx32; do
		if [ -L "/$t" ]; then
			[ "$(readlink "$J/$t")" = "$(readlink "/$t")" ]
		fi
	done
	[ -c "$J/dev/null" ]
	[ "$(stat -c %a "$J/tmp")" = 1777 ]
	[ -d "$J/run" ]
	grep -q '^root:x:0:0:' "$J/etc/passwd"
	[ "$(cat "$J/etc/ld.so.preload")" = /libshare/libshare.so ]
	cmp "$LIBSHARE_SO" "$J/libshare/libshare.so"
	# the system's programs run in it, as root and as nobody
	run chroot "$J" /bin/sh -c 'echo hello >/dev/null && id -un'
	[ "$status" -eq 0 ]
	[ "$output" = root ]
	run chroot --userspec=65534:65534 "$J" id -un
	[ "$output" = nobody ]
}

@test "every program of the jail loads the shim: with no broker, mount(2) fails with ENOSYS and nothing is mounted" {
	"$MKJAIL" "$J" "$LIBSHARE_SO"
	mkdir "$J/mnt"
	run env LIBSHARE_SOCKET=@libshare-nobody-here-$$ chroot "$J" \
		mount -t tmpfs x /mnt
	[ "$status" -eq 32 ]
	[[ $output == *"Function not implemented"* ]]
	[ "$(mounts_under "$J")" = "$J/usr" ]
}

@test "--no-shim: the same jail without the shim, where the kernel answers" {
	"$MKJAIL" --no-shim "$J"
	[ ! -e "$J/etc/ld.so.preload" ]
	[ ! -e "$J/libshare" ]
	mkdir "$J/mnt"
	chroot "$J" mount -t tmpfs x /mnt
	[ "$(mounts_under "$J/mnt")" = "$J/mnt" ]
	chroot "$J" umount /mnt
}

@test "a second run mounts nothing more and refreshes the shim; --remove unmounts what it mounted" {
	"$MKJAIL" "$J" "$LIBSHARE_SO"
	echo stale >"$J/libshare/libshare.so"
	"$MKJAIL" "$J" "$LIBSHARE_SO"
	[ "$(mounts_under "$J")" = "$J/usr" ]
	cmp "$LIBSHARE_SO" "$J/libshare/libshare.so"
	"$MKJAIL" --remove "$J"
	[ -z "$(mounts_under "$J")" ]
	[ -e "$J/etc/passwd" ]
	# and again: nothing left to do is no failure
	"$MKJAIL" --remove "$J"
}
